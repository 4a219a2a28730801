mod chat_cli;
mod chat_env;
mod chat_pty;
mod permission_check;
mod render_snapshots;
