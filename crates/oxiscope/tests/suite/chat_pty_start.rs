//! The interactive console's start: the banner line, and `--cwd` seen
//! through the agent's own `pwd`.

use rexpect::session::{PtySession, spawn_command};

use super::chat_env::{ChatEnv, bash, text};

const TIMEOUT_MS: u64 = 30_000;

fn spawn(env: &ChatEnv, args: &[&str]) -> PtySession {
    spawn_command(env.chat(args), Some(TIMEOUT_MS)).unwrap()
}

/// `text` as rexpect reads it: one char per byte, so `·` arrives as `Â·`.
fn as_read(text: &str) -> String {
    text.bytes().map(char::from).collect()
}

fn leave(mut p: PtySession) {
    p.exp_string("user> ").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn the_console_starts_with_one_banner_line() {
    let env = ChatEnv::new();
    let mut p = spawn(&env, &["--model", "gpt-test"]);
    let work = env.work().canonicalize().unwrap();
    let base = format!("{}/v1", env.server.base_url());
    p.exp_string(&as_read(&format!(
        "oxiscope chat · openai gpt-test at {base} · in {} · mode default · \
         type exit or press Ctrl+D to leave\r\n",
        work.display()
    )))
    .unwrap();
    leave(p);
}

#[test]
fn with_cwd_the_agents_pwd_is_that_directory() {
    let env = ChatEnv::new();
    let other = env.root.path().join("project");
    std::fs::create_dir_all(&other).unwrap();
    let other = other.canonicalize().unwrap();
    env.answer(&bash("call_1", "pwd"));
    env.answer(&text("That is where I am."));
    let dir = other.to_str().unwrap();
    let mut p = spawn(&env, &["--cwd", dir, "--allow", "Bash(pwd)"]);
    p.exp_string(&as_read(&format!(" · in {dir} · "))).unwrap();
    p.exp_string("user> ").unwrap();
    p.send_line("where are you?").unwrap();
    let shown = p.exp_string("Oxiscope: That is where I am.").unwrap();
    assert!(shown.contains("Bash(pwd)"), "{shown}");
    assert!(shown.contains(dir), "{shown}");
    // Hints are for the model: not shown at the default verbosity.
    assert!(!shown.contains("system-reminder"), "{shown}");
    leave(p);
    let sent = serde_json::to_string(&env.messages(1)).unwrap();
    assert!(sent.contains(dir), "{sent}");
}
