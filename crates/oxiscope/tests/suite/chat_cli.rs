//! `oxiscope chat` without a terminal: configuration, the one-shot mode
//! and its outputs, `oxiscope sessions` and `oxiscope config`.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::chat_env::{ChatEnv, bash, run, stderr, stdout, text};

#[test]
fn with_nothing_configured_it_explains_in_three_lines_and_fails() {
    let env = ChatEnv::new();
    let out = run(env.bare(&["chat"]));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 3, "{err}");
    assert!(err.contains("OPENAI_API_KEY"), "{err}");
    assert!(err.contains("config.toml"), "{err}");
    assert!(stdout(&out).is_empty());
    assert!(env.requests().is_empty());
}

#[test]
fn config_path_names_the_file_the_settings_come_from() {
    let env = ChatEnv::new();
    let out = run(env.bare(&["config", "path"]));
    assert!(out.status.success());
    let path = env.config().join("config.toml");
    assert_eq!(stdout(&out), format!("{}\n", path.display()));

    // Settings in the file are used; a flag overrides one of them.
    let base = format!("{}/v1", env.server.base_url());
    std::fs::write(
        &path,
        format!(
            "provider = \"openai\"\nmodel = \"file-model\"\napi_key = \"sk-file\"\nbase_url = \"{base}\"\n"
        ),
    )
    .unwrap();
    env.answer(&text("From the file."));
    env.answer(&text("From the flag."));
    let out = run(env.bare(&["chat", "-p", "hi"]));
    assert_eq!(stdout(&out), "From the file.\n", "{}", stderr(&out));
    let out = run(env.bare(&["chat", "--model", "flag-model", "-p", "hi"]));
    assert_eq!(stdout(&out), "From the flag.\n", "{}", stderr(&out));
    let requests = env.requests();
    assert_eq!(requests[0].body_json().unwrap()["model"], "file-model");
    assert_eq!(requests[1].body_json().unwrap()["model"], "flag-model");
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-file"));
}

#[test]
fn one_shot_prints_text_json_or_event_lines() {
    let env = ChatEnv::new();
    env.answer(&text("Four."));
    let out = run(env.chat(&["-p", "2+2?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Four.\n");

    env.answer(&text("Four again."));
    let out = run(env.chat(&["-p", "2+2?", "--output", "json"]));
    let msg: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(msg["role"], "assistant");
    assert_eq!(msg["finished_reason"], "completed");
    let texts: Vec<&Value> = msg["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .collect();
    assert_eq!(texts.len(), 1, "{msg}");
    assert_eq!(texts[0]["text"], "Four again.");
    assert_eq!(msg["usage"]["input_tokens"], 20);

    env.answer(&text("Evented."));
    let out = run(env.chat(&["-p", "2+2?", "--output", "events"]));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"REPLY_START"));
    assert_eq!(types.last(), Some(&"REPLY_END"));
    assert!(types.contains(&"TEXT_BLOCK_DELTA"), "{types:?}");
}

#[test]
fn one_shot_denies_what_would_ask_unless_a_mode_is_given() {
    let env = ChatEnv::new();
    env.answer(&bash("call_1", "echo hi > denied.txt"));
    env.answer(&text("I was not allowed."));
    let out = run(env.chat(&["-p", "make a file"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "I was not allowed.\n");
    assert!(!env.work().join("denied.txt").exists());

    env.answer(&bash("call_2", "echo hi > allowed.txt"));
    env.answer(&text("Done."));
    let out = run(env.chat(&["-p", "make a file", "--allow", "Bash(echo:*)"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(env.work().join("allowed.txt").exists());
}

#[test]
fn one_shot_never_does_what_the_console_would_ask_about() {
    let env = ChatEnv::new();
    std::fs::write(env.work().join("notes.txt"), "keep me").unwrap();
    env.answer(&bash("call_1", "rm notes.txt"));
    env.answer(&text("I could not remove it."));
    let out = run(env.chat(&["-p", "tidy up"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "I could not remove it.\n");
    assert!(env.work().join("notes.txt").exists());
    assert_eq!(
        stderr(&out),
        "denied: Bash(rm notes.txt) (the console would ask; -p denies that: allow it with \
         --allow 'Bash(rm:*)' or --mode)\n"
    );
    // The model was told the call was denied.
    let sent = serde_json::to_string(&env.messages(1)).unwrap();
    assert!(sent.contains("did not allow"), "{sent}");

    // dont-ask is AgentScope's: edits inside the working directory run.
    env.answer(&bash("call_2", "rm notes.txt"));
    env.answer(&text("Removed."));
    let out = run(env.chat(&["-p", "tidy up", "--mode", "dont-ask"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Removed.\n");
    assert_eq!(stderr(&out), "");
    assert!(!env.work().join("notes.txt").exists());
}

#[test]
fn a_model_error_is_reported_and_the_exit_code_says_so() {
    let env = ChatEnv::new();
    env.server
        .push(oxiscope_test_support::openai_invalid_api_key());
    let out = run(env.chat(&["-p", "hi"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("error:"), "{}", stderr(&out));
}

#[test]
fn sessions_are_listed_shown_and_removed() {
    let env = ChatEnv::new();
    env.answer(&text("Noted."));
    let out = run(env.chat(&["-p", "remember this", "--session", "notes"]));
    assert!(out.status.success(), "{}", stderr(&out));

    let list = stdout(&run(env.bare(&["sessions", "list"])));
    assert!(list.starts_with("notes\t2 messages\t"), "{list}");

    let show = run(env.bare(&["sessions", "show", "notes"]));
    assert_eq!(
        stdout(&show),
        "session notes: 2 messages, mode default\n\nuser: remember this\nOxiscope: Noted.\n"
    );
    let show = run(env.bare(&["sessions", "show", "notes", "--json"]));
    let state: Value = serde_json::from_str(&stdout(&show)).unwrap();
    assert_eq!(state["context"][0]["content"][0]["text"], "remember this");
    assert_eq!(state["permission_context"]["mode"], "default");

    assert_eq!(
        run(env.bare(&["sessions", "show", "nope"])).status.code(),
        Some(1)
    );
    assert!(run(env.bare(&["sessions", "rm", "notes"])).status.success());
    assert_eq!(stdout(&run(env.bare(&["sessions", "list"]))), "");
    assert_eq!(
        run(env.bare(&["sessions", "rm", "notes"])).status.code(),
        Some(1)
    );
    let bad = run(env.bare(&["sessions", "show", "../etc"]));
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("invalid session name"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn anthropic_and_ollama_are_reached_through_their_own_wires() {
    use oxiscope_test_support::anthropic::AnthropicStream;
    use oxiscope_test_support::ollama::OllamaStream;

    let env = ChatEnv::new();
    env.server.push(
        AnthropicStream::text_reply("claude-test", &["Hi from ", "Claude."], 12, 4).into_response(),
    );
    let mut cmd = env.bare(&["chat", "--model", "claude-test", "-p", "hi"]);
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", env.server.base_url());
    let out = run(cmd);
    assert_eq!(stdout(&out), "Hi from Claude.\n", "{}", stderr(&out));
    let request = &env.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));

    env.server.push(
        OllamaStream::new("qwen3")
            .content("Hi from Ollama.")
            .done(10, 3)
            .into_response(),
    );
    let mut cmd = env.bare(&["chat", "-p", "hi"]);
    cmd.env("OLLAMA_HOST", env.server.base_url());
    let out = run(cmd);
    assert_eq!(stdout(&out), "Hi from Ollama.\n", "{}", stderr(&out));
    let request = &env.requests()[1];
    assert_eq!(request.path, "/api/chat");
    assert_eq!(request.body_json().unwrap()["model"], "qwen3");
}

#[test]
fn a_one_shot_reply_that_must_ask_is_parked_in_its_session() {
    let env = ChatEnv::new();
    env.answer(&bash("call_1", "echo hi > later.txt"));
    let out = run(env.chat(&["-p", "make a file", "--mode", "default", "--session", "s1"]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("--session s1"), "{}", stderr(&out));
    let list = stdout(&run(env.bare(&["sessions", "list"])));
    assert!(list.starts_with("s1\t2 messages, waiting\t"), "{list}");
    // Another one-shot on the parked session refuses rather than guessing.
    let again = run(env.chat(&["-p", "and now?", "--session", "s1"]));
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("waiting for confirmation"),
        "{}",
        stderr(&again)
    );
    assert_eq!(env.requests().len(), 1);

    // Without a session the reply cannot stay parked: it is interrupted.
    env.answer(&bash("call_2", "echo hi > never.txt"));
    let out = run(env.chat(&["-p", "make a file", "--mode", "default", "--output", "json"]));
    assert_eq!(out.status.code(), Some(1));
    let msg: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(msg["finished_reason"], "interrupted");
    assert!(!env.work().join("never.txt").exists());
}

#[test]
fn the_console_reads_piped_lines_without_a_terminal() {
    use std::io::Write as _;
    use std::process::Stdio;

    let env = ChatEnv::new();
    env.answer(&text("Piped answer."));
    let mut child = env
        .chat(&["--verbosity", "quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"hello\nquit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Oxiscope: Piped answer.\n"), "{text}");
    assert!(!text.contains("tokens:"), "quiet shows no usage: {text}");
    assert_eq!(env.requests().len(), 1);
}

#[test]
fn logs_go_to_stderr_and_leave_the_one_shot_output_alone() {
    let env = ChatEnv::new();
    // By default only warnings would be logged: a clean run says nothing.
    env.answer(&text("Four."));
    let out = run(env.chat(&["-p", "2+2?"]));
    assert_eq!(stdout(&out), "Four.\n", "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    // RUST_LOG asks for more; stdout is unchanged, the logs are on stderr.
    env.answer(&text("Four."));
    let mut cmd = env.chat(&["-p", "2+2?", "--output", "json"]);
    cmd.env("RUST_LOG", "debug");
    let out = run(cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["role"], "assistant");
    assert!(stderr(&out).contains("DEBUG"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("sk-test"), "{}", stderr(&out));
}

#[test]
fn a_retried_model_call_is_one_short_line_on_stderr() {
    let env = ChatEnv::new();
    env.server
        .push(oxiscope_test_support::openai_rate_limited(0));
    env.answer(&text("After a retry."));
    let out = run(env.chat(&["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "After a retry.\n");
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].starts_with("warning: retrying in "), "{err}");
    assert!(lines[0].contains("(attempt 1 of "), "{err}");
    assert!(!lines[0].contains("WARN"), "{err}");
    assert!(!lines[0].contains("delay_ms"), "{err}");
}

#[test]
fn sessions_show_into_a_closed_pipe_exits_quietly() {
    use std::process::Stdio;

    let env = ChatEnv::new();
    let long = "many words ".repeat(20_000);
    env.answer(&text(&long));
    let out = run(env.chat(&["-p", "talk a lot", "--session", "long"]));
    assert!(out.status.success(), "{}", stderr(&out));
    for args in [
        &["sessions", "show", "long"][..],
        &["sessions", "show", "long", "--json"],
    ] {
        let mut child = env
            .bare(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader takes nothing and goes away, as `| head -0` would.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
}
