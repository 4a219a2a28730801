//! The knobs of a Responses API call, as the model card's parameter schema
//! names them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Parameters of [`OpenAiResponseModel`](super::OpenAiResponseModel), read
/// from the same JSON as the `openai_response` card's `parameter_schema`
/// describes. Unknown keys are ignored.
///
/// ```
/// use oxiscope_providers::openai_response::OpenAiResponseParameters;
///
/// let params = OpenAiResponseParameters::from_json(&serde_json::json!({
///     "max_tokens": 2048,
///     "thinking_enable": true,
///     "reasoning_effort": "high",
/// }))?;
/// assert!(params.reasoning_requested());
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct OpenAiResponseParameters {
    /// Most tokens in the reply, sent as `max_output_tokens`.
    pub max_tokens: Option<u64>,
    /// Asks a reasoning model to reason, with readable summaries.
    pub thinking_enable: bool,
    /// `none`, `minimal`, `low`, `medium`, `high` or `xhigh`, sent as
    /// `reasoning.effort` (it asks for reasoning on its own too).
    pub reasoning_effort: Option<String>,
    /// `auto` (the default when reasoning), `concise`, `detailed`, or
    /// `none` for no summaries (organisations not verified for them).
    pub reasoning_summary: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
}

impl OpenAiResponseParameters {
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

    /// Turns reasoning on.
    #[must_use]
    pub fn with_thinking(mut self, enable: bool) -> Self {
        self.thinking_enable = enable;
        self
    }

    /// Sets the reasoning effort.
    #[must_use]
    pub fn with_reasoning_effort(mut self, effort: impl Into<String>) -> Self {
        self.reasoning_effort = Some(effort.into());
        self
    }

    /// Sets the reasoning summary mode (`none` turns summaries off).
    #[must_use]
    pub fn with_reasoning_summary(mut self, summary: impl Into<String>) -> Self {
        self.reasoning_summary = Some(summary.into());
        self
    }

    /// Sets the temperature.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Whether the call asks for reasoning (`thinking_enable`, or an effort).
    #[must_use]
    pub fn reasoning_requested(&self) -> bool {
        self.thinking_enable || self.reasoning_effort.is_some()
    }

    /// The request's `reasoning` object, when reasoning is asked for.
    pub(crate) fn reasoning(&self) -> Option<Value> {
        if !self.reasoning_requested() {
            return None;
        }
        let mut reasoning = Map::new();
        if let Some(effort) = &self.reasoning_effort {
            reasoning.insert("effort".into(), effort.as_str().into());
        }
        match self.reasoning_summary.as_deref() {
            Some("none" | "") => {}
            Some(summary) => {
                reasoning.insert("summary".into(), summary.into());
            }
            None => {
                reasoning.insert("summary".into(), "auto".into());
            }
        }
        Some(Value::Object(reasoning))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn reasoning_follows_thinking_or_effort_and_the_summary_mode() {
        let off = OpenAiResponseParameters::default();
        assert_eq!(off.reasoning(), None);
        let on = OpenAiResponseParameters::default().with_thinking(true);
        assert_eq!(on.reasoning(), Some(json!({"summary": "auto"})));
        let effort = OpenAiResponseParameters::default()
            .with_reasoning_effort("low")
            .with_reasoning_summary("none");
        assert_eq!(effort.reasoning(), Some(json!({"effort": "low"})));
    }

    #[test]
    fn wrong_types_are_refused_and_unknown_keys_ignored() {
        assert!(OpenAiResponseParameters::from_json(&json!({"max_tokens": "many"})).is_err());
        assert!(OpenAiResponseParameters::from_json(&json!({"thinking_enable": 1})).is_err());
        let p =
            OpenAiResponseParameters::from_json(&json!({"top_k": 3, "temperature": 0.5})).unwrap();
        assert_eq!(p.temperature, Some(0.5));
    }
}
