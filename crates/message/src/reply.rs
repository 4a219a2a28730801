//! Small shared types of a reply: token usage, finish reasons, error info.

use serde::{Deserialize, Serialize};

/// Tokens spent by the model calls of one message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    #[serde(default)]
    pub cache_input_tokens: u64,
    /// Prompt tokens written into the provider's cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
}

impl Usage {
    /// Adds another usage to this one, field by field (saturating).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_input_tokens = self
            .cache_input_tokens
            .saturating_add(other.cache_input_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .saturating_add(other.cache_creation_input_tokens);
    }
}

/// Why a reply ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyFinishedReason {
    /// The agent gave its final answer.
    #[default]
    Completed,
    /// The user or the caller interrupted the reply.
    Interrupted,
    /// The reasoning-acting loop hit `max_iters`.
    ExceedMaxIters,
    /// The reply failed; the message's `error` says why.
    Error,
}

/// How a reply's event stream ended: what the last event of a reply
/// says, the one fact the service's run loop, its usage and metrics, the
/// console and the goal pipeline each need ([`AgentEvent::reply_outcome`]
/// is the one place that tells it).
///
/// [`AgentEvent::reply_outcome`]: crate::AgentEvent::reply_outcome
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplyOutcome {
    /// `REPLY_END`, for this reason.
    Finished(ReplyFinishedReason),
    /// Parked on the user's confirmation (`REQUIRE_USER_CONFIRM`); the
    /// reply resumes with their answer.
    AwaitingConfirmation,
    /// Parked on results of calls run elsewhere
    /// (`REQUIRE_EXTERNAL_EXECUTION`).
    AwaitingExternal,
}

impl ReplyOutcome {
    /// Whether the reply parked and can resume (it did not end).
    #[must_use]
    pub fn is_parked(self) -> bool {
        !matches!(self, Self::Finished(_))
    }

    /// Whether the reply gave its final answer.
    #[must_use]
    pub fn is_completed(self) -> bool {
        self == Self::Finished(ReplyFinishedReason::Completed)
    }
}

/// Why one model call ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishedReason {
    /// The model finished on its own.
    #[default]
    Completed,
    /// The call was cancelled before the model finished.
    Interrupted,
}

/// The class of an error that ended a reply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// Missing or invalid credentials.
    Authentication,
    /// The credentials lack a permission.
    Permission,
    /// The provider throttled the request.
    RateLimit,
    /// The request was malformed or unsupported.
    InvalidRequest,
    /// The provider failed.
    Upstream,
    /// The network failed.
    Connection,
    /// A bug or unexpected state in the framework.
    Internal,
    /// The agent or service is misconfigured.
    Setup,
    /// Anything else.
    #[default]
    Unknown,
}

/// What went wrong in a reply that ended with [`ReplyFinishedReason::Error`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// The class of the error.
    #[serde(rename = "type", default)]
    pub kind: ErrorType,
    /// A human-readable explanation.
    pub message: String,
}

impl ErrorInfo {
    /// An error of the given class.
    pub fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}
