//! `POST /chat/` bodies.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `POST /chat/`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ChatRequest {
    /// The agent.
    pub agent_id: String,
    /// The session.
    pub session_id: String,
    /// A `Msg`, a list of `Msg`, a `UserConfirmResultEvent`, an
    /// `ExternalExecutionResultEvent`, or `null` (continue).
    pub input: Option<Value>,
}

/// `POST /chat/` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChatTriggerResponse {
    /// Always `started`.
    pub status: String,
    /// The session.
    pub session_id: String,
}
