//! What a channel record's `data` holds, parsed once: the platform config,
//! the routing and the settings of the sessions it opens.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::routing::Routing;

/// Settings for the sessions a channel opens (AgentScope's
/// `SessionSettings`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionSettings {
    /// The model config of every session (a `ChatModelConfig`).
    pub chat_model_config: Map<String, Value>,
    /// The fallback model config.
    #[serde(default)]
    pub fallback_chat_model_config: Option<Map<String, Value>>,
    /// The permission mode the sessions start in.
    #[serde(default = "default_mode")]
    pub permission_mode: String,
}

fn default_mode() -> String {
    "default".into()
}

/// The switches every platform's config has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommonConfig {
    /// In groups, answer only messages that mention the bot.
    pub only_at_reply: bool,
    /// Include the model's reasoning in replies.
    pub show_thinking: bool,
    /// Include tool calls in replies.
    pub show_tool_process: bool,
}

impl CommonConfig {
    /// From a platform config (AgentScope's defaults for missing keys).
    #[must_use]
    pub fn of(config: &Map<String, Value>) -> Self {
        let flag =
            |key: &str, default: bool| config.get(key).and_then(Value::as_bool).unwrap_or(default);
        Self {
            only_at_reply: flag("only_at_reply", true),
            show_thinking: flag("show_thinking", false),
            show_tool_process: flag("show_tool_process", false),
        }
    }
}

/// A channel record's `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelData {
    /// Non-secret platform options.
    #[serde(default)]
    pub platform_config: Map<String, Value>,
    /// The routing rules.
    pub routing: Routing,
    /// The sessions' settings.
    pub session: SessionSettings,
}

impl ChannelData {
    /// Reads a stored document.
    ///
    /// # Errors
    /// [`Error::Invalid`] when it is not a channel's data.
    pub fn from_value(value: &Value) -> Result<Self> {
        serde_json::from_value(value.clone())
            .map_err(|e| Error::Invalid(format!("a channel's data: {e}")))
    }

    /// As stored.
    ///
    /// # Errors
    /// [`Error::Invalid`] when it cannot be written (never for parsed data).
    pub fn to_value(&self) -> Result<Value> {
        serde_json::to_value(self).map_err(|e| Error::Invalid(e.to_string()))
    }

    /// The common switches of its platform config.
    #[must_use]
    pub fn common(&self) -> CommonConfig {
        CommonConfig::of(&self.platform_config)
    }
}
