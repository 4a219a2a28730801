mod chat_cli;
mod chat_connect;
mod chat_env;
mod chat_goal;
mod chat_mcp;
#[cfg(unix)]
mod chat_mcp_pty;
mod chat_providers;
#[cfg(unix)]
mod chat_pty;
#[cfg(unix)]
mod chat_pty_slash;
#[cfg(unix)]
mod chat_pty_start;
mod chat_start;
mod completions_cli;
mod config_cli;
mod eval;
mod eval_cli;
mod permission_check;
mod render_snapshots;
mod replay_cli;
// The UI tests' WebDriver client, shared with the server's tests.
#[allow(dead_code)]
#[path = "../../../server/tests/suite/webdriver.rs"]
mod webdriver;
