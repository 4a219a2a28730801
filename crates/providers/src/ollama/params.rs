//! The knobs of an Ollama call.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Parameters of [`OllamaChatModel`](super::OllamaChatModel), read from the
/// same JSON as the model card's `parameter_schema` describes, plus raw
/// Ollama `options`. Unknown keys are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct OllamaParameters {
    /// Most tokens in the reply (`options.num_predict`).
    pub max_tokens: Option<u64>,
    /// The `think` flag; left to the server when unset.
    pub thinking_enable: Option<bool>,
    /// Sampling temperature (`options.temperature`).
    pub temperature: Option<f64>,
    /// Further Ollama `options` (`num_ctx`, `top_k`, `seed`, ...); the
    /// fields above win over the same keys here.
    pub options: Map<String, Value>,
    /// How long the server keeps the model loaded (`"5m"`, `"-1"`).
    pub keep_alive: Option<Value>,
}

impl OllamaParameters {
    /// Reads parameters from JSON.
    ///
    /// # Errors
    /// A message when a known key has the wrong type.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        Self::deserialize(value).map_err(|e| e.to_string())
    }

    /// Sets `think`.
    #[must_use]
    pub fn with_thinking(mut self, think: bool) -> Self {
        self.thinking_enable = Some(think);
        self
    }

    /// Sets `options.num_predict`.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets `options.temperature`.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets one raw option (`num_ctx`, `top_k`, ...).
    #[must_use]
    pub fn with_option(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.options.insert(key.into(), value.into());
        self
    }

    /// The request's `options` object.
    pub(crate) fn options(&self) -> Map<String, Value> {
        let mut options = self.options.clone();
        if let Some(n) = self.max_tokens {
            options.insert("num_predict".into(), n.into());
        }
        if let Some(t) = self.temperature {
            options.insert("temperature".into(), t.into());
        }
        options
    }
}
