//! The examples about one agent: the minimal one, streaming, typed tools,
//! permissions, pause and resume, structured output, a custom middleware,
//! a goal pipeline and the console.

use pretty_assertions::assert_eq;

use super::harness::{ExampleRun, calls, system_prompt, text, tool_results};

#[test]
fn minimal_agent_answers_one_question() {
    let run = ExampleRun::new();
    run.answer(text("Rust is a systems programming language."));
    let out = run.run("minimal_agent", &["What is Rust?"]);
    assert_eq!(
        out,
        "Rust is a systems programming language.\n(2 messages in the context)\n"
    );
    let requests = run.chat_requests();
    assert_eq!(requests.len(), 1);
    assert!(system_prompt(&requests[0]).contains("You are Friday"));
    assert!(
        requests[0]["messages"][1]
            .to_string()
            .contains("What is Rust?")
    );
    run.assert_all_answers_used();
}

#[test]
fn streaming_prints_deltas_then_renders_the_second_reply() {
    let run = ExampleRun::new();
    run.answer(text("one, two, three"))
        .answer(text("three, two, one"));
    let out = run.run("streaming", &[]);
    assert!(
        out.starts_with("one, two, three\n[reply ended: Completed]\n"),
        "{out}"
    );
    assert!(out.contains("three, two, one"), "{out}");
    assert!(out.ends_with("[rebuilt reply: three, two, one]\n"), "{out}");
    // The second question went with the first exchange.
    let second = &run.chat_requests()[1];
    let roles: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert!(roles.contains(&"assistant"), "{second}");
    assert!(second.to_string().contains("one, two, three"), "{second}");
}

#[test]
fn typed_tools_run_with_repaired_arguments() {
    let run = ExampleRun::new();
    run.answer(calls(&[
        ("c1", "get_weather", r#"{"city": "Paris"}"#),
        ("c2", "add", r#"{"a": "20", "b": 22}"#),
    ]))
    .answer(text("Sunny in Paris, and 42."));
    let out = run.run("typed_tools", &[]);
    // Both run at once (function tools are concurrency-safe).
    for line in [
        "running get_weather",
        "running add",
        "  -> Sunny, 21 °C in Paris",
        "  -> 42",
    ] {
        assert!(out.lines().any(|l| l == line), "{line:?} in {out}");
    }
    assert!(out.ends_with("Sunny in Paris, and 42.\n"), "{out}");
    let requests = run.chat_requests();
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["get_weather", "add"]);
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 2);
    assert!(results[1].1.contains("42"), "{results:?}");
}

#[test]
fn permissions_deny_by_rule_and_confirm_in_code() {
    let run = ExampleRun::new();
    run.answer(calls(&[
        ("c1", "delete_file", r#"{"path": "/tmp/old.log"}"#),
        ("c2", "delete_file", r#"{"path": "~/notes.txt"}"#),
        ("c3", "format_disk", r#"{"device": "/dev/sda"}"#),
    ]))
    .answer(text("Deleted /tmp/old.log; the rest was refused."));
    let out = run.run("permissions", &[]);
    // Only the two deletions are asked about; the rule denies the format.
    assert_eq!(out.matches("asked about").count(), 2, "{out}");
    assert!(
        out.contains(r#"asked about delete_file {"path": "/tmp/old.log"}: yes"#),
        "{out}"
    );
    assert!(
        out.contains(r#"asked about delete_file {"path": "~/notes.txt"}: no"#),
        "{out}"
    );
    assert!(out.contains("c1: Success"), "{out}");
    assert!(out.contains("c2: Denied"), "{out}");
    assert!(out.contains("c3: Denied"), "{out}");
    assert!(
        out.ends_with("Deleted /tmp/old.log; the rest was refused.\n"),
        "{out}"
    );
    let results = tool_results(&run.chat_requests()[1]);
    let deleted: Vec<&str> = results.iter().map(|(_, c)| c.as_str()).collect();
    assert!(
        deleted.iter().any(|c| c.contains("deleted /tmp/old.log")),
        "{deleted:?}"
    );
    assert!(
        !deleted.iter().any(|c| c.contains("deleted ~/notes.txt")),
        "{deleted:?}"
    );
}

#[test]
fn pause_resume_continues_the_reply_in_a_new_process() {
    let run = ExampleRun::new();
    run.answer(calls(&[("c1", "archive", r#"{"path": "report.pdf"}"#)]))
        .answer(text("Archived report.pdf."));
    let out = run.run("pause_resume", &[]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "[1] parked: 1 call(s) wait for a confirmation");
    assert!(lines[1].starts_with("[1] state saved to "), "{out}");
    assert_eq!(
        lines[2..],
        [
            r#"[2] approving archive({"path": "report.pdf"})"#,
            "[2] Archived report.pdf."
        ]
    );
    // The resumed process sent the approved call's result.
    let results = tool_results(&run.chat_requests()[1]);
    assert_eq!(
        results,
        [("c1".to_owned(), "archived report.pdf".to_owned())]
    );
    // The saved state was removed.
    assert_eq!(std::fs::read_dir(run.dir.path()).unwrap().count(), 0);
}

#[test]
fn structured_output_becomes_a_rust_value() {
    let run = ExampleRun::new();
    run.answer(calls(&[(
        "c1",
        "GenerateStructuredOutput",
        r#"{"name": "Ada Lovelace", "age": 36, "city": "London"}"#,
    )]));
    let out = run.run("structured_output", &[]);
    assert!(
        out.ends_with("Ada Lovelace is 36 and lives in London.\n"),
        "{out}"
    );
    let tools = &run.chat_requests()[0]["tools"];
    let schema = &tools[0]["function"]["parameters"];
    assert_eq!(tools[0]["function"]["name"], "GenerateStructuredOutput");
    assert!(schema["properties"]["age"].is_object(), "{schema}");
}

#[test]
fn custom_middleware_hooks_every_step() {
    let run = ExampleRun::new();
    run.answer(calls(&[("c1", "reboot", "{}")]))
        .answer(text("I am not allowed to reboot."))
        .answer(text("An onion has layers."));
    let out = run.run("custom_middleware", &[]);
    assert_eq!(out.matches("[model call ").count(), 3, "{out}");
    // The system prompt, the question, and the runtime-state note.
    assert!(out.contains("[model call 1: 3 messages, 1 tools]"), "{out}");
    assert!(
        out.contains(r#"token meter: {"input":60,"output":15}"#),
        "{out}"
    );
    assert!(out.ends_with("model calls: 3\n"), "{out}");
    let requests = run.chat_requests();
    assert!(system_prompt(&requests[0]).ends_with("You are Friday.\nAnswer in one sentence."));
    let results = tool_results(&requests[1]);
    assert!(
        results[0].1.contains("reboot is blocked by the supervisor"),
        "{results:?}"
    );
}

#[test]
fn goal_pipeline_runs_until_the_verifier_passes() {
    let run = ExampleRun::new();
    let submit = |args: &str| calls(&[("s", "GenerateStructuredOutput", args)]);
    run.answer(submit(r#"{"report": "The sea is wide."}"#))
        .answer(submit(
            r#"{"result": "fail", "message": "Four lines, please."}"#,
        ))
        .answer(submit(r#"{"report": "Waves\nand foam\nthe sea\nsleeps"}"#))
        .answer(submit(
            r#"{"result": "pass", "message": "Four lines about the sea."}"#,
        ));
    let out = run.run("goal_pipeline", &[]);
    let working: Vec<&str> = out.lines().filter(|l| l.starts_with("-- ")).collect();
    assert_eq!(
        working,
        [
            "-- Executor is working",
            "-- Verifier is working",
            "-- Executor is working",
            "-- Verifier is working"
        ]
    );
    assert!(
        out.contains("refusals: 1\npassed: Four lines about the sea.\nWaves\n"),
        "{out}"
    );
    run.assert_all_answers_used();
}

#[test]
fn console_asks_on_stdin_and_leaves_at_exit() {
    let run = ExampleRun::new();
    run.answer(calls(&[("c1", "add_note", r#"{"text": "buy milk"}"#)]))
        .answer(text("Noted: buy milk."))
        .answer(text("You have one note."));
    let out = run.run_with_input("console", "Note: buy milk\ny\nHow many notes?\nexit\n");
    assert_eq!(out.matches("user> ").count(), 3, "{out}");
    assert!(out.contains("Allow add_note("), "{out}");
    assert!(out.contains("Noted: buy milk."), "{out}");
    assert!(out.contains("You have one note."), "{out}");
    assert!(out.ends_with("2 replies, 1 questions answered\n"), "{out}");
    let results = tool_results(&run.chat_requests()[1]);
    assert_eq!(results, [("c1".to_owned(), "noted: buy milk".to_owned())]);
}
