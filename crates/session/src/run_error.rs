//! Why a chat run failed outside the agent (the agent's own failures end
//! its reply with an error `REPLY_END` instead).

use oxiscope_agent::AgentError;

/// A failure of a chat run's plumbing: storage, message bus, serialising,
/// or the agent refusing what the run gave it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    /// The storage or the message bus failed.
    #[error(transparent)]
    Storage(#[from] oxiscope_storage::Error),
    /// An event, message or state could not be serialised.
    #[error("serialising failed: {0}")]
    Json(#[from] serde_json::Error),
    /// The agent refused an input of the run.
    #[error(transparent)]
    Agent(#[from] AgentError),
}
