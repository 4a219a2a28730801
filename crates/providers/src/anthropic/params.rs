//! The knobs of an Anthropic call, as the model card's parameter schema
//! names them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The default `max_tokens` when neither the parameters nor a model card
/// give one (the API requires it).
pub const DEFAULT_MAX_TOKENS: u64 = 4096;
/// The default thinking budget when thinking is on without one.
pub const DEFAULT_THINKING_BUDGET: u64 = 1024;

/// How Claude thinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingMode {
    /// The model decides how much to think.
    Adaptive,
    /// A fixed token budget.
    Enabled,
    /// No thinking.
    Disabled,
}

/// Whether reasoning comes back readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingDisplay {
    /// A readable summary.
    Summarized,
    /// Left out (only the signature comes back).
    Omitted,
}

/// Parameters of [`AnthropicChatModel`](super::AnthropicChatModel), read
/// from the same JSON as the model card's `parameter_schema` describes.
/// Unknown keys are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct AnthropicParameters {
    /// Most tokens in the reply; the card's output size or 4096 when unset.
    pub max_tokens: Option<u64>,
    /// Turns thinking on with a budget (when `thinking_mode` is unset).
    pub thinking_enable: bool,
    /// The thinking budget in tokens; 1024 when unset.
    pub thinking_budget: Option<u64>,
    /// How Claude thinks; wins over `thinking_enable`.
    pub thinking_mode: Option<ThinkingMode>,
    /// Whether reasoning comes back readable.
    pub thinking_display: Option<ThinkingDisplay>,
    /// `low`, `medium`, `high`, `xhigh` or `max`, sent as `output_config.effort`.
    pub reasoning_effort: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
}

impl AnthropicParameters {
    /// Reads parameters from JSON (for example a stored agent's model config).
    ///
    /// # Errors
    /// A message when a known key has the wrong type or value.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        Self::deserialize(value).map_err(|e| e.to_string())
    }

    /// Sets `max_tokens`.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Thinking with a fixed budget.
    #[must_use]
    pub fn with_thinking_budget(mut self, budget: u64) -> Self {
        self.thinking_mode = Some(ThinkingMode::Enabled);
        self.thinking_budget = Some(budget);
        self
    }

    /// Sets the thinking mode.
    #[must_use]
    pub fn with_thinking_mode(mut self, mode: ThinkingMode) -> Self {
        self.thinking_mode = Some(mode);
        self
    }

    /// Sets the thinking display.
    #[must_use]
    pub fn with_thinking_display(mut self, display: ThinkingDisplay) -> Self {
        self.thinking_display = Some(display);
        self
    }

    /// Sets the reasoning effort.
    #[must_use]
    pub fn with_reasoning_effort(mut self, effort: impl Into<String>) -> Self {
        self.reasoning_effort = Some(effort.into());
        self
    }

    /// Sets the temperature.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The request's `thinking` object, if any.
    pub(crate) fn thinking(&self) -> Option<Value> {
        let mode = self.thinking_mode.or(if self.thinking_enable {
            Some(ThinkingMode::Enabled)
        } else {
            None
        })?;
        let mut thinking = Map::new();
        match mode {
            ThinkingMode::Disabled => return Some(json!({"type": "disabled"})),
            ThinkingMode::Adaptive => {
                thinking.insert("type".into(), "adaptive".into());
            }
            ThinkingMode::Enabled => {
                thinking.insert("type".into(), "enabled".into());
                let budget = self.thinking_budget.unwrap_or(DEFAULT_THINKING_BUDGET);
                thinking.insert("budget_tokens".into(), budget.into());
            }
        }
        if let Some(display) = self.thinking_display {
            thinking.insert("display".into(), json!(display));
        }
        Some(Value::Object(thinking))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn thinking(params: &Value) -> Option<Value> {
        AnthropicParameters::from_json(params).unwrap().thinking()
    }

    #[test]
    fn the_card_parameters_map_to_the_thinking_object() {
        assert_eq!(thinking(&json!({})), None);
        assert_eq!(thinking(&json!({"thinking_enable": false})), None);
        assert_eq!(
            thinking(&json!({"thinking_enable": true})),
            Some(json!({"type": "enabled", "budget_tokens": 1024}))
        );
        assert_eq!(
            thinking(
                &json!({"thinking_enable": true, "thinking_budget": 3000, "thinking_display": "omitted"})
            ),
            Some(json!({"type": "enabled", "budget_tokens": 3000, "display": "omitted"}))
        );
        assert_eq!(
            thinking(&json!({"thinking_enable": true, "thinking_mode": "adaptive"})),
            Some(json!({"type": "adaptive"})),
            "the mode wins over the switch"
        );
        assert_eq!(
            thinking(&json!({"thinking_enable": true, "thinking_mode": "disabled"})),
            Some(json!({"type": "disabled"}))
        );
    }

    #[test]
    fn unknown_keys_are_ignored_and_wrong_types_rejected() {
        let params =
            AnthropicParameters::from_json(&json!({"max_tokens": 10, "novel": 1})).unwrap();
        assert_eq!(params.max_tokens, Some(10));
        assert!(AnthropicParameters::from_json(&json!({"thinking_mode": "sometimes"})).is_err());
        assert!(AnthropicParameters::from_json(&json!({"max_tokens": "many"})).is_err());
    }
}
