mod chat_cli;
mod chat_env;
#[cfg(unix)]
mod chat_pty;
mod permission_check;
mod render_snapshots;
