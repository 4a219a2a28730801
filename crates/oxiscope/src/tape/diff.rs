//! [`diff`]: where two tapes part, step by step.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use futures_util::StreamExt as _;
use oxiscope_agent::ReplyInput;
use oxiscope_agent::pipeline::{CancellationToken, PipelineProtocol};
use oxiscope_message::{AgentEvent, Msg, ToolCallBlock};
use serde_json::json;

use super::normalize::{normalized, without_usage};
use super::{Tape, TapeEntry, TapeRecorder};

/// A step of a run, as tapes number them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// The input of reply `n` (from 0).
    Input(usize),
    /// The request of model call `n`.
    ModelRequest(usize),
    /// The response of model call `n`.
    ModelResponse(usize),
    /// The tool call with this id.
    ToolCall(String),
    /// Event `n` of the run (from 0).
    Event(usize),
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Input(n) => write!(f, "input {n}"),
            Self::ModelRequest(n) => write!(f, "model request {n}"),
            Self::ModelResponse(n) => write!(f, "model response {n}"),
            Self::ToolCall(id) => write!(f, "tool call {id}"),
            Self::Event(n) => write!(f, "event {n}"),
        }
    }
}

/// The first step where two runs differ, with both sides (ids, timestamps
/// and the current time left out; `None`: that side has no such step).
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// Where.
    pub step: Step,
    /// What the first (recorded) run did.
    pub expected: Option<Value>,
    /// What the second (replayed) run did.
    pub actual: Option<Value>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = |v: &Option<Value>| v.as_ref().map_or("(nothing)".to_owned(), Value::to_string);
        write!(
            f,
            "the runs differ at {}:\n  expected: {}\n  actual:   {}",
            self.step,
            side(&self.expected),
            side(&self.actual)
        )
    }
}

impl Divergence {
    /// A divergence at `step` when the two sides differ once normalised.
    pub(super) fn check<T: Serialize>(
        step: Step,
        expected: Option<&T>,
        actual: Option<&T>,
    ) -> Option<Self> {
        let expected = expected
            .and_then(|v| serde_json::to_value(v).ok())
            .map(normalized);
        let actual = actual
            .and_then(|v| serde_json::to_value(v).ok())
            .map(normalized);
        (expected != actual).then_some(Self {
            step,
            expected,
            actual,
        })
    }
}

/// The first step where `actual` parts from `expected`: inputs in order,
/// then each model call's request and response in turn, then the tool
/// calls (by id), then the events in order. `None`: the runs agree.
#[must_use]
pub fn diff(expected: &Tape, actual: &Tape) -> Option<Divergence> {
    compare(expected, actual, Depth::Exact)
}

/// The first step where `actual`, a run of `expected`'s inputs by a live
/// model, parts from it in what the model's streaming cannot change:
/// inputs, model requests (token counts aside), each model answer's final
/// content, and the tool calls in the order they ended (name, input,
/// result). How answers were chunked, their usage and the events are left
/// out (another model, or the same one on another day, streams
/// differently and mints other call ids).
#[must_use]
pub fn diff_outcomes(expected: &Tape, actual: &Tape) -> Option<Divergence> {
    compare(expected, actual, Depth::Outcome)
}

/// Sends `tape`'s inputs to `target` — an agent (or pipeline) with its own
/// model and tools and with `recorder` as its first middleware — and
/// compares the new run with the tape by [`diff_outcomes`].
pub async fn diff_live(
    tape: &Tape,
    target: &dyn PipelineProtocol,
    recorder: &TapeRecorder,
) -> Option<Divergence> {
    if let Some(divergence) = send_inputs(tape, target).await {
        return Some(divergence);
    }
    diff_outcomes(tape, &recorder.tape())
}

/// Sends the tape's inputs to `target` in order, each after the previous
/// reply's stream ended; an input that answers a parked reply goes to the
/// reply that parked in this run. A divergence when none did.
pub(super) async fn send_inputs(tape: &Tape, target: &dyn PipelineProtocol) -> Option<Divergence> {
    let mut parked: Option<(String, Vec<ToolCallBlock>)> = None;
    let inputs: Vec<(Vec<Msg>, Option<AgentEvent>)> = tape
        .inputs()
        .map(|(messages, event)| (messages.to_vec(), event.cloned()))
        .collect();
    for (n, (messages, event)) in inputs.into_iter().enumerate() {
        let input = match event {
            Some(event) => match resumed(&event, parked.as_ref()) {
                Some(input) => input,
                None => {
                    return Some(Divergence {
                        step: Step::Input(n),
                        expected: Some(json!("an answer to a parked reply")),
                        actual: Some(json!("no reply is parked")),
                    });
                }
            },
            None if messages.is_empty() => ReplyInput::Continue,
            None => ReplyInput::Msgs(messages),
        };
        let mut events = target.reply_stream(input, CancellationToken::new());
        parked = None;
        while let Some(event) = events.next().await {
            match &event {
                AgentEvent::RequireUserConfirm(e) => {
                    parked = Some((e.reply_id.clone(), e.tool_calls.clone()));
                }
                AgentEvent::RequireExternalExecution(e) => {
                    parked = Some((e.reply_id.clone(), e.tool_calls.clone()));
                }
                _ => {}
            }
        }
    }
    None
}

/// The input a recorded resuming event gives, addressed to the reply that
/// parked in this run: its id, and each answer's call id that of the
/// parked call with the same name, in order (a live model mints its own).
fn resumed(
    event: &AgentEvent,
    parked: Option<&(String, Vec<ToolCallBlock>)>,
) -> Option<ReplyInput> {
    let (reply_id, calls) = parked?;
    let mut value = serde_json::to_value(event).ok()?;
    value["reply_id"] = json!(reply_id);
    let mut unused: Vec<&ToolCallBlock> = calls.iter().collect();
    let mut readdress = |answer: &mut Value| {
        let name = answer.get("name").and_then(Value::as_str)?;
        let at = unused.iter().position(|c| c.name == name)?;
        answer["id"] = json!(unused.remove(at).id);
        Some(())
    };
    for key in ["confirm_results", "execution_results"] {
        if let Some(answers) = value.get_mut(key).and_then(Value::as_array_mut) {
            for answer in answers {
                let target = match key {
                    "confirm_results" => answer.get_mut("tool_call"),
                    _ => Some(answer),
                };
                if let Some(target) = target {
                    readdress(target);
                }
            }
        }
    }
    let event: AgentEvent = serde_json::from_value(value).ok()?;
    ReplyInput::try_from(event).ok()
}

/// How closely [`compare`] looks.
#[derive(Clone, Copy, PartialEq)]
enum Depth {
    /// Every chunk and event, tool calls by id.
    Exact,
    /// Final answers, tool calls in order, no events.
    Outcome,
}

fn compare(expected: &Tape, actual: &Tape, depth: Depth) -> Option<Divergence> {
    let inputs = |t: &Tape| {
        t.entries
            .iter()
            .filter(|e| matches!(e, TapeEntry::Input { .. }))
            .cloned()
            .collect::<Vec<_>>()
    };
    let (a, b) = (inputs(expected), inputs(actual));
    for n in 0..a.len().max(b.len()) {
        if let Some(d) = Divergence::check(Step::Input(n), a.get(n), b.get(n)) {
            return Some(d);
        }
    }
    for n in 0..expected.model_calls().max(actual.model_calls()) {
        let request = |t: &Tape| {
            t.request(n).map(|(m, tools)| {
                let request = serde_json::json!({"messages": m, "tools": tools});
                match depth {
                    Depth::Exact => request,
                    Depth::Outcome => without_usage(request),
                }
            })
        };
        let response = |t: &Tape| {
            t.response(n).map(|(c, e)| match depth {
                Depth::Exact => serde_json::json!({"chunks": c, "error": e}),
                Depth::Outcome => {
                    let last = c.iter().rev().find(|c| c.is_last).or(c.last());
                    serde_json::json!({"content": last.map(|c| &c.content), "error": e})
                }
            })
        };
        let (ra, rb) = (request(expected), request(actual));
        if let Some(d) = Divergence::check(Step::ModelRequest(n), ra.as_ref(), rb.as_ref()) {
            return Some(d);
        }
        let (sa, sb) = (response(expected), response(actual));
        if let Some(d) = Divergence::check(Step::ModelResponse(n), sa.as_ref(), sb.as_ref()) {
            return Some(d);
        }
    }
    if depth == Depth::Outcome {
        let results = |t: &Tape| {
            t.entries
                .iter()
                .filter_map(|e| match e {
                    TapeEntry::ToolResult {
                        name,
                        input,
                        chunks,
                        ..
                    } => Some(serde_json::json!({"name": name, "input": input, "chunks": chunks})),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        let (ta, tb) = (results(expected), results(actual));
        for n in 0..ta.len().max(tb.len()) {
            let step = Step::ToolCall(format!("#{n}"));
            if let Some(d) = Divergence::check(step, ta.get(n), tb.get(n)) {
                return Some(d);
            }
        }
        return None;
    }
    let mut ids: Vec<&str> = [expected, actual]
        .iter()
        .flat_map(|t| t.entries.iter())
        .filter_map(|e| match e {
            TapeEntry::ToolResult { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let result = |t: &Tape| {
            t.tool_result(id).map(|(name, input, chunks)| serde_json::json!({"name": name, "input": input, "chunks": chunks}))
        };
        let (ta, tb) = (result(expected), result(actual));
        if let Some(d) = Divergence::check(Step::ToolCall(id.to_owned()), ta.as_ref(), tb.as_ref())
        {
            return Some(d);
        }
    }
    let (ea, eb): (Vec<_>, Vec<_>) = (expected.events().collect(), actual.events().collect());
    for n in 0..ea.len().max(eb.len()) {
        if let Some(d) = Divergence::check(Step::Event(n), ea.get(n), eb.get(n)) {
            return Some(d);
        }
    }
    None
}
