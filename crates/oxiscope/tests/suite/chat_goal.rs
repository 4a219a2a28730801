//! `oxiscope chat --goal-verifier`: the console drives a goal pipeline.

use std::io::Write as _;
use std::process::Stdio;

use oxiscope_test_support::OpenAiScript;

use super::chat_env::{ChatEnv, run, stderr, stdout};

fn submit(id: &str, args: &serde_json::Value) -> OpenAiScript {
    OpenAiScript::new()
        .tool_call(0, id, "GenerateStructuredOutput")
        .tool_args(0, args.to_string())
        .finish("tool_calls")
        .usage(30, 10, 0)
}

#[test]
fn a_goal_run_sends_the_refusal_back_and_ends_when_the_verifier_passes() {
    let env = ChatEnv::new();
    let prompt = env.root.path().join("verifier.md");
    std::fs::write(&prompt, "You are a strict reviewer named Verifier.").unwrap();
    env.answer(&submit(
        "r1",
        &serde_json::json!({"report": "wrote hello.py"}),
    ));
    env.answer(&submit(
        "v1",
        &serde_json::json!({"result": "fail", "message": "hello.py is missing"}),
    ));
    env.answer(&submit(
        "r2",
        &serde_json::json!({"report": "hello.py is there now"}),
    ));
    env.answer(&submit(
        "v2",
        &serde_json::json!({"result": "pass", "message": "ok"}),
    ));
    let mut child = env
        .chat(&["--goal-verifier", prompt.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"Write hello.py\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("[goal: passed after 1 refusal]"), "{text}");
    assert_eq!(env.requests().len(), 4);
    // The verifier runs with the prompt from the file and sees the report.
    let verifier = serde_json::to_string(&env.messages(1)).unwrap();
    assert!(verifier.contains("strict reviewer") && verifier.contains("wrote hello.py"));
    // The refusal reached the executor.
    let executor = serde_json::to_string(&env.messages(2)).unwrap();
    assert!(executor.contains("hello.py is missing"), "{executor}");
}

#[test]
fn a_goal_run_needs_a_readable_verifier_prompt_and_no_one_shot() {
    let env = ChatEnv::new();
    let out = run(env.chat(&["--goal-verifier", "no-such-file.md"]));
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no-such-file.md"), "{}", stderr(&out));
    assert!(
        stdout(&out).is_empty(),
        "fails before the banner: {}",
        stdout(&out)
    );
    let out = run(env.chat(&["--goal-verifier", "x.md", "-p", "hi"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(env.requests().is_empty());
}
