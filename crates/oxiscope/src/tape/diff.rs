//! [`diff`]: where two tapes part, step by step.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::normalize::normalized;
use super::{Tape, TapeEntry};

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
            t.request(n)
                .map(|(m, tools)| serde_json::json!({"messages": m, "tools": tools}))
        };
        let response = |t: &Tape| {
            t.response(n)
                .map(|(c, e)| serde_json::json!({"chunks": c, "error": e}))
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
