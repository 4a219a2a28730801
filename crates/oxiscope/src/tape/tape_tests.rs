use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::StreamExt as _;
use oxiscope_agent::{Agent, Middleware};
use oxiscope_message::{ConfirmResult, Msg, UserConfirmResultEvent};
use oxiscope_model::DynChatModel;
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use oxiscope_tool::{FunctionTool, Toolkit};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::*;

/// Count something.
#[derive(Deserialize, JsonSchema)]
struct Count {
    /// What.
    what: String,
}

/// An agent whose `count` tool asks before it runs and counts its runs.
fn agent(
    model: Arc<dyn DynChatModel>,
    prompt: &str,
    runs: &Arc<AtomicUsize>,
    mw: impl Middleware + 'static,
) -> Agent {
    let runs = Arc::clone(runs);
    let mut toolkit = Toolkit::new();
    toolkit
        .register(FunctionTool::new("count", move |c: Count| {
            let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
            async move { format!("{n} {}", c.what) }
        }))
        .unwrap();
    Agent::builder("Friday", model)
        .system_prompt(prompt)
        .toolkit(Arc::new(toolkit))
        .workdir(std::env::temp_dir())
        .middleware(mw)
        .build()
        .unwrap()
}

/// Records a run: a question whose tool call is confirmed, then another
/// question.
async fn recorded() -> Tape {
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::text("Counting.").and_tool_call("c1", "count", r#"{"what": "sheep"}"#),
        ScriptedTurn::text("One sheep.").with_usage(30, 4),
        ScriptedTurn::text("Goodbye, sk-abcdefghijklmnopqrstu."),
    ]));
    let recorder = TapeRecorder::new();
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = agent(model, "You count.", &runs, recorder.clone());
    let mut parked = None;
    let mut events = agent.reply_stream(Msg::user("user", "Count sheep").unwrap());
    while let Some(event) = events.next().await {
        if let AgentEvent::RequireUserConfirm(e) = event {
            parked = Some(e);
        }
    }
    let parked = parked.unwrap();
    let answers = vec![ConfirmResult {
        confirmed: true,
        tool_call: parked.tool_calls[0].clone(),
        rules: None,
    }];
    agent
        .reply(UserConfirmResultEvent::new(parked.reply_id, answers))
        .await
        .unwrap();
    agent
        .reply(Msg::user("user", "Bye").unwrap())
        .await
        .unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    recorder.tape()
}

/// Replays `tape` on a fresh agent with `prompt`, whose model has no
/// answers (it must not be called) and whose tool must not run.
async fn replay(tape: Tape, prompt: &str) -> ReplayReport {
    let offline: Arc<dyn DynChatModel> = Arc::new(ScriptedModel::new([]));
    let replayer = TapeReplayer::new(tape);
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = agent(offline, prompt, &runs, replayer.clone());
    let report = replayer.run(&agent).await;
    assert_eq!(runs.load(Ordering::SeqCst), 0, "a replayed tool ran");
    report
}

#[tokio::test]
async fn a_replay_reproduces_the_recorded_run_exactly() {
    let tape = recorded().await;
    assert_eq!(tape.model_calls(), 3);
    assert_eq!(tape.inputs().count(), 3);
    let events = tape.events().count();
    let report = replay(tape, "You count.").await;
    assert_eq!(report.divergence, None);
    assert_eq!(report.model_calls, 3);
    assert_eq!(report.events, events);
}

#[tokio::test]
async fn a_tape_survives_json_lines_with_its_secrets_redacted() {
    let tape = recorded().await;
    let text = tape.to_jsonl();
    assert!(!text.contains("sk-abcdefghijklmnopqrstu"));
    assert!(text.contains("Goodbye, sk-[REDACTED]."));
    let back = Tape::from_jsonl(&text).unwrap();
    assert_eq!(back.entries.len(), tape.entries.len());
    assert_eq!(diff(&tape, &back), None);
    assert_eq!(replay(back, "You count.").await.divergence, None);
}

#[tokio::test]
async fn a_different_agent_diverges_at_the_first_model_request() {
    let report = replay(recorded().await, "You count goats.").await;
    let divergence = report.divergence.unwrap();
    assert_eq!(divergence.step, Step::ModelRequest(0));
    let expected = divergence.expected.unwrap().to_string();
    let actual = divergence.actual.unwrap().to_string();
    assert!(expected.contains("You count.") && actual.contains("You count goats."));
}

#[tokio::test]
async fn a_planted_event_is_reported_at_its_step_with_both_sides() {
    let mut tape = recorded().await;
    // Plant: the consumer saw other text in the last reply.
    let n = tape
        .events()
        .position(|e| matches!(e, AgentEvent::TextBlockDelta(d) if d.delta.contains("Goodbye")))
        .unwrap();
    let mut seen = 0;
    for entry in &mut tape.entries {
        if let TapeEntry::Event { event } = entry {
            if let (true, AgentEvent::TextBlockDelta(d)) = (seen == n, &mut *event) {
                d.delta = "Farewell.".to_owned();
            }
            seen += 1;
        }
    }
    let divergence = replay(tape.clone(), "You count.").await.divergence.unwrap();
    assert_eq!(divergence.step, Step::Event(n));
    assert_eq!(divergence.expected.unwrap()["delta"], "Farewell.");
    assert_eq!(
        divergence.actual.unwrap()["delta"],
        "Goodbye, sk-[REDACTED]."
    );
    assert!(diff(&recorded().await, &tape).is_some_and(|d| d.step == Step::Event(n)));
}

#[tokio::test]
async fn diff_names_a_changed_tool_result() {
    let original = recorded().await;
    let mut changed = original.clone();
    for entry in &mut changed.entries {
        if let TapeEntry::ToolResult { chunks, .. } = entry {
            *chunks = vec![ToolChunk::text("2 sheep")];
        }
    }
    let divergence = diff(&original, &changed).unwrap();
    assert_eq!(divergence.step, Step::ToolCall("c1".to_owned()));
    assert!(divergence.actual.unwrap().to_string().contains("2 sheep"));
    assert_eq!(diff(&original, &original), None);
}

#[tokio::test]
async fn a_run_that_stops_short_diverges_at_the_first_missing_step() {
    let mut tape = recorded().await;
    // The last input is gone: the replay never asks the third question.
    let last = tape
        .entries
        .iter()
        .rposition(|e| matches!(e, TapeEntry::Input { .. }))
        .unwrap();
    let events_before = tape.entries[..last]
        .iter()
        .filter(|e| matches!(e, TapeEntry::Event { .. }))
        .count();
    let input = tape.entries.remove(last);
    let report = replay(tape, "You count.").await;
    let divergence = report.divergence.unwrap();
    assert_eq!(divergence.step, Step::Event(events_before), "{input:?}");
    assert_eq!(divergence.actual, None);
}

#[test]
fn a_line_that_is_no_entry_is_named() {
    let text = format!("{}\nnot json\n", json!({"kind": "input"}));
    match Tape::from_jsonl(&text) {
        Err(TapeError::Line { line, .. }) => assert_eq!(line, 2),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_agent_rebuilt_from_the_tape_alone_replays_it() {
    let tape = recorded().await;
    let replayer = TapeReplayer::new(tape.clone());
    let agent = replay_agent(&tape, &replayer).unwrap();
    assert_eq!(agent.name(), "Friday");
    let report = replayer.run(&agent).await;
    assert_eq!(report.divergence, None);
    assert_eq!(report.model_calls, 3);
}

#[tokio::test]
async fn a_live_run_of_the_inputs_agrees_however_it_streams_or_names_its_first_difference() {
    let tape = recorded().await;
    let turns = |last: &str| {
        [
            ScriptedTurn::text("Counting.").and_tool_call("c9", "count", r#"{"what": "sheep"}"#),
            // Other usage, other chunks: not an outcome.
            ScriptedTurn::text("One sheep.").with_usage(99, 9),
            ScriptedTurn::text(last),
        ]
    };
    let live = |last: &str| {
        let model = ScriptedModel::new(turns(last)).with_chunk_chars(2);
        let recorder = TapeRecorder::new();
        let runs = Arc::new(AtomicUsize::new(0));
        let agent = agent(Arc::new(model), "You count.", &runs, recorder.clone());
        (agent, recorder, runs)
    };
    let (same, recorder, runs) = live("Goodbye, sk-abcdefghijklmnopqrstu.");
    assert_eq!(diff_live(&tape, &same, &recorder).await, None);
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the live run's tool runs");
    // The exact comparison sees the other chunking.
    assert!(diff(&tape, &recorder.tape()).is_some());

    let (other, recorder, _) = live("See you.");
    let divergence = diff_live(&tape, &other, &recorder).await.unwrap();
    assert_eq!(divergence.step, Step::ModelResponse(2));
    let actual = divergence.actual.unwrap().to_string();
    assert!(actual.contains("See you."), "{actual}");
}
