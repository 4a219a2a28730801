//! `/sessions/` bodies and queries.

use oxiscope_providers::ModelConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Which chat model a session uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChatModelConfig {
    /// The credential type, e.g. `openai_credential`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The credential to call it with.
    pub credential_id: String,
    /// The model name.
    pub model: String,
    /// The model class (`openai_chat`, ...); empty picks the type's first.
    #[serde(default)]
    pub model_class: String,
    /// Generation parameters.
    #[serde(default)]
    pub parameters: Map<String, Value>,
}

/// The model part, for [`oxiscope_providers::chat_model`]; the credential
/// fields stay behind.
impl From<&ChatModelConfig> for ModelConfig {
    fn from(config: &ChatModelConfig) -> Self {
        ModelConfig::new(config.model.clone())
            .with_model_class(config.model_class.clone())
            .with_parameters(config.parameters.clone())
    }
}

/// `POST /sessions/`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CreateSessionRequest {
    /// The agent.
    pub agent_id: String,
    /// The workspace; by default one per agent.
    #[serde(default)]
    pub workspace_id: Option<String>,
    /// A display name.
    #[serde(default)]
    pub name: Option<String>,
    /// The chat model.
    #[serde(default)]
    pub chat_model_config: Option<ChatModelConfig>,
    /// The model tried when the first fails.
    #[serde(default)]
    pub fallback_chat_model_config: Option<ChatModelConfig>,
    /// Kept, not used yet.
    #[serde(default)]
    pub tts_model_config: Option<Value>,
    /// Kept, not used yet.
    #[serde(default)]
    pub realtime_model_config: Option<Value>,
    /// Kept, not used yet.
    #[serde(default)]
    pub knowledge_config: Option<Value>,
    /// Oxiscope extension: the permission mode (else the agent's, else
    /// `default`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub permission_mode: Option<oxiscope_permission::PermissionMode>,
}

/// `POST /sessions/` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CreateSessionResponse {
    /// The (new or existing) session.
    pub session_id: String,
}

/// `PATCH /sessions/{id}`: only the fields given change.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct UpdateSessionRequest {
    /// A new display name.
    #[serde(default)]
    pub name: Option<String>,
    /// A new chat model.
    #[serde(default)]
    pub chat_model_config: Option<ChatModelConfig>,
    /// A new fallback model.
    #[serde(default)]
    pub fallback_chat_model_config: Option<ChatModelConfig>,
    /// Kept, not used yet.
    #[serde(default)]
    pub tts_model_config: Option<Value>,
    /// Kept, not used yet.
    #[serde(default)]
    pub realtime_model_config: Option<Value>,
    /// Kept, not used yet.
    #[serde(default)]
    pub knowledge_config: Option<Value>,
    /// A new permission mode, written into the session's state.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub permission_mode: Option<oxiscope_permission::PermissionMode>,
    /// A new working directory.
    #[serde(default)]
    pub cwd: Option<String>,
}

/// Where a session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// A run is active.
    Running,
    /// Nothing is running or parked.
    Idle,
    /// The reply waits for a confirmation.
    AwaitingPermission,
    /// The reply waits for external tool results.
    AwaitingExternalResult,
}

/// A session as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SessionRecordView {
    /// The session id.
    pub id: String,
    /// Last change.
    pub updated_at: String,
    /// Creation.
    pub created_at: String,
    /// The owner.
    pub user_id: String,
    /// The agent.
    pub agent_id: String,
    /// Who started it: `{"type": "user"}`.
    pub origin: Map<String, Value>,
    /// The team the session leads or works in (`null` when none).
    pub team_id: Option<String>,
    /// `workspace_id`, `name`, `naming`, `cwd` and model configs.
    pub config: Map<String, Value>,
    /// The agent state (`AgentState`).
    pub state: Map<String, Value>,
}

/// A session in a list: the record, its status and team.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionView {
    /// The session record.
    pub session: SessionRecordView,
    /// Whether a run is active.
    pub is_running: bool,
    /// Its status.
    pub status: SessionStatus,
    /// The team (`TeamDetailResponse`: the team record, the leader's
    /// agent, the members with their sessions) when `session.team_id` is
    /// set.
    pub team: Option<Value>,
    /// Oxiscope extension (AgentScope has no usage field): the tokens and
    /// model calls of the session's committed replies.
    pub usage: crate::api::UsageView,
}

/// `GET /sessions/` answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListSessionsResponse {
    /// The agent's sessions of the caller.
    pub sessions: Vec<SessionView>,
    /// How many.
    pub total: usize,
}

/// `GET /sessions/{id}/status` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SessionStatusResponse {
    /// The session.
    pub session_id: String,
    /// Its status.
    pub status: SessionStatus,
}

/// `POST /sessions/{id}/interrupt` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct InterruptSessionResponse {
    /// The session.
    pub session_id: String,
}

/// `GET /sessions/{id}/messages` answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListMessagesResponse {
    /// Messages, newest first.
    pub messages: Vec<Value>,
    /// Pass as `after` to the stream to continue behind these messages.
    pub event_cursor: Option<String>,
    /// Whether a run is active.
    pub is_running: bool,
    /// Whether older messages exist.
    pub has_more: bool,
}

/// `?agent_id=` of the session routes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AgentQuery {
    /// The session's agent.
    pub agent_id: String,
}

/// `GET /sessions/` query.
pub type SessionsQuery = AgentQuery;

/// `GET /sessions/{id}/messages` query.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct MessagesQuery {
    /// The session's agent.
    pub agent_id: String,
    /// Only messages older than this message id.
    #[serde(default)]
    pub before: Option<String>,
    /// Deprecated: messages to skip.
    #[serde(default)]
    pub offset: Option<u32>,
    /// Page size, 1 to 200.
    #[serde(default = "default_limit")]
    pub limit: u32,
}

fn default_limit() -> u32 {
    50
}

/// `GET /sessions/{id}/stream` query.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct StreamQuery {
    /// The session's agent.
    pub agent_id: String,
    /// Replay only events after this cursor.
    #[serde(default)]
    pub after: Option<String>,
}
