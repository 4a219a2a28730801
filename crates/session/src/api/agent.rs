//! `/agent/` bodies.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod schema;

/// The default system prompt of a new agent.
pub(crate) fn default_system_prompt() -> String {
    "You're a helpful assistant.".to_owned()
}

/// An agent's chat config: the context, reasoning-acting and invitation
/// sections (each a free-form object), plus any other section kept as is.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct AgentChatConfig {
    /// Context compression settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_config: Option<Map<String, Value>>,
    /// Reasoning-acting loop limits (`max_iters`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub react_config: Option<Map<String, Value>>,
    /// Whether other agents may invite this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invite_config: Option<Map<String, Value>>,
    /// Other sections, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AgentChatConfig {
    /// The config as a JSON object.
    #[must_use]
    pub fn into_map(self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }
}

/// `POST /agent/`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CreateAgentRequest {
    /// The agent's name.
    pub name: String,
    /// The system prompt.
    #[serde(default = "default_system_prompt")]
    pub system_prompt: String,
    /// `context_config`, `react_config`, `invite_config`.
    #[serde(default)]
    pub chat_config: Option<AgentChatConfig>,
    /// Deprecated top-level copy of `chat_config.context_config`.
    #[serde(default)]
    pub context_config: Option<Map<String, Value>>,
    /// Deprecated top-level copy of `chat_config.react_config`.
    #[serde(default)]
    pub react_config: Option<Map<String, Value>>,
    /// Deprecated top-level copy of `chat_config.invite_config`.
    #[serde(default)]
    pub invite_config: Option<Map<String, Value>>,
    /// Oxiscope extension: the permission mode of the agent's sessions
    /// (`default` when unset).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub permission_mode: Option<oxiscope_permission::PermissionMode>,
}

/// `PATCH /agent/{agent_id}`: only the fields given change.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct UpdateAgentRequest {
    /// A new name.
    #[serde(default)]
    pub name: Option<String>,
    /// A new system prompt.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// A new chat config.
    #[serde(default)]
    pub chat_config: Option<AgentChatConfig>,
    /// Deprecated.
    #[serde(default)]
    pub context_config: Option<Map<String, Value>>,
    /// Deprecated.
    #[serde(default)]
    pub react_config: Option<Map<String, Value>>,
    /// Deprecated.
    #[serde(default)]
    pub invite_config: Option<Map<String, Value>>,
    /// Oxiscope extension: a new permission mode.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub permission_mode: Option<oxiscope_permission::PermissionMode>,
}

/// `POST /agent/` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CreateAgentResponse {
    /// The new agent's id.
    pub agent_id: String,
}

/// An agent as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgentView {
    /// The agent id.
    pub id: String,
    /// Last change.
    pub updated_at: String,
    /// Creation.
    pub created_at: String,
    /// The owner.
    pub user_id: String,
    /// `user` (team agents are not supported yet).
    pub source: String,
    /// The agent data (`name`, `system_prompt`, `chat_config`).
    pub data: Map<String, Value>,
    /// Whether the caller may edit it.
    pub editable: bool,
}

/// `GET /agent/` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ListAgentsResponse {
    /// The caller's agents.
    pub agents: Vec<AgentView>,
    /// How many.
    pub total: usize,
}
