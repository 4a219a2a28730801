//! [`TapeReplayer`]: the middleware that plays a tape back.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use oxiscope_agent::pipeline::PipelineProtocol;
use oxiscope_agent::{
    ActingCall, ActingNext, EventStream, Middleware, ModelCall, ModelNext, ReplyCall, ReplyNext,
};
use oxiscope_message::AgentEvent;
use oxiscope_model::{ChatStream, ModelError};
use oxiscope_tool::{ToolChunk, ToolStream};
use serde_json::json;

use super::diff::{Divergence, Step, send_inputs};
use super::normalize::aliased;
use super::record::{input_entry, tapped};
use super::{Tape, TapeEntry};

/// Answers an agent's model and tool calls from a tape and compares what
/// the agent does with what was recorded. Add it as the agent's first
/// middleware (the agent's model is then never called, and no tool runs),
/// send the tape's inputs, and read the [`report`](Self::report).
///
/// Replies' inputs are compared in order; model calls are answered in
/// order; tool calls by their id (the ids come from the recorded model
/// answers). A step the tape does not have fails: a model call with an
/// error, a tool call with an error result.
///
/// With [`with_live_tools`](Self::with_live_tools) the tools run (their
/// effects are wanted, e.g. files an evaluation grades) and what they
/// stream is compared with what was recorded.
#[derive(Debug, Clone)]
pub struct TapeReplayer {
    tape: Arc<Tape>,
    state: Arc<Mutex<State>>,
    /// (text of this run, placeholder on the tape).
    aliases: Arc<Vec<(String, String)>>,
    live_tools: bool,
}

#[derive(Debug, Default)]
struct State {
    replies: usize,
    model_calls: usize,
    events: usize,
    divergence: Option<Divergence>,
}

/// How a replay went.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReplayReport {
    /// The first step where the run parted from the tape; `None`: it did
    /// exactly what was recorded.
    pub divergence: Option<Divergence>,
    /// Model calls answered.
    pub model_calls: usize,
    /// Events seen.
    pub events: usize,
}

impl TapeReplayer {
    /// A replayer of `tape`.
    #[must_use]
    pub fn new(tape: Tape) -> Self {
        Self {
            tape: Arc::new(tape),
            state: Arc::default(),
            aliases: Arc::default(),
            live_tools: false,
        }
    }

    /// `text` in this run stands for `placeholder` on the tape (as given to
    /// [`TapeRecorder::with_alias`](super::TapeRecorder::with_alias)):
    /// recorded answers get `text` back, and this run's steps are compared
    /// with `placeholder` in its place.
    #[must_use]
    pub fn with_alias(mut self, text: impl Into<String>, placeholder: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.aliases).push((text.into(), placeholder.into()));
        self
    }

    /// Runs the agent's tools instead of answering them from the tape, and
    /// compares what each streamed with its recorded result.
    #[must_use]
    pub fn with_live_tools(mut self) -> Self {
        self.live_tools = true;
        self
    }

    /// The tape being replayed.
    #[must_use]
    pub fn tape(&self) -> &Tape {
        &self.tape
    }

    /// How the replay went so far; once every input was sent, a run that
    /// stopped short of the recorded events diverges at the first missing
    /// one.
    #[must_use]
    pub fn report(&self) -> ReplayReport {
        let state = self.lock();
        let recorded: Vec<&AgentEvent> = self.tape.events().collect();
        let divergence = state.divergence.clone().or_else(|| {
            recorded.get(state.events).map(|missing| Divergence {
                step: Step::Event(state.events),
                expected: Divergence::check(Step::Event(state.events), Some(*missing), None)
                    .and_then(|d| d.expected),
                actual: None,
            })
        });
        ReplayReport {
            divergence,
            model_calls: state.model_calls,
            events: state.events,
        }
    }

    /// Sends the tape's inputs to `target` (an agent, or a pipeline, with
    /// this replayer as its first middleware) in order, each after the
    /// previous reply's stream ended; an input that answers a parked reply
    /// is sent to the reply that parked in this run. Returns the report.
    pub async fn run(&self, target: &dyn PipelineProtocol) -> ReplayReport {
        let stopped = send_inputs(&self.tape, target).await;
        self.diverged(stopped);
        self.report()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The first divergence so far, if any.
    #[must_use]
    pub fn divergence(&self) -> Option<Divergence> {
        self.lock().divergence.clone()
    }

    /// A divergence at `step` when this run's `actual` (its text put back
    /// as placeholders) differs from the recorded `expected`.
    fn check<T: serde::Serialize>(&self, step: Step, expected: Option<&T>, actual: &T) {
        let expected = expected.and_then(|v| serde_json::to_value(v).ok());
        let actual = serde_json::to_value(actual)
            .ok()
            .map(|v| aliased(v, &self.aliases));
        self.diverged(Divergence::check(step, expected.as_ref(), actual.as_ref()));
    }

    /// A recorded value with this run's text in place of its placeholders.
    fn localised<T: serde::Serialize + serde::de::DeserializeOwned>(&self, value: T) -> T {
        if self.aliases.is_empty() {
            return value;
        }
        let back: Vec<(String, String)> = self
            .aliases
            .iter()
            .map(|(a, b)| (b.clone(), a.clone()))
            .collect();
        match serde_json::to_value(&value) {
            Ok(v) => serde_json::from_value(aliased(v, &back)).unwrap_or(value),
            Err(_) => value,
        }
    }

    /// Keeps `divergence` when it is the first.
    fn diverged(&self, divergence: Option<Divergence>) {
        let mut state = self.lock();
        if state.divergence.is_none() {
            state.divergence = divergence;
        }
    }
}

impl Middleware for TapeReplayer {
    fn on_reply(&self, call: ReplyCall, next: ReplyNext) -> EventStream {
        let reply = {
            let mut state = self.lock();
            state.replies += 1;
            state.replies - 1
        };
        let recorded = self
            .tape
            .entries
            .iter()
            .filter(|e| matches!(e, TapeEntry::Input { .. }))
            .nth(reply);
        self.check(Step::Input(reply), recorded, &input_entry(&call.input));
        let replayer = self.clone();
        Box::pin(next.run(call).map(move |event| {
            let n = {
                let mut state = replayer.lock();
                state.events += 1;
                state.events - 1
            };
            let recorded = replayer.tape.events().nth(n);
            replayer.check(Step::Event(n), recorded, &event);
            event
        }))
    }

    fn on_model_call<'a>(
        &'a self,
        call: ModelCall<'a>,
        _next: ModelNext<'a>,
    ) -> BoxFuture<'a, Result<ChatStream, ModelError>> {
        let n = {
            let mut state = self.lock();
            state.model_calls += 1;
            state.model_calls - 1
        };
        let actual = json!({"messages": call.messages, "tools": call.tools});
        let recorded = self
            .tape
            .request(n)
            .map(|(messages, tools)| json!({"messages": messages, "tools": tools}));
        self.check(Step::ModelRequest(n), recorded.as_ref(), &actual);
        let response = self.tape.response(n).map(|(chunks, error)| {
            let mut items: Vec<Result<_, ModelError>> = chunks
                .iter()
                .map(|chunk| Ok(self.localised(chunk.clone())))
                .collect();
            if let Some(message) = error {
                items.push(Err(ModelError::InvalidRequest {
                    message: format!("(recorded) {message}"),
                }));
            }
            items
        });
        Box::pin(async move {
            match response {
                Some(items) => Ok(futures_util::stream::iter(items).boxed()),
                None => Err(ModelError::InvalidRequest {
                    message: format!("the tape has no model call {n}"),
                }),
            }
        })
    }

    fn on_acting<'a>(
        &'a self,
        call: ActingCall,
        next: ActingNext<'a>,
    ) -> BoxFuture<'a, ToolStream> {
        let id = call.call.id.to_string();
        let recorded = self.tape.tool_result(&id);
        let expected = recorded.map(|(name, input, _)| json!({"name": name, "input": input}));
        let actual = json!({"name": call.call.name, "input": call.input});
        self.check(Step::ToolCall(id.clone()), expected.as_ref(), &actual);
        if self.live_tools {
            let expected = recorded.map(|(_, _, chunks)| json!({"chunks": chunks}));
            let replayer = self.clone();
            return Box::pin(async move {
                let stream = next.run(call).await;
                tapped(stream, move |chunks| {
                    let actual = json!({"chunks": chunks});
                    replayer.check(Step::ToolCall(id), expected.as_ref(), &actual);
                })
            });
        }
        let chunks = match recorded {
            Some((_, _, chunks)) => chunks.iter().map(|c| self.localised(c.clone())).collect(),
            None => vec![ToolChunk::error(format!(
                "the tape has no result of tool call {id}"
            ))],
        };
        Box::pin(async move { futures_util::stream::iter(chunks).boxed() })
    }
}
