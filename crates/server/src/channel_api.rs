//! The `/channels` DTOs in AgentScope's wire names that are the edge's own
//! (the channel records and settings are `oxiscope_channel`'s types).

use oxiscope_channel::{Routing, SessionSettings};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::api::SessionRecordView;

/// `POST /channels/`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub(crate) struct CreateChannelRequest {
    /// Channel type id, e.g. `telegram`.
    pub(crate) channel_type: String,
    /// Optional display name.
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// Platform credentials. Omit when `credential_binding_id` supplies them.
    #[serde(default)]
    pub(crate) credentials: Map<String, Value>,
    /// Completed credential-binding session to take the credentials from.
    #[serde(default)]
    pub(crate) credential_binding_id: Option<String>,
    /// Non-secret platform options.
    #[serde(default)]
    pub(crate) platform_config: Map<String, Value>,
    /// Inbound routing rules.
    pub(crate) routing: Routing,
    /// Session/model settings.
    pub(crate) session: SessionSettings,
    /// Start it enabled.
    #[serde(default = "yes")]
    pub(crate) enabled: bool,
}

fn yes() -> bool {
    true
}

/// `POST /channels/bindings`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub(crate) struct StartCredentialBindingRequest {
    /// Channel type id.
    pub(crate) channel_type: String,
}

/// Result of an enable/disable action.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ChannelActionResponse {
    /// New lifecycle status, e.g. `enabled`.
    pub(crate) status: String,
}

/// Sessions a channel has spawned.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ChannelSessionsResponse {
    /// The sessions.
    pub(crate) sessions: Vec<SessionRecordView>,
    /// How many.
    pub(crate) total: usize,
}

/// A chat the bot can route to.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ChannelChatId {
    /// The platform's chat id.
    pub(crate) chat_id: String,
    /// Its name, or empty.
    pub(crate) name: String,
    /// `platform` or `recorded`.
    pub(crate) source: String,
}

/// Chats available for routing configuration.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ChannelChatIdsResponse {
    /// The chats, most recently seen first.
    pub(crate) chats: Vec<ChannelChatId>,
}

/// What a client may see of a credential-binding session (no type here
/// supports one, so none is ever open).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct BindingView {
    /// The session id.
    pub(crate) binding_id: String,
    /// `pending`, `authorized`, `failed` or `cancelled`.
    pub(crate) state: String,
    /// The URL to render as a QR code.
    pub(crate) verification_url: String,
    /// Why it failed.
    pub(crate) error: String,
    /// When to poll again.
    pub(crate) retry_after_secs: u64,
}
