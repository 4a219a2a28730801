//! Errors of argument repair and of structured-output generation.

use std::fmt;

use crate::chat::{ChatUsage, ModelError};

/// One way a value breaks its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where, as a JSON pointer into the value (`/items/0/name`); empty for
    /// the value itself.
    pub path: String,
    /// What is wrong, e.g. `"abc" is not of type "integer"`.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "at the top level: {}", self.message)
        } else {
            write!(f, "at `{}`: {}", self.path, self.message)
        }
    }
}

/// Why raw arguments could not be turned into a value matching the schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RepairError {
    /// The text holds no JSON value, even after the lenient steps.
    #[error("the arguments are not valid JSON (line {line}, column {column}): {message}")]
    InvalidJson {
        /// The parser's message.
        message: String,
        /// The 1-based line of the error in the raw text.
        line: usize,
        /// The 1-based column of the error in the raw text.
        column: usize,
    },
    /// The JSON does not match the schema, even after coercion.
    #[error("the arguments do not match the schema: {}", join(violations))]
    SchemaMismatch {
        /// Every violation found (at least one).
        violations: Vec<Violation>,
    },
    /// The schema itself cannot be compiled.
    #[error("the JSON schema is invalid: {message}")]
    InvalidSchema {
        /// The compiler's message.
        message: String,
    },
}

fn join(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Why one structured-output attempt was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AttemptFailure {
    /// The model answered without calling the structured-output tool.
    #[error("the model did not call the `{tool}` tool")]
    NoToolCall {
        /// The tool it was asked to call.
        tool: String,
    },
    /// The tool was called with arguments that cannot be repaired.
    #[error("the `{tool}` arguments were rejected: {error}")]
    InvalidArguments {
        /// The tool name.
        tool: String,
        /// The raw arguments the model sent.
        raw: String,
        /// Why they were rejected.
        error: RepairError,
    },
}

/// Why [`generate_structured_output`](super::generate_structured_output)
/// produced no value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StructuredError {
    /// The schema cannot be compiled or is not an object schema.
    #[error("invalid structured-output schema: {message}")]
    InvalidSchema {
        /// What is wrong with it.
        message: String,
    },
    /// A model call failed (setup, or an error item mid-stream).
    #[error("the model call failed on attempt {attempt}: {error}")]
    Model {
        /// The attempt (1-based) whose call failed.
        attempt: usize,
        /// The model's error.
        error: ModelError,
        /// Usage of the attempts that completed before.
        usage: ChatUsage,
    },
    /// The cancellation token fired.
    #[error("structured output was interrupted on attempt {attempt}")]
    Interrupted {
        /// The attempt (1-based) that was running.
        attempt: usize,
        /// Usage reported so far, the interrupted call included.
        usage: ChatUsage,
    },
    /// Every attempt was rejected.
    #[error("no valid structured output after {attempts} attempts; last: {last}")]
    Exhausted {
        /// How many calls were made.
        attempts: usize,
        /// Why the last attempt was rejected.
        last: AttemptFailure,
        /// Usage of all attempts.
        usage: ChatUsage,
    },
}

impl StructuredError {
    /// The usage of the calls made before the failure (zero when none
    /// reported any).
    #[must_use]
    pub fn usage(&self) -> Option<&ChatUsage> {
        match self {
            Self::InvalidSchema { .. } => None,
            Self::Model { usage, .. }
            | Self::Interrupted { usage, .. }
            | Self::Exhausted { usage, .. } => Some(usage),
        }
    }
}
