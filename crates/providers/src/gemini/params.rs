//! The knobs of a Gemini call, as the model card's parameter schema names
//! them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The thinking budget when thinking is on without one.
pub const DEFAULT_THINKING_BUDGET: u64 = 1024;

/// Parameters of [`GeminiChatModel`](super::GeminiChatModel), read from the
/// same JSON as the model card's `parameter_schema` describes. Unknown keys
/// are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct GeminiParameters {
    /// Most tokens in the reply (`maxOutputTokens`).
    pub max_tokens: Option<u64>,
    /// Asks for the model's thoughts (`includeThoughts`) with a budget.
    pub thinking_enable: bool,
    /// The thinking budget in tokens; 1024 when thinking is on without one.
    pub thinking_budget: Option<u64>,
    /// Sampling temperature (0 to 2).
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
}

impl GeminiParameters {
    /// Reads parameters from JSON (for example a stored agent's model
    /// config).
    ///
    /// # Errors
    /// A message when a known key has the wrong type or value.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let params = Self::deserialize(value).map_err(|e| e.to_string())?;
        if params.max_tokens == Some(0) {
            return Err("max_tokens must be greater than 0".to_owned());
        }
        if params.thinking_budget == Some(0) {
            return Err("thinking_budget must be greater than 0".to_owned());
        }
        if let Some(t) = params.temperature
            && !(0.0..=2.0).contains(&t)
        {
            return Err(format!("temperature must be between 0 and 2, not {t}"));
        }
        if let Some(p) = params.top_p
            && !(p > 0.0 && p <= 1.0)
        {
            return Err(format!("top_p must be in (0, 1], not {p}"));
        }
        Ok(params)
    }

    /// Sets `max_tokens`.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Turns thinking on with `budget` tokens.
    #[must_use]
    pub fn with_thinking_budget(mut self, budget: u64) -> Self {
        self.thinking_enable = true;
        self.thinking_budget = Some(budget);
        self
    }

    /// Sets the temperature.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets `top_p`.
    #[must_use]
    pub fn with_top_p(mut self, top_p: f64) -> Self {
        self.top_p = Some(top_p);
        self
    }

    /// The request's `generationConfig`, `None` when nothing is set.
    ///
    /// With thinking off, only `includeThoughts: false` is sent (with a
    /// budget only when one was given): models that always think (Gemini
    /// 2.5 Pro, Gemini 3) reject a zero budget.
    pub(crate) fn generation_config(&self) -> Value {
        let mut config = Map::new();
        if let Some(n) = self.max_tokens {
            config.insert("maxOutputTokens".into(), n.into());
        }
        if let Some(t) = self.temperature {
            config.insert("temperature".into(), t.into());
        }
        if let Some(p) = self.top_p {
            config.insert("topP".into(), p.into());
        }
        let thinking = if self.thinking_enable {
            let budget = self.thinking_budget.unwrap_or(DEFAULT_THINKING_BUDGET);
            json!({"includeThoughts": true, "thinkingBudget": budget})
        } else {
            match self.thinking_budget {
                Some(budget) => json!({"includeThoughts": false, "thinkingBudget": budget}),
                None => json!({"includeThoughts": false}),
            }
        };
        config.insert("thinkingConfig".into(), thinking);
        Value::Object(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn config(params: &Value) -> Value {
        GeminiParameters::from_json(params)
            .unwrap()
            .generation_config()
    }

    #[test]
    fn the_card_parameters_map_to_the_generation_config() {
        assert_eq!(
            config(&json!({})),
            json!({"thinkingConfig": {"includeThoughts": false}})
        );
        assert_eq!(
            config(
                &json!({"thinking_enable": true, "max_tokens": 100, "temperature": 0.5, "top_p": 0.9})
            ),
            json!({
                "maxOutputTokens": 100,
                "temperature": 0.5,
                "topP": 0.9,
                "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 1024},
            })
        );
        assert_eq!(
            config(&json!({"thinking_enable": true, "thinking_budget": 4096})),
            json!({"thinkingConfig": {"includeThoughts": true, "thinkingBudget": 4096}})
        );
    }

    #[test]
    fn out_of_range_and_wrongly_typed_values_are_rejected_and_unknown_keys_ignored() {
        assert!(GeminiParameters::from_json(&json!({"novel": 1})).is_ok());
        for bad in [
            json!({"max_tokens": 0}),
            json!({"max_tokens": "many"}),
            json!({"thinking_budget": 0}),
            json!({"temperature": 2.5}),
            json!({"top_p": 0}),
            json!({"thinking_enable": "yes"}),
        ] {
            assert!(GeminiParameters::from_json(&bad).is_err(), "{bad}");
        }
    }
}
