//! [`tts_model`]: a credential and a TTS config become a TTS model, as
//! [`chat_model`](crate::chat_model) does for chat.

use std::sync::Arc;

use oxiscope_http::HttpClient;
use oxiscope_model::{Credential, DynTtsModel, ModelError, TtsModelClass};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::invalid;
use super::{DashScopeTtsModel, GeminiTtsModel, OpenAiTtsModel};
use crate::Endpoints;

/// Which TTS model to call, with AgentScope's wire names (the model part of
/// a `TTSModelConfig`).
///
/// ```
/// use oxiscope_providers::TtsModelConfig;
///
/// let config: TtsModelConfig = serde_json::from_value(serde_json::json!({
///     "model": "qwen3-tts-flash",
///     "parameters": {"voice": "Serena"},
/// }))?;
/// assert_eq!(config.parameters["voice"], "Serena");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TtsModelConfig {
    /// The model name sent to the provider.
    pub model: String,
    /// The class's parameters: `voice` (every class), `response_format`
    /// and `instructions` (OpenAI), `language_type` (DashScope). Other
    /// names are ignored, as AgentScope does.
    #[serde(default)]
    pub parameters: Map<String, Value>,
}

impl TtsModelConfig {
    /// A config for `model` with its class's default parameters.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            parameters: Map::new(),
        }
    }

    /// Sets one parameter.
    #[must_use]
    pub fn with_parameter(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.parameters.insert(name.into(), value.into());
        self
    }
}

/// The TTS model `config` describes, called with `credential`, on any
/// endpoint the credential names. A service building models for others
/// uses [`tts_model_with`].
///
/// The class follows the credential's type and the model's card
/// ([`CredentialType::tts_model_class`](oxiscope_model::CredentialType::tts_model_class)):
/// OpenAI's `/audio/speech`, Gemini's `streamGenerateContent`, and
/// DashScope's Qwen-TTS over its multimodal generation API. Nothing is sent
/// until the first call.
///
/// # Errors
/// [`ModelError::InvalidRequest`] when the credential's type has no TTS
/// models, the model name is empty, the model is one of DashScope's
/// WebSocket models (realtime Qwen-TTS, CosyVoice), which this crate does
/// not speak, a parameter has the wrong type or value, or the HTTP client
/// cannot be built.
pub fn tts_model(
    credential: &Credential,
    config: &TtsModelConfig,
) -> Result<Arc<dyn DynTtsModel>, ModelError> {
    tts_model_with(credential, config, Endpoints::Any)
}

/// As [`tts_model`], calling only the endpoints `endpoints` allows: with
/// [`Endpoints::PublicOnly`], a credential whose endpoint names or resolves
/// to a non-public address builds, but each call fails with
/// [`ModelError::InvalidRequest`] naming the endpoint, before anything is
/// sent.
///
/// ```
/// use oxiscope_model::{Credential, OpenAiCredential};
/// use oxiscope_providers::{Endpoints, TtsModelConfig, tts_model_with};
///
/// let credential = Credential::from(OpenAiCredential::new("sk-test"));
/// let config = TtsModelConfig::new("gpt-4o-mini-tts").with_parameter("voice", "coral");
/// let model = tts_model_with(&credential, &config, Endpoints::PublicOnly)?;
/// assert_eq!(model.model_name(), "gpt-4o-mini-tts");
/// # Ok::<(), oxiscope_model::ModelError>(())
/// ```
///
/// # Errors
/// As [`tts_model`].
pub fn tts_model_with(
    credential: &Credential,
    config: &TtsModelConfig,
    endpoints: Endpoints,
) -> Result<Arc<dyn DynTtsModel>, ModelError> {
    let kind = credential.credential_type();
    let model = config.model.trim();
    if model.is_empty() {
        return Err(invalid("the TTS model name is empty".to_owned()));
    }
    let class = kind
        .tts_model_class(model)
        .ok_or_else(|| invalid(format!("a {kind} drives no TTS model")))?;
    let http = match endpoints {
        Endpoints::PublicOnly => HttpClient::shared_public_only(),
        Endpoints::Any => HttpClient::shared(),
    }
    .map_err(|e| invalid(format!("cannot build the HTTP client: {e}")))?;
    let voice = string_parameter(config, "voice")?;
    Ok(match class {
        TtsModelClass::OpenAi => {
            let mut m = OpenAiTtsModel::from_credential_on(http, credential, model)?;
            if let Some(voice) = voice {
                m = m.with_voice(voice);
            }
            if let Some(format) = string_parameter(config, "response_format")? {
                m = m.with_response_format(&format)?;
            }
            if let Some(instructions) = string_parameter(config, "instructions")? {
                m = m.with_instructions(instructions);
            }
            Arc::new(m)
        }
        TtsModelClass::Gemini => {
            let mut m = GeminiTtsModel::from_credential_on(http, credential, model)?;
            if let Some(voice) = voice {
                m = m.with_voice(voice);
            }
            Arc::new(m)
        }
        TtsModelClass::DashScope => {
            let mut m = DashScopeTtsModel::from_credential_on(http, credential, model)?;
            if let Some(voice) = voice {
                m = m.with_voice(voice);
            }
            if let Some(language) = string_parameter(config, "language_type")? {
                m = m.with_language_type(language);
            }
            Arc::new(m)
        }
        other => {
            return Err(invalid(format!(
                "{model} is a {other} model, which streams over DashScope's WebSocket API; \
                 only its HTTP models (qwen3-tts-flash, ...) are supported"
            )));
        }
    })
}

/// The parameter `name` as a string, if set.
fn string_parameter(config: &TtsModelConfig, name: &str) -> Result<Option<String>, ModelError> {
    match config.parameters.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(invalid(format!(
            "the TTS parameter {name} must be a string, not {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxiscope_model::{
        AnthropicCredential, DashScopeCredential, GeminiCredential, OpenAiCredential,
    };
    use serde_json::json;

    #[test]
    fn each_type_builds_its_class_and_bad_configs_are_refused() {
        let openai = Credential::from(OpenAiCredential::new("k"));
        let gemini = Credential::from(GeminiCredential::new("k"));
        let dashscope = Credential::from(DashScopeCredential::new("k"));
        let cases = [
            (&openai, "tts-1"),
            (&gemini, "gemini-2.5-flash-preview-tts"),
            (&dashscope, "qwen3-tts-flash"),
            (&dashscope, "qwen-tts-latest"),
        ];
        for (credential, model) in cases {
            let built = tts_model(credential, &TtsModelConfig::new(model)).unwrap();
            assert_eq!(built.model_name(), model);
        }
        let anthropic = Credential::from(AnthropicCredential::new("k"));
        let err = tts_model(&anthropic, &TtsModelConfig::new("tts-1")).unwrap_err();
        assert!(err.to_string().contains("anthropic_credential"), "{err}");
        assert!(tts_model(&openai, &TtsModelConfig::new("  ")).is_err());
        for websocket in ["qwen3-tts-flash-realtime", "cosyvoice-v3-flash"] {
            let err = tts_model(&dashscope, &TtsModelConfig::new(websocket)).unwrap_err();
            assert!(err.to_string().contains("WebSocket"), "{err}");
        }
        let bad_format = TtsModelConfig::new("tts-1").with_parameter("response_format", "ogg");
        assert!(tts_model(&openai, &bad_format).is_err());
        let bad_voice = TtsModelConfig::new("tts-1").with_parameter("voice", json!(3));
        assert!(tts_model(&openai, &bad_voice).is_err());
        let ignored = TtsModelConfig::new("tts-1").with_parameter("speed", json!(1.5));
        assert!(tts_model(&openai, &ignored).is_ok());
    }
}
