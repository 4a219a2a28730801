//! The knobs of a MiniMax call, as the model card's parameter schema names
//! them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::anthropic::{AnthropicParameters, ThinkingMode};

/// Parameters of [`MiniMaxChatModel`](super::MiniMaxChatModel), read from
/// the same JSON as the model card's `parameter_schema` describes
/// (`max_tokens`, `thinking_enable`). Unknown keys are ignored.
///
/// ```
/// use oxiscope_providers::minimax::MiniMaxParameters;
///
/// let params = MiniMaxParameters::from_json(&serde_json::json!({"thinking_enable": true}))?;
/// assert!(params.thinking_enable);
/// assert_eq!(params.max_tokens, None);
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct MiniMaxParameters {
    /// Most tokens in the reply; the card's output size or 4096 when unset.
    pub max_tokens: Option<u64>,
    /// Turns adaptive thinking on (MiniMax takes no thinking budget).
    pub thinking_enable: bool,
}

impl MiniMaxParameters {
    /// Reads parameters from JSON (for example a stored agent's model config).
    ///
    /// # Errors
    /// A message when a known key has the wrong type or value (`max_tokens`
    /// must be a positive integer).
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let params = Self::deserialize(value).map_err(|e| e.to_string())?;
        if params.max_tokens == Some(0) {
            return Err("max_tokens must be greater than 0".to_owned());
        }
        Ok(params)
    }

    /// Sets `max_tokens`.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Turns adaptive thinking on or off.
    #[must_use]
    pub fn with_thinking(mut self, enable: bool) -> Self {
        self.thinking_enable = enable;
        self
    }

    /// The Anthropic parameters MiniMax understands: `max_tokens` (else
    /// `default_max_tokens`) and `{"type": "adaptive"}` thinking when on;
    /// no budget, no `output_config`.
    pub(crate) fn anthropic(&self, default_max_tokens: Option<u64>) -> AnthropicParameters {
        AnthropicParameters {
            max_tokens: self.max_tokens.or(default_max_tokens),
            thinking_mode: self.thinking_enable.then_some(ThinkingMode::Adaptive),
            ..AnthropicParameters::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn thinking_is_adaptive_without_a_budget_and_off_by_default() {
        let on = MiniMaxParameters::from_json(&json!({"thinking_enable": true})).unwrap();
        assert_eq!(
            on.anthropic(None).thinking(),
            Some(json!({"type": "adaptive"}))
        );
        let off = MiniMaxParameters::from_json(&json!({})).unwrap();
        assert_eq!(off.anthropic(None).thinking(), None);
        assert_eq!(off.anthropic(None).reasoning_effort, None);
    }

    #[test]
    fn max_tokens_falls_back_to_the_default_and_must_be_positive() {
        let params = MiniMaxParameters::from_json(&json!({"max_tokens": 10, "other": 1})).unwrap();
        assert_eq!(params.anthropic(Some(99)).max_tokens, Some(10));
        assert_eq!(
            MiniMaxParameters::default().anthropic(Some(99)).max_tokens,
            Some(99)
        );
        assert!(MiniMaxParameters::from_json(&json!({"max_tokens": 0})).is_err());
        assert!(MiniMaxParameters::from_json(&json!({"max_tokens": -1})).is_err());
        assert!(MiniMaxParameters::from_json(&json!({"thinking_enable": "yes"})).is_err());
    }
}
