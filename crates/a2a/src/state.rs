//! The state of a remote conversation.

use oxiscope_message::stamp;
use serde::{Deserialize, Serialize};

use crate::wire::TaskState;

/// Everything worth persisting about a remote conversation: save it, and
/// pass it to [`A2AAgentBuilder::state`](crate::A2AAgentBuilder::state) to
/// resume the same conversation later.
///
/// - `context_id`: the remote conversation; every reply carries it, so the
///   remote side keeps its context (the equivalent of a session id).
/// - `task_id`: kept only while the remote task waits for the user
///   (`input-required` / `auth-required`), so the next message continues
///   it — or after a stream that was cut while the task ran, so the next
///   reply can check on it first.
/// - `session_id`: local only; it groups the events this adapter emits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct A2AAgentState {
    /// The local session id of the emitted events.
    #[serde(default = "stamp::new_id")]
    pub session_id: String,
    /// The remote conversation, once the remote side named one.
    #[serde(default)]
    pub context_id: Option<String>,
    /// The remote task the next message continues (see above).
    #[serde(default)]
    pub task_id: Option<String>,
    /// The last known state of `task_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_state: Option<TaskState>,
}

impl Default for A2AAgentState {
    fn default() -> Self {
        Self {
            session_id: stamp::new_id(),
            context_id: None,
            task_id: None,
            task_state: None,
        }
    }
}

impl A2AAgentState {
    /// A fresh state that continues the remote conversation `context_id`.
    pub fn with_context(context_id: impl Into<String>) -> Self {
        Self {
            context_id: Some(context_id.into()),
            ..Self::default()
        }
    }

    /// Records a task's state: a finished task is forgotten.
    pub(crate) fn track(&mut self, task_id: Option<String>, state: Option<TaskState>) {
        match state {
            Some(s) if s.is_terminal() => {
                self.task_id = None;
                self.task_state = None;
            }
            _ => {
                self.task_id = task_id;
                self.task_state = if self.task_id.is_some() { state } else { None };
            }
        }
    }
}
