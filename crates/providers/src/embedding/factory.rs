//! [`embedding_model`]: a credential and an embedding config become an
//! embedding model, as [`chat_model`](crate::chat_model) does for chat.

use std::num::NonZeroU32;
use std::sync::Arc;

use oxiscope_http::HttpClient;
use oxiscope_model::{Credential, DynEmbeddingModel, EmbeddingFamily, ModelError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::invalid;
use super::{
    DashScopeEmbeddingModel, GeminiEmbeddingModel, OllamaEmbeddingModel, OpenAiEmbeddingModel,
};
use crate::Endpoints;

/// Which embedding model to call, with AgentScope's wire names (the model
/// part of an `EmbeddingModelConfig`).
///
/// ```
/// use oxiscope_providers::EmbeddingModelConfig;
///
/// let config: EmbeddingModelConfig = serde_json::from_value(serde_json::json!({
///     "model": "text-embedding-v4",
///     "dimensions": 512,
/// }))?;
/// assert_eq!(config.dimensions.map(|d| d.get()), Some(512));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddingModelConfig {
    /// The model name sent to the provider.
    pub model: String,
    /// The vector size; `None` takes the model card's default (or the
    /// provider's, for a model without a card).
    #[serde(default)]
    pub dimensions: Option<NonZeroU32>,
    /// Provider parameters: `task_type` (Gemini), `text_type` (DashScope
    /// text models). Other names are ignored, as AgentScope does; a
    /// `dimensions` here (older configs) counts when the field above is
    /// not set.
    #[serde(default)]
    pub parameters: Map<String, Value>,
}

impl EmbeddingModelConfig {
    /// A config for `model` at its default vector size.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..Self::default()
        }
    }

    /// Sets the vector size.
    #[must_use]
    pub fn with_dimensions(mut self, dimensions: NonZeroU32) -> Self {
        self.dimensions = Some(dimensions);
        self
    }

    /// Sets one provider parameter.
    #[must_use]
    pub fn with_parameter(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.parameters.insert(name.into(), value.into());
        self
    }
}

/// The embedding model `config` describes, called with `credential`, on
/// any endpoint the credential names. A service building models for
/// others uses [`embedding_model_with`].
///
/// The wire follows the credential's type: OpenAI (`/embeddings`, also any
/// OpenAI-compatible `base_url`), Gemini (`batchEmbedContents`), DashScope
/// (the native text or multimodal embedding API) and Ollama
/// (`/api/embed`). Nothing is sent until the first call.
///
/// # Errors
/// [`ModelError::InvalidRequest`] when the credential's type has no
/// embedding models, the model name is empty, the vector size is not one
/// the model's card supports, a parameter has the wrong type, or the HTTP
/// client cannot be built.
pub fn embedding_model(
    credential: &Credential,
    config: &EmbeddingModelConfig,
) -> Result<Arc<dyn DynEmbeddingModel>, ModelError> {
    embedding_model_with(credential, config, Endpoints::Any)
}

/// As [`embedding_model`], calling only the endpoints `endpoints` allows:
/// with [`Endpoints::PublicOnly`], a credential whose endpoint names or
/// resolves to a non-public address (loopback, private network, cloud
/// metadata) builds, but each call fails with
/// [`ModelError::InvalidRequest`] naming the endpoint, before anything is
/// sent.
///
/// ```
/// use oxiscope_model::{Credential, OllamaCredential};
/// use oxiscope_providers::{EmbeddingModelConfig, Endpoints, embedding_model_with};
///
/// let credential = Credential::from(OllamaCredential::new().with_host("http://127.0.0.1:11434"));
/// let config = EmbeddingModelConfig::new("nomic-embed-text");
/// let model = embedding_model_with(&credential, &config, Endpoints::PublicOnly)?;
/// assert_eq!(model.model_name(), "nomic-embed-text");
/// # Ok::<(), oxiscope_model::ModelError>(())
/// ```
///
/// # Errors
/// As [`embedding_model`].
pub fn embedding_model_with(
    credential: &Credential,
    config: &EmbeddingModelConfig,
    endpoints: Endpoints,
) -> Result<Arc<dyn DynEmbeddingModel>, ModelError> {
    let kind = credential.credential_type();
    let family = kind
        .embedding_family()
        .ok_or_else(|| invalid(format!("a {kind} drives no embedding model")))?;
    if config.model.trim().is_empty() {
        return Err(invalid("the embedding model name is empty".to_owned()));
    }
    let dimensions = resolve_dimensions(family, config)?;
    let http = match endpoints {
        Endpoints::PublicOnly => HttpClient::shared_public_only(),
        Endpoints::Any => HttpClient::shared(),
    }
    .map_err(|e| invalid(format!("cannot build the HTTP client: {e}")))?;
    let model = &config.model;
    Ok(match family {
        EmbeddingFamily::OpenAi => {
            let m = OpenAiEmbeddingModel::from_credential_on(http, credential, model)?;
            Arc::new(sized(m, dimensions, OpenAiEmbeddingModel::with_dimensions))
        }
        EmbeddingFamily::Gemini => {
            let mut m = GeminiEmbeddingModel::from_credential_on(http, credential, model)?;
            if let Some(task) = string_parameter(config, "task_type")? {
                m = m.with_task_type(task);
            }
            Arc::new(sized(m, dimensions, GeminiEmbeddingModel::with_dimensions))
        }
        EmbeddingFamily::DashScope => {
            let mut m = DashScopeEmbeddingModel::from_credential_on(http, credential, model)?;
            if let Some(kind) = string_parameter(config, "text_type")? {
                m = m.with_text_type(kind);
            }
            Arc::new(sized(
                m,
                dimensions,
                DashScopeEmbeddingModel::with_dimensions,
            ))
        }
        EmbeddingFamily::Ollama => {
            let m = OllamaEmbeddingModel::from_credential_on(http, credential, model)?;
            Arc::new(sized(m, dimensions, OllamaEmbeddingModel::with_dimensions))
        }
        other => return Err(invalid(format!("{other} is not supported yet"))),
    })
}

/// The offline default embedding model, all-MiniLM-L6-v2 run in-process:
/// no credential, no endpoint. Nothing is read until the first call, which
/// finds the weights with `locator` (`ModelLocator::new()`: the
/// `OXISCOPE_EMBEDDING_MODEL_DIR` / `OXISCOPE_DATA_DIR` environment), and
/// downloads them once on a machine that does not have them yet.
///
/// ```
/// use oxiscope_providers::local_embedding::ModelLocator;
///
/// let model = oxiscope_providers::local_embedding_model(ModelLocator::new());
/// assert_eq!(model.model_name(), "all-MiniLM-L6-v2");
/// assert_eq!(model.dimensions().map(|d| d.get()), Some(384));
/// ```
#[cfg(feature = "local-embedding")]
#[must_use]
pub fn local_embedding_model(
    locator: oxiscope_local_embedding::ModelLocator,
) -> Arc<dyn DynEmbeddingModel> {
    Arc::new(oxiscope_local_embedding::DefaultEmbeddingModel::new(
        locator,
    ))
}

/// The cards of the offline embedding models (all-MiniLM-L6-v2).
///
/// # Errors
/// None in practice (the card is fixed); see
/// [`minilm_card`](oxiscope_local_embedding::minilm_card).
#[cfg(feature = "local-embedding")]
pub fn local_embedding_models() -> Result<Vec<oxiscope_model::EmbeddingModelCard>, ModelError> {
    oxiscope_local_embedding::minilm_card()
        .map(|card| vec![card])
        .map_err(|e| invalid(format!("the offline model's card: {e}")))
}

fn sized<M>(model: M, dimensions: Option<NonZeroU32>, with: fn(M, NonZeroU32) -> M) -> M {
    match dimensions {
        Some(d) => with(model, d),
        None => model,
    }
}

/// The parameter `name` as a string, if set.
fn string_parameter(
    config: &EmbeddingModelConfig,
    name: &str,
) -> Result<Option<String>, ModelError> {
    match config.parameters.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(invalid(format!(
            "the embedding parameter {name} must be a string, not {other}"
        ))),
    }
}

/// The vector size to ask for: the configured one (checked against the
/// model's card), the card's default for a model whose size can be
/// chosen, or `None` (the provider's default; also for a fixed-size model,
/// which takes no size).
fn resolve_dimensions(
    family: EmbeddingFamily,
    config: &EmbeddingModelConfig,
) -> Result<Option<NonZeroU32>, ModelError> {
    let legacy = match config.parameters.get("dimensions") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .and_then(NonZeroU32::new)
                .ok_or_else(|| {
                    invalid(format!(
                        "the embedding parameter dimensions must be a positive integer, not {value}"
                    ))
                })?,
        ),
    };
    let asked = config.dimensions.or(legacy);
    let Some(card) = family.card(&config.model) else {
        return Ok(asked);
    };
    match asked {
        Some(size) if !card.supports_dimensions(size) => {
            let sizes = card
                .supported_dimensions
                .clone()
                .unwrap_or_else(|| vec![card.dimensions.get()]);
            Err(invalid(format!(
                "{} produces vectors of {sizes:?} values, not {size}",
                card.name
            )))
        }
        _ if !card.has_variable_dimensions() => Ok(None),
        Some(size) => Ok(Some(size)),
        None => Ok(Some(card.dimensions)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxiscope_model::{AnthropicCredential, DashScopeCredential, OpenAiCredential};
    use serde_json::json;

    fn d(n: u32) -> NonZeroU32 {
        NonZeroU32::new(n).unwrap()
    }

    #[test]
    fn card_sizes_are_checked_and_defaulted() {
        let family = EmbeddingFamily::OpenAi;
        let small = EmbeddingModelConfig::new("text-embedding-3-small");
        assert_eq!(resolve_dimensions(family, &small).unwrap(), Some(d(1536)));
        let cut = small.clone().with_dimensions(d(512));
        assert_eq!(resolve_dimensions(family, &cut).unwrap(), Some(d(512)));
        let wrong = small.clone().with_dimensions(d(3072));
        let err = resolve_dimensions(family, &wrong).unwrap_err();
        assert!(err.to_string().contains("not 3072"), "{err}");
        let legacy = small.with_parameter("dimensions", 256);
        assert_eq!(resolve_dimensions(family, &legacy).unwrap(), Some(d(256)));
        let custom = EmbeddingModelConfig::new("my-model").with_dimensions(d(7));
        assert_eq!(resolve_dimensions(family, &custom).unwrap(), Some(d(7)));
        let fixed = EmbeddingModelConfig::new("multimodal-embedding-v1");
        assert_eq!(
            resolve_dimensions(EmbeddingFamily::DashScope, &fixed).unwrap(),
            None
        );
        let bad = EmbeddingModelConfig::new("x").with_parameter("dimensions", "big");
        assert!(resolve_dimensions(family, &bad).is_err());
    }

    #[test]
    fn credentials_without_embeddings_and_bad_configs_are_refused() {
        let anthropic = Credential::from(AnthropicCredential::new("k"));
        let err = embedding_model(&anthropic, &EmbeddingModelConfig::new("m")).unwrap_err();
        assert!(err.to_string().contains("anthropic_credential"), "{err}");
        let openai = Credential::from(OpenAiCredential::new("k"));
        assert!(embedding_model(&openai, &EmbeddingModelConfig::new(" ")).is_err());
        let dashscope = Credential::from(DashScopeCredential::new("k"));
        let typed =
            EmbeddingModelConfig::new("text-embedding-v4").with_parameter("text_type", json!(1));
        assert!(embedding_model(&dashscope, &typed).is_err());
        let model =
            embedding_model(&dashscope, &EmbeddingModelConfig::new("text-embedding-v4")).unwrap();
        assert_eq!(model.dimensions(), Some(d(1024)));
    }
}
