//! [`chat_model`]: the one place a credential and a model config become a
//! chat model, for the service and the console alike.

use std::sync::Arc;

use oxiscope_model::{Credential, DynChatModel, ModelClass, ModelError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::MediaPolicy;

/// Which chat model to call, with AgentScope's wire names (the model part
/// of a session's `chat_model_config`).
///
/// ```
/// use oxiscope_providers::ModelConfig;
///
/// let config: ModelConfig = serde_json::from_value(serde_json::json!({
///     "model": "gpt-4.1",
///     "parameters": {"temperature": 0.2},
/// }))?;
/// assert_eq!(config.model_class, "");
/// assert_eq!(config, ModelConfig::new("gpt-4.1").with_parameter("temperature", 0.2));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelConfig {
    /// The model class (`openai_chat`, `anthropic_chat`, ...); empty picks
    /// the first class of the credential's type.
    #[serde(default)]
    pub model_class: String,
    /// The model name sent to the provider.
    pub model: String,
    /// Generation parameters, named as the model card's `parameter_schema`
    /// names them.
    #[serde(default)]
    pub parameters: Map<String, Value>,
}

impl ModelConfig {
    /// A config for `model`, with the credential's default class and no
    /// parameters.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..Self::default()
        }
    }

    /// Sets the model class (`openai_chat`, ...).
    #[must_use]
    pub fn with_model_class(mut self, model_class: impl Into<String>) -> Self {
        self.model_class = model_class.into();
        self
    }

    /// Replaces the generation parameters.
    #[must_use]
    pub fn with_parameters(mut self, parameters: Map<String, Value>) -> Self {
        self.parameters = parameters;
        self
    }

    /// Sets one generation parameter.
    #[must_use]
    pub fn with_parameter(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.parameters.insert(name.into(), value.into());
        self
    }
}

/// The chat model `config` describes, called with `credential`.
///
/// The wire family follows `config.model_class`, or the credential's type
/// when the class is empty: `anthropic_chat` is Anthropic Messages (and
/// `minimax_chat` the same through MiniMax's Anthropic-compatible API),
/// `ollama_chat` Ollama's `/api/chat`, `gemini_chat` the Gemini API
/// (`generateContent`), and `openai_chat`, `deepseek_chat`, `moonshot_chat`,
/// `xai_chat`, `volcengine_chat` and `dashscope_chat` are
/// Chat Completions, configured (endpoint, payload quirks) by the
/// credential. A vLLM server is an OpenAI credential with its `base_url`.
/// An xAI credential whose `api_host` carries a scheme
/// (`http://localhost:8000/v1`) names the whole base URL.
///
/// Nothing is sent: the model connects on its first call. Media given by
/// URL are read and downloaded with the default [`MediaPolicy`] (any local
/// file, any URL); a service running models for others uses
/// [`chat_model_with`].
///
/// # Errors
/// [`ModelError::InvalidRequest`], naming the class, when the class is
/// unknown, belongs to another credential type, is not served by this crate
/// or by this build (its
/// family's feature is off); when a parameter of a known name has the wrong
/// type; and when the model cannot be set up (no HTTP client).
pub fn chat_model(
    credential: &Credential,
    config: &ModelConfig,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    chat_model_with(credential, config, &MediaPolicy::default())
}

/// The chat model `config` describes, called with `credential`, whose
/// formatter reads `file://` media and downloads `http(s)` media only as
/// `media` allows (a refused URL fails the call with
/// [`ModelError::InvalidRequest`] naming it and the rule), and which calls
/// only the endpoints `media.endpoints` allows: with
/// [`Endpoints::PublicOnly`](crate::Endpoints::PublicOnly), a credential
/// whose endpoint names or resolves to a non-public address (loopback,
/// private network, cloud metadata) builds, but each call fails with
/// [`ModelError::InvalidRequest`] naming the endpoint and the rule, before
/// anything is sent.
///
/// ```
/// use std::path::PathBuf;
/// use oxiscope_model::{Credential, OpenAiCredential};
/// use oxiscope_providers::{MediaPolicy, ModelConfig, RemoteMedia, chat_model_with};
///
/// let credential = Credential::from(OpenAiCredential::new("sk-test"));
/// let media = MediaPolicy {
///     file_roots: Some(vec![PathBuf::from("/srv/workspaces/u1/w1")]),
///     remote: RemoteMedia::PublicOnly,
///     ..MediaPolicy::default()
/// };
/// let model = chat_model_with(&credential, &ModelConfig::new("gpt-4.1"), &media)?;
/// assert_eq!(model.model_name(), "gpt-4.1");
/// # Ok::<(), oxiscope_model::ModelError>(())
/// ```
///
/// # Errors
/// As [`chat_model`].
pub fn chat_model_with(
    credential: &Credential,
    config: &ModelConfig,
    media: &MediaPolicy,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    let class = model_class(credential, &config.model_class)?;
    match class {
        ModelClass::AnthropicChat => anthropic(credential, config, media),
        ModelClass::OllamaChat => ollama(credential, config, media),
        ModelClass::OpenAiChat
        | ModelClass::DeepSeekChat
        | ModelClass::MoonshotChat
        | ModelClass::XaiChat
        | ModelClass::VolcengineChat
        | ModelClass::DashScopeChat => openai_chat(credential, config, media),
        ModelClass::OpenAiResponse => openai_response(credential, config, media),
        ModelClass::MiniMaxChat => minimax(credential, config, media),
        ModelClass::GeminiChat => gemini(credential, config, media, None),
        other => Err(invalid(format!("model class {other} is not supported yet"))),
    }
}

/// The class named `name`, or the credential type's first one when `name`
/// is empty.
fn model_class(credential: &Credential, name: &str) -> Result<ModelClass, ModelError> {
    let kind = credential.credential_type();
    if name.is_empty() {
        return kind
            .chat_model_classes()
            .first()
            .copied()
            .ok_or_else(|| invalid(format!("a {kind} drives no chat model class")));
    }
    let class: ModelClass = name
        .parse()
        .map_err(|_| invalid(format!("unknown model class {name:?}")))?;
    if class.credential_type() != kind {
        return Err(invalid(format!(
            "model class {class} takes a credential of type {}, not {kind}",
            class.credential_type()
        )));
    }
    Ok(class)
}

#[cfg(feature = "anthropic")]
fn anthropic(
    credential: &Credential,
    config: &ModelConfig,
    media: &MediaPolicy,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    use crate::anthropic::{AnthropicChatModel, AnthropicParameters};

    let params = AnthropicParameters::from_json(&Value::Object(config.parameters.clone()))
        .map_err(|e| bad_parameters(ModelClass::AnthropicChat, &e))?;
    let http = endpoint_client(media)?;
    let model = AnthropicChatModel::from_credential_on(http, credential, &config.model)?;
    Ok(Arc::new(
        model
            .with_parameters(params)
            .with_media_policy(media.clone()),
    ))
}

#[cfg(not(feature = "anthropic"))]
fn anthropic(
    _: &Credential,
    _: &ModelConfig,
    _: &MediaPolicy,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    Err(feature_off(ModelClass::AnthropicChat, "anthropic"))
}

#[cfg(feature = "ollama")]
fn ollama(
    credential: &Credential,
    config: &ModelConfig,
    media: &MediaPolicy,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    use crate::ollama::{OllamaChatModel, OllamaParameters};

    let params = OllamaParameters::from_json(&Value::Object(config.parameters.clone()))
        .map_err(|e| bad_parameters(ModelClass::OllamaChat, &e))?;
    let http = endpoint_client(media)?;
    let model = OllamaChatModel::from_credential_on(http, credential, &config.model)?;
    Ok(Arc::new(
        model
            .with_parameters(params)
            .with_media_policy(media.clone()),
    ))
}

#[cfg(not(feature = "ollama"))]
fn ollama(
    _: &Credential,
    _: &ModelConfig,
    _: &MediaPolicy,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    Err(feature_off(ModelClass::OllamaChat, "ollama"))
}

#[cfg(feature = "minimax")]
fn minimax(
    credential: &Credential,
    config: &ModelConfig,
    media: &MediaPolicy,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    use crate::minimax::{MiniMaxChatModel, MiniMaxParameters};

    let params = MiniMaxParameters::from_json(&Value::Object(config.parameters.clone()))
        .map_err(|e| bad_parameters(ModelClass::MiniMaxChat, &e))?;
    let http = endpoint_client(media)?;
    let model = MiniMaxChatModel::from_credential_on(http, credential, &config.model)?;
    Ok(Arc::new(
        model
            .with_parameters(params)
            .with_media_policy(media.clone()),
    ))
}

#[cfg(not(feature = "minimax"))]
fn minimax(
    _: &Credential,
    _: &ModelConfig,
    _: &MediaPolicy,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    Err(feature_off(ModelClass::MiniMaxChat, "minimax"))
}

#[cfg(feature = "openai")]
fn openai_chat(
    credential: &Credential,
    config: &ModelConfig,
    media: &MediaPolicy,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    use crate::openai_chat::OpenAiChatModel;

    let mut builder = OpenAiChatModel::from_credential(credential, &config.model)?;
    if let Credential::Xai(c) = credential
        && c.api_host.contains("://")
    {
        builder = builder.with_base_url(c.api_host.clone());
    }
    let model = builder
        .with_http_client(endpoint_client(media)?)
        .with_parameters(config.parameters.clone())
        .with_media_policy(media.clone())
        .build()?;
    Ok(Arc::new(model))
}

#[cfg(not(feature = "openai"))]
fn openai_chat(
    credential: &Credential,
    _: &ModelConfig,
    _: &MediaPolicy,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    let class = credential
        .credential_type()
        .chat_model_classes()
        .first()
        .copied()
        .unwrap_or(ModelClass::OpenAiChat);
    Err(feature_off(class, "openai"))
}

#[cfg(feature = "openai_response")]
fn openai_response(
    credential: &Credential,
    config: &ModelConfig,
    media: &MediaPolicy,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    use crate::openai_response::{OpenAiResponseModel, OpenAiResponseParameters};

    let params = OpenAiResponseParameters::from_json(&Value::Object(config.parameters.clone()))
        .map_err(|e| {
            invalid(format!(
                "the parameters of {}: {e}",
                ModelClass::OpenAiResponse
            ))
        })?;
    let http = endpoint_client(media)?;
    let model = OpenAiResponseModel::from_credential_on(http, credential, &config.model)?;
    Ok(Arc::new(
        model
            .with_parameters(params)
            .with_media_policy(media.clone()),
    ))
}

#[cfg(not(feature = "openai_response"))]
fn openai_response(
    _: &Credential,
    _: &ModelConfig,
    _: &MediaPolicy,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    Err(feature_off(ModelClass::OpenAiResponse, "openai_response"))
}

#[cfg(feature = "gemini")]
pub(crate) fn gemini(
    credential: &Credential,
    config: &ModelConfig,
    media: &MediaPolicy,
    endpoint: Option<&str>,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    use crate::gemini::{GeminiChatModel, GeminiParameters};

    let params = GeminiParameters::from_json(&Value::Object(config.parameters.clone()))
        .map_err(|e| bad_parameters(ModelClass::GeminiChat, &e))?;
    let http = endpoint_client(media)?;
    let mut model = GeminiChatModel::from_credential_on(http, credential, &config.model)?;
    // A Gemini credential carries no endpoint; the console may name one.
    if let Some(endpoint) = endpoint {
        model = model.with_base_url(endpoint);
    }
    Ok(Arc::new(
        model
            .with_parameters(params)
            .with_media_policy(media.clone()),
    ))
}

#[cfg(not(feature = "gemini"))]
pub(crate) fn gemini(
    _: &Credential,
    _: &ModelConfig,
    _: &MediaPolicy,
    _: Option<&str>,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    Err(feature_off(ModelClass::GeminiChat, "gemini"))
}

/// The shared HTTP client for calls to the endpoints `media` allows. It
/// does not retry: the caller of a chat model owns the retry policy (the
/// agent's `ModelConfig::max_retries`, with backoff and `Retry-After`), so
/// retries never compound.
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "ollama",
    feature = "gemini"
))]
fn endpoint_client(media: &MediaPolicy) -> Result<oxiscope_http::HttpClient, ModelError> {
    let http = match media.endpoints {
        crate::Endpoints::PublicOnly => oxiscope_http::HttpClient::shared_public_only(),
        crate::Endpoints::Any => oxiscope_http::HttpClient::shared(),
    };
    http.map(|c| c.with_retry_policy(oxiscope_http::RetryPolicy::none()))
        .map_err(|e| invalid(format!("cannot build the HTTP client: {e}")))
}

fn invalid(message: String) -> ModelError {
    ModelError::InvalidRequest { message }
}

#[cfg(any(feature = "anthropic", feature = "ollama", feature = "gemini"))]
fn bad_parameters(class: ModelClass, error: &str) -> ModelError {
    invalid(format!("the parameters of {class}: {error}"))
}

#[cfg(not(all(
    feature = "openai",
    feature = "anthropic",
    feature = "ollama",
    feature = "openai_response",
    feature = "minimax",
    feature = "gemini"
)))]
fn feature_off(class: ModelClass, feature: &str) -> ModelError {
    invalid(format!(
        "model class {class} needs the `{feature}` feature of oxiscope-providers, \
         which this build leaves out"
    ))
}

#[cfg(test)]
#[path = "factory_tests.rs"]
mod tests;
