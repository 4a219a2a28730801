//! The console's slash commands, in a pseudo-terminal against the fake
//! OpenAI server.

use oxiscope_test_support::OpenAiScript;
use rexpect::session::{PtySession, spawn_command};

use super::chat_env::{ChatEnv, bash, text};

const TIMEOUT_MS: u64 = 30_000;

fn spawn(env: &ChatEnv, args: &[&str]) -> PtySession {
    spawn_command(env.chat(args), Some(TIMEOUT_MS)).unwrap()
}

fn send(p: &mut PtySession, line: &str) {
    p.exp_string("user> ").unwrap();
    p.send_line(line).unwrap();
}

/// The summary a `/compact` asks the model for.
fn summary() -> OpenAiScript {
    let fields = [
        "task_overview",
        "current_state",
        "important_discoveries",
        "next_steps",
    ];
    let mut args = serde_json::Map::new();
    for field in fields {
        args.insert(field.into(), "-".into());
    }
    args.insert("context_to_preserve".into(), "the user said hello".into());
    OpenAiScript::new()
        .tool_call(0, "call_s", "GenerateStructuredOutput")
        .tool_args(0, serde_json::Value::Object(args).to_string())
        .finish("tool_calls")
        .usage(40, 8, 0)
}

#[test]
fn slash_commands_show_and_change_the_console_s_settings() {
    let env = ChatEnv::new();
    let mut p = spawn(&env, &["--session", "talk"]);
    send(&mut p, "/help");
    p.exp_string("/compact [FOCUS]").unwrap();
    p.exp_string("/session").unwrap();
    send(&mut p, "/nope");
    p.exp_string("unknown command /nope (/help lists them)")
        .unwrap();

    env.answer(&text("Hello."));
    send(&mut p, "hello");
    p.exp_string("Oxiscope: Hello.").unwrap();
    send(&mut p, "/cost");
    // (rexpect reads bytes as Latin-1: the expected text stays ASCII.)
    p.exp_string("1 model call ").unwrap();
    p.exp_string(" 20 tokens in (0 cached) ").unwrap();
    p.exp_string(" 5 out").unwrap();
    send(&mut p, "/session");
    p.exp_string("session talk ").unwrap();
    p.exp_string(" 2 messages ").unwrap();
    p.exp_string("talk.json").unwrap();

    // /mode switches the permission mode: accept-edits runs the touch.
    send(&mut p, "/mode");
    p.exp_string("mode default").unwrap();
    send(&mut p, "/mode accept-edits");
    p.exp_string("mode accept-edits").unwrap();
    env.answer(&bash("call_1", "touch made.txt"));
    env.answer(&text("Made."));
    send(&mut p, "make a file");
    let between = p.exp_string("Oxiscope: Made.").unwrap();
    assert!(!between.contains("[N] deny"), "asked: {between}");
    assert!(env.work().join("made.txt").exists());

    // /model switches the model; the conversation goes on.
    send(&mut p, "/model other-model");
    p.exp_string("model other-model of openai").unwrap();
    env.answer(&text("Still me."));
    send(&mut p, "who?");
    p.exp_string("Oxiscope: Still me.").unwrap();
    let last = env.requests().len() - 1;
    let body = env.requests()[last].body_json().unwrap();
    assert_eq!(body["model"], "other-model");
    assert!(body.to_string().contains("make a file"), "{body}");

    // /compact summarises the conversation.
    env.answer(&summary());
    send(&mut p, "/compact");
    p.exp_string("messages summarised: ").unwrap();

    // /clear starts again: the next request carries none of it.
    send(&mut p, "/clear");
    p.exp_string("(a new conversation").unwrap();
    env.answer(&text("Fresh."));
    send(&mut p, "anew");
    p.exp_string("Oxiscope: Fresh.").unwrap();
    let sent = serde_json::to_string(&env.messages(env.requests().len() - 1)).unwrap();
    assert!(!sent.contains("hello"), "{sent}");
    assert!(!sent.contains("the user said hello"), "{sent}");
    send(&mut p, "/exit");
    p.exp_eof().unwrap();
}
