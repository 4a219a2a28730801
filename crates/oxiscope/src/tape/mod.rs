//! Tapes: a run recorded as JSON lines, replayed offline and compared.
//!
//! A [`TapeRecorder`] is a middleware: added to an agent, it records every
//! reply's input, every model request and the response it got, every tool
//! call with its result, and every event the consumer saw. [`Tape::to_jsonl`]
//! writes them one JSON object a line, with secrets redacted (the values
//! given to [`TapeRecorder::with_secret`], and anything shaped like an API
//! key or a bearer token).
//!
//! A [`TapeReplayer`] is the middleware that plays a tape back: the model
//! calls are answered from the tape (the agent's own model is never
//! called), the tool calls too (no tool runs), and what the agent does is
//! compared with what was recorded, step by step. The first place where the
//! run differs — a model request, a tool call, an event — is reported as a
//! [`Divergence`] with both sides. [`diff`] compares two tapes the same way;
//! [`diff_live`] runs a tape's inputs again on a live agent and compares
//! the new run with the tape by its outcomes ([`diff_outcomes`]).
//!
//! Each kind of entry forms its own sequence (model calls in order, events
//! in order, tool results by call id): the order between kinds depends on
//! scheduling, the order within one does not. Ids and timestamps, which
//! every run draws anew, and the current time the agent tells the model are
//! left out of comparisons.

mod diff;
mod normalize;
mod record;
mod replay;
mod stub;

use std::path::Path;

use oxiscope_message::{AgentEvent, Msg};
use oxiscope_model::{ChatResponse, ToolSchema};
use oxiscope_tool::ToolChunk;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use diff::{Divergence, Step, diff, diff_live, diff_outcomes};
pub use record::TapeRecorder;
pub use replay::{ReplayReport, TapeReplayer};
pub use stub::{live_agent, offline_model, replay_agent};

/// One line of a tape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TapeEntry {
    /// What a reply started from: new messages, or the event that resumed
    /// or interrupted a parked reply (neither: a reply over the context).
    Input {
        /// The new messages.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        messages: Vec<Msg>,
        /// The confirmation, external results or interrupt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event: Option<AgentEvent>,
    },
    /// Model call number `call` was asked this.
    ModelRequest {
        /// The model call's number, from 0.
        call: usize,
        /// The messages, system prompt first.
        messages: Vec<Msg>,
        /// The tools offered.
        tools: Vec<ToolSchema>,
    },
    /// Model call number `call` answered this.
    ModelResponse {
        /// The model call's number.
        call: usize,
        /// The streamed chunks, the last one accumulated.
        chunks: Vec<ChatResponse>,
        /// The error that ended the call, if one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A tool call and what it streamed.
    ToolResult {
        /// The call's id (the model's).
        call_id: String,
        /// The tool's name.
        name: String,
        /// The prepared input.
        input: Value,
        /// What the tool streamed.
        chunks: Vec<ToolChunk>,
    },
    /// An event the consumer saw.
    Event {
        /// The event.
        event: AgentEvent,
    },
}

/// Why a tape could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TapeError {
    /// A line is not a tape entry.
    #[error("line {line} of the tape is not a tape entry: {source}")]
    Line {
        /// The line's number, from 1.
        line: usize,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// The file could not be read or written.
    #[error("the tape file: {0}")]
    Io(#[from] std::io::Error),
}

/// A recorded run: its entries, in the order they were recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tape {
    /// The entries.
    pub entries: Vec<TapeEntry>,
}

impl Tape {
    /// The tape as JSON lines, one entry a line (secrets are redacted when
    /// recording, see [`TapeRecorder`]).
    #[must_use]
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for entry in &self.entries {
            // A tape entry always serialises: string keys, no NaN (the
            // floats are model latencies, finite).
            if let Ok(line) = serde_json::to_string(entry) {
                out.push_str(&line);
                out.push('\n');
            }
        }
        out
    }

    /// Reads JSON lines; blank lines are skipped.
    ///
    /// # Errors
    /// [`TapeError::Line`] naming the first line that is not an entry.
    pub fn from_jsonl(text: &str) -> Result<Self, TapeError> {
        let mut entries = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let entry = serde_json::from_str(line).map_err(|source| TapeError::Line {
                line: index + 1,
                source,
            })?;
            entries.push(entry);
        }
        Ok(Self { entries })
    }

    /// Reads a tape file.
    ///
    /// # Errors
    /// [`TapeError`]: the file cannot be read, or a line is not an entry.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, TapeError> {
        Self::from_jsonl(&std::fs::read_to_string(path)?)
    }

    /// Writes the tape to a file.
    ///
    /// # Errors
    /// [`TapeError::Io`] when the file cannot be written.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), TapeError> {
        Ok(std::fs::write(path, self.to_jsonl())?)
    }

    /// The recorded inputs, in order.
    pub fn inputs(&self) -> impl Iterator<Item = (&[Msg], Option<&AgentEvent>)> {
        self.entries.iter().filter_map(|e| match e {
            TapeEntry::Input { messages, event } => Some((messages.as_slice(), event.as_ref())),
            _ => None,
        })
    }

    /// The recorded events, in order.
    pub fn events(&self) -> impl Iterator<Item = &AgentEvent> {
        self.entries.iter().filter_map(|e| match e {
            TapeEntry::Event { event } => Some(event),
            _ => None,
        })
    }

    /// The request of model call `call`.
    fn request(&self, call: usize) -> Option<(&[Msg], &[ToolSchema])> {
        self.entries.iter().find_map(|e| match e {
            TapeEntry::ModelRequest {
                call: n,
                messages,
                tools,
            } if *n == call => Some((messages.as_slice(), tools.as_slice())),
            _ => None,
        })
    }

    /// The response of model call `call`.
    fn response(&self, call: usize) -> Option<(&[ChatResponse], Option<&str>)> {
        self.entries.iter().find_map(|e| match e {
            TapeEntry::ModelResponse {
                call: n,
                chunks,
                error,
            } if *n == call => Some((chunks.as_slice(), error.as_deref())),
            _ => None,
        })
    }

    /// The recorded result of tool call `call_id`.
    fn tool_result(&self, call_id: &str) -> Option<(&str, &Value, &[ToolChunk])> {
        self.entries.iter().find_map(|e| match e {
            TapeEntry::ToolResult {
                call_id: id,
                name,
                input,
                chunks,
            } if id == call_id => Some((name.as_str(), input, chunks.as_slice())),
            _ => None,
        })
    }

    /// How many model calls were recorded.
    #[must_use]
    pub fn model_calls(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e, TapeEntry::ModelRequest { .. }))
            .count()
    }
}

#[cfg(test)]
#[path = "tape_tests.rs"]
mod tests;
