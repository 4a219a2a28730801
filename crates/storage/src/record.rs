//! The records the service keeps. Documents the API shapes freely (agent
//! data, session config, agent state, messages) are kept as JSON values so
//! that fields added by newer versions survive a round trip.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Timestamps the way AgentScope writes them: naive local time, ISO 8601,
/// microseconds.
#[must_use]
pub fn now() -> String {
    chrono::Local::now()
        .naive_local()
        .format("%Y-%m-%dT%H:%M:%S%.6f")
        .to_string()
}

/// A fresh record id: 32 lowercase hex digits.
#[must_use]
pub fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// An agent definition owned by a user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRecord {
    /// The agent id.
    pub id: String,
    /// The owner.
    pub user_id: String,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
    /// The agent data (`name`, `system_prompt`, `chat_config`, ...).
    pub data: Value,
}

/// A provider credential owned by a user; the secret-bearing document is
/// sealed (encrypted) by the caller before it reaches the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CredentialRecord {
    /// The credential id.
    pub id: String,
    /// The owner.
    pub user_id: String,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
    /// The encrypted credential document.
    pub sealed: String,
}

/// A chat session: its settings and the agent state it continues from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The session id.
    pub id: String,
    /// The owner.
    pub user_id: String,
    /// The agent it talks to.
    pub agent_id: String,
    /// The workspace it works in.
    pub workspace_id: String,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
    /// The session config (`name`, model configs, `permission_mode`, ...).
    pub config: Value,
    /// The agent state (`AgentState` JSON).
    pub state: Value,
    /// Bumped by every state write; see [`crate::Storage::commit_reply`].
    pub revision: i64,
}

/// A message stored for a session, in arrival order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredMessage {
    /// The order of arrival.
    pub seq: i64,
    /// The message id.
    pub id: String,
    /// The message JSON.
    pub msg: Value,
}

/// One page of a session's messages, newest first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessagePage {
    /// The messages, newest first.
    pub messages: Vec<StoredMessage>,
    /// Whether older messages exist.
    pub has_more: bool,
}

/// A scheduled agent run owned by a user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduleRecord {
    /// The schedule id.
    pub id: String,
    /// The owner.
    pub user_id: String,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
    /// The schedule document.
    pub data: Value,
}

/// An API key, known only by its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKeyRecord {
    /// The hex SHA-256 of the key.
    pub hash: String,
    /// The user the key authenticates.
    pub user_id: String,
    /// A note for operators.
    pub label: String,
    /// When it was created.
    pub created_at: String,
}
