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
    /// When the schedule may next be due, as [`check_time`] writes it (the
    /// scheduler reads only schedules at or past theirs, see
    /// [`crate::Storage::list_due_schedules`]); `None`: unknown, looked at
    /// on every tick.
    #[serde(default)]
    pub next_check_at: Option<String>,
}

/// A time as `next_check_at` holds it: UTC with microseconds, fixed width,
/// so text order is time order.
#[must_use]
pub fn check_time(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
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

/// Where an installed MCP server or skill came from and what it says it
/// is: the card's metadata at install time.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LibraryCard {
    /// The hub it came from (`None` when added by hand).
    pub hub_id: Option<String>,
    /// The card's id on that hub.
    pub card_id: Option<String>,
    /// The card version installed.
    pub version: Option<String>,
    /// The user-facing name.
    pub display_name: Option<String>,
    /// The description.
    pub description: String,
    /// The tags.
    pub tags: Vec<String>,
    /// Who published it.
    pub author: Option<String>,
    /// Its icon.
    pub icon_url: Option<String>,
    /// Its page on the hub's website.
    pub url: Option<String>,
}

/// An MCP server in a user's library. The rendered config carries the
/// answers the user gave at install time (API keys included), so it is
/// sealed (encrypted) by the caller before it reaches the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpLibraryRecord {
    /// The record id.
    pub id: String,
    /// The owner.
    pub user_id: String,
    /// The server's name, unique for the owner.
    pub name: String,
    /// Where it came from.
    pub card: LibraryCard,
    /// Whether the client keeps one session.
    pub is_stateful: bool,
    /// Whether the owner has it turned on.
    pub enabled: bool,
    /// The encrypted config document.
    pub sealed: String,
    /// When it was installed.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}

/// A skill in a user's library: its metadata and where to fetch its files,
/// not the files themselves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillLibraryRecord {
    /// The record id.
    pub id: String,
    /// The owner.
    pub user_id: String,
    /// The skill's name, unique for the owner.
    pub name: String,
    /// Where it came from.
    pub card: LibraryCard,
    /// Where its files were at install time (a catalogue directory or an
    /// archive URL), for the record.
    pub source: Option<String>,
    /// The `SKILL.md` body at install time.
    pub markdown: String,
    /// Whether the owner has it turned on.
    pub enabled: bool,
    /// When it was installed.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}
