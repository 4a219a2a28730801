//! Errors of the agent.

use oxiscope_message::{ErrorInfo, ErrorType};
use oxiscope_model::ModelError;

/// Why a reply could not start or had to end with an error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model call failed (after retries and the fallback model).
    #[error(transparent)]
    Model(#[from] ModelError),
    /// An input event names a reply that is not the parked one.
    #[error("the input event is for reply {got:?}, but the parked reply is {expected:?}")]
    ReplyMismatch {
        /// The parked reply's id (empty when nothing is parked).
        expected: String,
        /// The event's reply id.
        got: String,
    },
    /// A confirmation or external result arrived while nothing is parked.
    #[error("nothing is waiting for {0}: no reply is parked")]
    NothingParked(&'static str),
    /// The input cannot start a reply (e.g. a message whose role breaks the
    /// rules).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The reply ended with an error (what its `REPLY_END` carried).
    #[error("the reply failed: {}", .0.message)]
    Failed(ErrorInfo),
    /// The context could not be brought within the model's window.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// The agent's configuration cannot work.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The model wrote more into the reply than its [`ReplyLimits`]
    /// allow; the call was cut off there.
    ///
    /// [`ReplyLimits`]: crate::ReplyLimits
    #[error(
        "the model's reply exceeded the limit of {limit} bytes of {part} per reply; it was cut \
         off there"
    )]
    ReplyTooLarge {
        /// What exceeded its limit.
        part: ReplyPart,
        /// The limit, in bytes.
        limit: usize,
    },
    /// A bug: the loop produced an inconsistent state.
    #[error("internal error: {0}")]
    Internal(String),
}

/// A part of a reply that [`ReplyLimits`](crate::ReplyLimits) bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyPart {
    /// Text, thinking and inline data.
    Text,
    /// Tool-call arguments.
    ToolInput,
}

impl std::fmt::Display for ReplyPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Text => "text",
            Self::ToolInput => "tool-call arguments",
        })
    }
}

/// Why the context could not be compressed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ContextError {
    /// The system prompt and tool schemas alone exceed the compression
    /// threshold: no compression can help.
    #[error(
        "the system prompt and tool schemas take {tokens} tokens, above the compression \
         threshold of {threshold} tokens; shorten them or use a model with a larger context"
    )]
    SystemPromptTooLarge {
        /// Their tokens.
        tokens: usize,
        /// The threshold.
        threshold: usize,
    },
    /// Every summarisation attempt failed and truncation is switched off;
    /// the context was left as it was.
    #[error("the context summary failed after {attempts} attempts: {reason}")]
    SummaryFailed {
        /// Attempts made.
        attempts: usize,
        /// The last failure.
        reason: String,
        /// The tokens the failed attempts used.
        usage: Option<Box<oxiscope_model::ChatUsage>>,
    },
}

impl AgentError {
    /// The error as a reply's [`ErrorInfo`].
    #[must_use]
    pub fn to_error_info(&self) -> ErrorInfo {
        match self {
            Self::Model(e) => e.to_error_info(),
            Self::ReplyMismatch { .. } | Self::NothingParked(_) | Self::InvalidInput(_) => {
                ErrorInfo::new(ErrorType::InvalidRequest, self.to_string())
            }
            Self::Failed(info) => info.clone(),
            Self::ReplyTooLarge { .. } => ErrorInfo::new(ErrorType::Upstream, self.to_string()),
            Self::Config(_) => ErrorInfo::new(ErrorType::Setup, self.to_string()),
            Self::Context(_) | Self::Internal(_) => {
                ErrorInfo::new(ErrorType::Internal, self.to_string())
            }
        }
    }
}
