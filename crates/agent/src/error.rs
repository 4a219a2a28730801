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
    /// A bug: the loop produced an inconsistent state.
    #[error("internal error: {0}")]
    Internal(String),
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
            Self::Internal(_) => ErrorInfo::new(ErrorType::Internal, self.to_string()),
        }
    }
}
