//! What `oxiscope chat` says before and around a reply: `--cwd`, the
//! debug banner of `-p`, hints kept out of the answer, flag checks before
//! provider resolution, `oxiscope sessions` messages, exit codes.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::chat_env::{ChatEnv, bash, run, stderr, stdout, text};

#[test]
fn cwd_moves_the_agents_tools_to_that_directory() {
    let env = ChatEnv::new();
    let other = env.root.path().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    let other = other.canonicalize().unwrap();
    env.answer(&bash("call_1", "pwd > here.txt"));
    env.answer(&text("Written."));
    let dir = other.to_str().unwrap();
    let out = run(env.chat(&["-C", dir, "--mode", "bypass", "-p", "where are you?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Written.\n");
    // Without --verbosity debug, -p prints nothing but the answer.
    assert_eq!(stderr(&out), "");
    let written = std::fs::read_to_string(other.join("here.txt")).unwrap();
    assert_eq!(written.trim(), dir);
    assert!(!env.work().join("here.txt").exists());
}

#[test]
fn a_missing_cwd_is_a_clear_error_before_anything_else() {
    let env = ChatEnv::new();
    let out = run(env.bare(&["chat", "--cwd", "no/such/dir", "-p", "hi"]));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: --cwd no/such/dir: no such directory\n"
    );
    std::fs::write(env.work().join("file"), "").unwrap();
    let out = run(env.chat(&["--cwd", "file", "-p", "hi"]));
    assert_eq!(stderr(&out), "error: --cwd file: not a directory\n");
    assert!(env.requests().is_empty());
}

#[test]
fn one_shot_at_debug_shows_the_setup_and_tool_calls_on_stderr_only() {
    let env = ChatEnv::new();
    env.answer(&bash("call_1", "echo hi"));
    env.answer(&text("Said hi."));
    let out = run(env.chat(&[
        "-p",
        "say hi",
        "--allow",
        "Bash(echo:*)",
        "--verbosity",
        "debug",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Said hi.\n");
    let err = stderr(&out);
    let work = env.work().canonicalize().unwrap();
    let base = format!("{}/v1", env.server.base_url());
    let first = err.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "oxiscope chat · openai gpt-4.1-mini at {base} · in {} · mode default, \
             what it would ask is denied",
            work.display()
        )
    );
    assert!(err.contains("Bash(echo hi)"), "{err}");
    assert!(err.contains("[reply end: completed]"), "{err}");
}

#[test]
fn the_runtime_hint_stays_out_of_the_printed_answer() {
    let env = ChatEnv::new();
    env.answer(&text("Four."));
    let out = run(env.chat(&["-p", "2+2?"]));
    assert_eq!(stdout(&out), "Four.\n", "{}", stderr(&out));

    env.answer(&text("Four."));
    let out = run(env.chat(&["-p", "2+2?", "--output", "json"]));
    let msg: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let kinds: Vec<&str> = msg["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text"], "{msg}");
    assert!(!stdout(&out).contains("system-reminder"), "{msg}");

    // The model did get it, and the event stream stays raw.
    let sent = serde_json::to_string(&env.messages(1)).unwrap();
    assert!(sent.contains("<current-time>"), "{sent}");
    env.answer(&text("Four."));
    let out = run(env.chat(&["-p", "2+2?", "--output", "events"]));
    assert!(stdout(&out).contains("\"HINT_BLOCK\""), "{}", stdout(&out));
}

#[test]
fn a_bad_mode_is_reported_even_without_a_provider() {
    let env = ChatEnv::new();
    let out = run(env.bare(&["chat", "--mode", "yolo", "-p", "hi"]));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: unknown permission mode `yolo`"),
        "{err}"
    );
    assert!(!err.contains("OPENAI_API_KEY"), "{err}");
}

#[test]
fn sessions_say_when_there_are_none_and_what_was_removed() {
    let env = ChatEnv::new();
    let out = run(env.bare(&["sessions", "list"]));
    assert!(out.status.success());
    assert_eq!(stdout(&out), "");
    assert_eq!(stderr(&out), "no sessions\n");

    env.answer(&text("Noted."));
    let out = run(env.chat(&["-p", "remember", "--session", "notes"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(env.bare(&["sessions", "rm", "notes"]));
    assert!(out.status.success());
    assert_eq!(stdout(&out), "removed notes\n");
    let out = run(env.bare(&["sessions", "rm", "notes"]));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out), "no session named \"notes\"\n");
}

#[test]
fn piped_chat_exits_non_zero_after_a_failed_reply() {
    use std::io::Write as _;
    use std::process::Stdio;

    let env = ChatEnv::new();
    env.server
        .push(oxiscope_test_support::openai_invalid_api_key());
    env.answer(&text("Fine now."));
    let mut child = env
        .chat(&[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"hello\nagain\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("error:"), "{text}");
    // The console went on to the next line.
    assert!(text.contains("Oxiscope: Fine now."), "{text}");
}

#[test]
fn help_describes_the_tool() {
    let env = ChatEnv::new();
    let out = run(env.bare(&["--help"]));
    let help = stdout(&out);
    assert!(
        help.starts_with("Oxiscope: AI agents at the terminal and as a service"),
        "{help}"
    );
    assert!(!help.contains("facade library"), "{help}");
}
