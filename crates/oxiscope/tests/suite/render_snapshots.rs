//! The console renderer over event streams recorded from AgentScope 2.0.11:
//! golden renderings at every verbosity, and the rebuilt reply message.
//!
//! Regenerate the golden files with `UPDATE_GOLDEN=1 cargo test -p oxiscope`.

use std::path::PathBuf;

use oxiscope::render::{ConsoleRenderer, RenderOptions, Verbosity};
use oxiscope_message::AgentEvent;
use pretty_assertions::assert_eq;
use serde_json::Value;

const STREAMS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fixtures/agentscope-2.0.11/streams"
);

/// Recorded scenarios and their phases: thinking, a tool call, a tool with
/// image output and a runtime-state hint, a confirmation pause and its
/// resumption, an interrupted pause, the iteration limit. A later phase
/// starts with its input event (the user's answer).
const SCENARIOS: &[(&str, &[&str])] = &[
    ("a2_thinking_text", &["1-reply"]),
    ("b_tool_call", &["1-reply"]),
    ("b2_tool_multimodal_result", &["1-reply"]),
    ("c_confirm_approved", &["1-pause", "2-resume"]),
    ("e_interrupt_parked", &["1-pause", "2-interrupt"]),
    ("f_exceed_max_iters", &["1-reply"]),
];

/// Every phase of a scenario through one renderer: the rendered text per
/// phase, and the rebuilt message after each.
fn render_scenario(
    scenario: &str,
    phases: &[&str],
    verbosity: Verbosity,
) -> Vec<(String, String, Value)> {
    let options = RenderOptions::plain()
        .with_verbosity(verbosity)
        .with_max_tool_lines(Some(20));
    let mut renderer = ConsoleRenderer::new(Vec::new(), options);
    let mut out = Vec::new();
    for (i, phase) in phases.iter().enumerate() {
        let name = format!("{scenario}.{phase}");
        let before = renderer.writer().len();
        if i > 0 {
            renderer
                .render_value(&load(&format!("{name}.input.json")))
                .unwrap();
        }
        for event in events(&name) {
            renderer.render_value(&event).unwrap();
        }
        let text = String::from_utf8(renderer.writer()[before..].to_vec()).unwrap();
        let msg = serde_json::to_value(renderer.last_msg().unwrap()).unwrap();
        out.push((name, text, msg));
    }
    out
}

fn load(name: &str) -> Value {
    let path = format!("{STREAMS}/{name}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn events(phase: &str) -> Vec<Value> {
    match load(&format!("{phase}.events.json")) {
        Value::Array(events) => events,
        other => panic!("{phase}: not a list of events: {other}"),
    }
}

fn render(
    events: &[Value],
    verbosity: Verbosity,
    max_lines: Option<usize>,
) -> (String, ConsoleRenderer<Vec<u8>>) {
    let options = RenderOptions::plain()
        .with_verbosity(verbosity)
        .with_max_tool_lines(max_lines);
    let mut renderer = ConsoleRenderer::new(Vec::new(), options);
    for event in events {
        renderer.render_value(event).unwrap();
    }
    let text = String::from_utf8(renderer.writer().clone()).unwrap();
    (text, renderer)
}

fn check_golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
    assert_eq!(actual, expected, "{name}");
}

#[test]
fn recorded_streams_render_as_the_golden_files_at_every_verbosity() {
    for verbosity in [Verbosity::Quiet, Verbosity::Default, Verbosity::Debug] {
        let mut all = String::new();
        for (scenario, phases) in SCENARIOS {
            for (name, text, _) in render_scenario(scenario, phases, verbosity) {
                all.push_str(&format!("=== {name}\n{text}"));
            }
        }
        check_golden(&format!("render.{}.txt", verbosity.as_str()), &all);
    }
}

#[test]
fn the_rebuilt_message_matches_agentscopes_rebuild() {
    for (scenario, phases) in SCENARIOS {
        for (name, _, rebuilt) in render_scenario(scenario, phases, Verbosity::Quiet) {
            let expected = load(&format!("{name}.msg_replay.json"));
            assert_eq!(mask(rebuilt, &expected), expected, "{name}");
        }
    }
}

/// `actual` with the values that `expected` leaves as clock or id
/// placeholders (`<now>`, `<new-id>`) replaced by them.
fn mask(actual: Value, expected: &Value) -> Value {
    match (actual, expected) {
        (_, Value::String(s)) if s == "<now>" || s == "<new-id>" => Value::String(s.clone()),
        (Value::Object(mut a), Value::Object(e)) => {
            for (k, ev) in e {
                if let Some(av) = a.remove(k) {
                    a.insert(k.clone(), mask(av, ev));
                }
            }
            Value::Object(a)
        }
        (Value::Array(a), Value::Array(e)) => a
            .into_iter()
            .zip(e.iter().chain(std::iter::repeat(&Value::Null)))
            .map(|(av, ev)| mask(av, ev))
            .collect(),
        (a, _) => a,
    }
}

#[test]
fn long_tool_results_collapse_into_a_hint_line() {
    let output: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let stream = serde_json::json!([
        {"type": "REPLY_START", "session_id": "s", "reply_id": "r", "name": "Friday"},
        {"type": "TOOL_CALL_START", "reply_id": "r", "tool_call_id": "c1", "tool_call_name": "Bash"},
        {"type": "TOOL_CALL_DELTA", "reply_id": "r", "tool_call_id": "c1", "delta": "{\"command\": \"seq 30\"}"},
        {"type": "TOOL_CALL_END", "reply_id": "r", "tool_call_id": "c1"},
        {"type": "TOOL_RESULT_START", "reply_id": "r", "tool_call_id": "c1", "tool_call_name": "Bash"},
        {"type": "TOOL_RESULT_TEXT_DELTA", "reply_id": "r", "tool_call_id": "c1", "delta": output},
        {"type": "TOOL_RESULT_END", "reply_id": "r", "tool_call_id": "c1", "state": "success"},
        {"type": "REPLY_END", "session_id": "s", "reply_id": "r"}
    ]);
    let (text, _) = render(stream.as_array().unwrap(), Verbosity::Default, Some(3));
    assert_eq!(
        text,
        "● Bash(seq 30)\n  ⎿ Bash\n    line 1\n    line 2\n    line 3\n    … 27 more lines\n"
    );
}

#[test]
fn concurrent_tools_print_whole_blocks_and_replies_are_told_apart() {
    let stream = serde_json::json!([
        {"type": "REPLY_START", "session_id": "s", "reply_id": "r1", "name": "Writer"},
        {"type": "TEXT_BLOCK_START", "reply_id": "r1", "block_id": "t1"},
        {"type": "TEXT_BLOCK_DELTA", "reply_id": "r1", "block_id": "t1", "delta": "Checking"},
        {"type": "TOOL_CALL_START", "reply_id": "r1", "tool_call_id": "a", "tool_call_name": "Read"},
        {"type": "TOOL_CALL_START", "reply_id": "r1", "tool_call_id": "b", "tool_call_name": "Grep"},
        {"type": "TOOL_CALL_DELTA", "reply_id": "r1", "tool_call_id": "a", "delta": "{\"file_path\":"},
        {"type": "TOOL_CALL_DELTA", "reply_id": "r1", "tool_call_id": "b", "delta": "{\"pattern\": \"fn main\"}"},
        {"type": "TOOL_CALL_DELTA", "reply_id": "r1", "tool_call_id": "a", "delta": " \"src/main.rs\"}"},
        {"type": "TOOL_CALL_END", "reply_id": "r1", "tool_call_id": "b"},
        {"type": "TOOL_CALL_END", "reply_id": "r1", "tool_call_id": "a"},
        {"type": "TOOL_RESULT_START", "reply_id": "r1", "tool_call_id": "a", "tool_call_name": "Read"},
        {"type": "TOOL_RESULT_START", "reply_id": "r1", "tool_call_id": "b", "tool_call_name": "Grep"},
        {"type": "TOOL_RESULT_TEXT_DELTA", "reply_id": "r1", "tool_call_id": "a", "delta": "fn main() {"},
        {"type": "TOOL_RESULT_TEXT_DELTA", "reply_id": "r1", "tool_call_id": "b", "delta": "src/main.rs:1"},
        {"type": "TOOL_RESULT_TEXT_DELTA", "reply_id": "r1", "tool_call_id": "a", "delta": "}"},
        {"type": "TOOL_RESULT_END", "reply_id": "r1", "tool_call_id": "b", "state": "success"},
        {"type": "TOOL_RESULT_END", "reply_id": "r1", "tool_call_id": "a", "state": "error"},
        {"type": "REPLY_END", "session_id": "s", "reply_id": "r1"},
        {"type": "REPLY_START", "session_id": "s", "reply_id": "r2", "name": "Reviewer"},
        {"type": "TEXT_BLOCK_START", "reply_id": "r2", "block_id": "t2"},
        {"type": "TEXT_BLOCK_DELTA", "reply_id": "r2", "block_id": "t2", "delta": "Looks good."},
        {"type": "TEXT_BLOCK_END", "reply_id": "r2", "block_id": "t2"},
        {"type": "SOMETHING_NEW", "reply_id": "r2"},
        {"type": "REPLY_END", "session_id": "s", "reply_id": "r2"}
    ]);
    let (text, renderer) = render(stream.as_array().unwrap(), Verbosity::Default, None);
    assert_eq!(
        text,
        "Writer: Checking\n\
         ● Grep(fn main)\n\
         ● Read(src/main.rs)\n\
         \x20 ⎿ Grep\n    src/main.rs:1\n\
         \x20 ⎿ Read (error)\n    fn main() {}\n\
         Reviewer: Looks good.\n"
    );
    assert_eq!(renderer.msg("r1").unwrap().text(""), "Checking");
    assert_eq!(renderer.last_msg().unwrap().name, "Reviewer");
    let (debug, _) = render(stream.as_array().unwrap(), Verbosity::Debug, None);
    assert!(debug.contains("[skipped event SOMETHING_NEW"), "{debug}");
}

#[test]
fn colour_is_only_used_when_asked_for() {
    let stream = events("a2_thinking_text.1-reply");
    let mut renderer = ConsoleRenderer::new(Vec::new(), RenderOptions::default());
    for event in &stream {
        renderer.render_value(event).unwrap();
    }
    let coloured = String::from_utf8(renderer.into_inner()).unwrap();
    assert!(
        coloured.contains("\x1b[2m"),
        "thinking is dimmed: {coloured:?}"
    );
    let (plain, _) = render(&stream, Verbosity::Default, None);
    assert!(!plain.contains('\x1b'));
    let typed: Vec<AgentEvent> = serde_json::from_value(Value::Array(stream)).unwrap();
    assert!(!typed.is_empty());
}

#[test]
fn data_blocks_become_placeholders_and_errors_show_at_every_level() {
    let image = "A".repeat(46_424);
    let stream = serde_json::json!([
        {"type": "REPLY_START", "session_id": "s", "reply_id": "r", "name": "Painter"},
        {"type": "THINKING_BLOCK_START", "reply_id": "r", "block_id": "k"},
        {"type": "THINKING_BLOCK_DELTA", "reply_id": "r", "block_id": "k", "delta": "draw"},
        {"type": "THINKING_BLOCK_END", "reply_id": "r", "block_id": "k"},
        {"type": "DATA_BLOCK_START", "reply_id": "r", "block_id": "d", "media_type": "image/png"},
        {"type": "DATA_BLOCK_DELTA", "reply_id": "r", "block_id": "d", "media_type": "image/png", "data": image},
        {"type": "DATA_BLOCK_END", "reply_id": "r", "block_id": "d"},
        {"type": "REPLY_END", "session_id": "s", "reply_id": "r", "finished_reason": "error",
         "error": {"type": "upstream", "message": "the model went away"}}
    ]);
    let events = stream.as_array().unwrap();
    let (quiet, renderer) = render(events, Verbosity::Quiet, None);
    assert_eq!(
        quiet,
        "[data: image/png, ~34KB]\nerror: the model went away\n"
    );
    let msg = renderer.last_msg().unwrap();
    assert_eq!(msg.content.len(), 2);
    assert_eq!(msg.error.as_ref().unwrap().message, "the model went away");
    let (default, _) = render(events, Verbosity::Default, None);
    assert_eq!(
        default,
        "Painter (thinking): draw\n[data: image/png, ~34KB]\nerror: the model went away\n"
    );
}
