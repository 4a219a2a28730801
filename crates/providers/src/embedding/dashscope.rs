//! DashScope's native embedding APIs: text embedding
//! (`text-embedding-v3/v4`) and, for text inputs, the multimodal one
//! (`qwen3-vl-embedding`, `tongyi-embedding-vision-*`, ...), as AgentScope
//! calls them through the DashScope SDK.

use std::num::NonZeroU32;

use oxiscope_http::HttpClient;
use oxiscope_model::{
    Credential, DashScopeCredential, EmbeddingModel, EmbeddingRequest, EmbeddingResponse,
    EmbeddingSource, EmbeddingUsage, ModelError, Secret, embed_in_batches,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::common::{
    Settings, from_http, malformed, own_client, settings_accessors, settings_builders, text_of,
    trimmed, wrong_credential,
};

/// Most texts per request to the text embedding API.
pub const DASHSCOPE_EMBEDDING_BATCH_SIZE: usize = 10;

/// Most texts per request to the multimodal embedding API (its limit on
/// elements per request).
pub const DASHSCOPE_MULTIMODAL_BATCH_SIZE: usize = 20;

/// DashScope's native API root.
pub const DASHSCOPE_NATIVE_BASE_URL: &str = "https://dashscope.aliyuncs.com/api/v1";

const PROVIDER: &str = "dashscope";

/// Model name prefixes served by the multimodal embedding API.
const MULTIMODAL_PREFIXES: &[&str] = &[
    "multimodal-embedding-",
    "tongyi-embedding-vision-",
    "qwen3-vl-embedding",
    "qwen2.5-vl-embedding",
];

/// The native API root for a credential's endpoint, which names the
/// OpenAI-compatible mode by default: `.../compatible-mode/v1` becomes
/// `.../api/v1`; any other endpoint is taken as the native root itself.
#[must_use]
pub fn native_base_url(endpoint: &str) -> String {
    let endpoint = trimmed(endpoint.trim());
    match endpoint.strip_suffix("/compatible-mode/v1") {
        Some(host) => format!("{host}/api/v1"),
        None => endpoint,
    }
}

/// A DashScope embedding model on the native API.
///
/// Text models: `POST {base}/services/embeddings/text-embedding/text-embedding`
/// with `{"model": m, "input": {"texts": [...]}, "parameters": {"dimension":
/// n, "text_type": t}}`, at most [`DASHSCOPE_EMBEDDING_BATCH_SIZE`] texts per
/// request; the answer's `output.embeddings[].text_index` orders the vectors
/// and `usage.total_tokens` is the usage. Multimodal models (by name, as
/// AgentScope routes them): `POST
/// {base}/services/embeddings/multimodal-embedding/multimodal-embedding`
/// with `{"model": m, "input": {"contents": [{"text": t}, ...]},
/// "parameters": {...}}`, at most [`DASHSCOPE_MULTIMODAL_BATCH_SIZE`] texts,
/// ordered by `index`; usage is `input_tokens + image_tokens`. Only text
/// inputs are supported. The key is a bearer token; parameters are sent
/// only when set.
#[derive(Debug, Clone)]
pub struct DashScopeEmbeddingModel {
    settings: Settings,
    api_key: Secret,
    base_url: String,
    text_type: Option<String>,
    multimodal: bool,
}

#[derive(Deserialize)]
struct Answer {
    output: Output,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Output {
    embeddings: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    text_index: Option<usize>,
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    image_tokens: Option<u64>,
}

impl DashScopeEmbeddingModel {
    /// A model on DashScope's native API with the shared HTTP client.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(api_key: impl Into<Secret>, model: impl Into<String>) -> Result<Self, ModelError> {
        Ok(Self::with_client(own_client()?, api_key, model))
    }

    /// A model on DashScope's native API with `http`.
    pub fn with_client(
        http: HttpClient,
        api_key: impl Into<Secret>,
        model: impl Into<String>,
    ) -> Self {
        let model: String = model.into();
        let multimodal = MULTIMODAL_PREFIXES.iter().any(|p| model.starts_with(p));
        let batch = if multimodal {
            DASHSCOPE_MULTIMODAL_BATCH_SIZE
        } else {
            DASHSCOPE_EMBEDDING_BATCH_SIZE
        };
        Self {
            settings: Settings::new(http, model, batch),
            api_key: api_key.into(),
            base_url: DASHSCOPE_NATIVE_BASE_URL.to_owned(),
            text_type: None,
            multimodal,
        }
    }

    /// A model for a DashScope credential, on `http`: its key, and the
    /// native root of its endpoint ([`native_base_url`]).
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not a DashScope
    /// one.
    pub fn from_credential_on(
        http: HttpClient,
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let Credential::DashScope(c) = credential else {
            return Err(wrong_credential(
                "a DashScope embedding model needs a dashscope_credential",
                credential,
            ));
        };
        let endpoint = if c.base_url.trim().is_empty() {
            DashScopeCredential::DEFAULT_BASE_URL
        } else {
            c.base_url.as_str()
        };
        Ok(Self::with_client(http, c.api_key.clone(), model)
            .with_base_url(native_base_url(endpoint)))
    }

    /// Another native API root (`https://dashscope-intl.aliyuncs.com/api/v1`).
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl AsRef<str>) -> Self {
        self.base_url = trimmed(base_url.as_ref());
        self
    }

    /// Sends `text_type` (`query` or `document`) with text models.
    #[must_use]
    pub fn with_text_type(mut self, text_type: impl Into<String>) -> Self {
        self.text_type = Some(text_type.into());
        self
    }

    /// Whether the model is served by the multimodal API.
    #[must_use]
    pub fn is_multimodal(&self) -> bool {
        self.multimodal
    }

    settings_builders!();

    /// The body of one request for `texts`.
    #[must_use]
    pub fn request_body(&self, texts: &[String], dimensions: Option<NonZeroU32>) -> Value {
        let input = if self.multimodal {
            let contents: Vec<Value> = texts.iter().map(|t| json!({"text": t})).collect();
            json!({ "contents": contents })
        } else {
            json!({ "texts": texts })
        };
        let mut parameters = Map::new();
        if let Some(size) = dimensions {
            parameters.insert("dimension".to_owned(), size.get().into());
        }
        if let (Some(kind), false) = (&self.text_type, self.multimodal) {
            parameters.insert("text_type".to_owned(), Value::String(kind.clone()));
        }
        let mut body = json!({"model": self.settings.model, "input": input});
        if let (false, Value::Object(map)) = (parameters.is_empty(), &mut body) {
            map.insert("parameters".to_owned(), Value::Object(parameters));
        }
        body
    }

    fn url(&self) -> String {
        if self.multimodal {
            format!(
                "{}/services/embeddings/multimodal-embedding/multimodal-embedding",
                self.base_url
            )
        } else {
            format!(
                "{}/services/embeddings/text-embedding/text-embedding",
                self.base_url
            )
        }
    }

    async fn call_chunk(
        &self,
        texts: &[String],
        dimensions: Option<NonZeroU32>,
    ) -> Result<EmbeddingResponse, ModelError> {
        let http = &self.settings.http;
        let request = http
            .post(self.url())
            .bearer_auth(self.api_key.expose())
            .header("content-type", "application/json")
            .body(self.request_body(texts, dimensions).to_string());
        let answer: Answer = http
            .send_json(request)
            .await
            .map_err(|e| from_http(e, PROVIDER, error_body))?;
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in answer.output.embeddings.into_iter().enumerate() {
            let index = item.text_index.or(item.index).unwrap_or(position);
            match slots.get_mut(index) {
                Some(slot @ None) => *slot = Some(item.embedding),
                Some(Some(_)) => return Err(malformed(PROVIDER, &format!("index {index} twice"))),
                None => {
                    return Err(malformed(
                        PROVIDER,
                        &format!("index {index} for {} texts", texts.len()),
                    ));
                }
            }
        }
        let embeddings = slots
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| malformed(PROVIDER, "fewer vectors than texts"))?;
        let tokens = answer.usage.and_then(|u| {
            u.total_tokens
                .or_else(|| match (u.input_tokens, u.image_tokens) {
                    (None, None) => None,
                    (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
                })
        });
        Ok(EmbeddingResponse {
            embeddings,
            model: self.settings.model.clone(),
            usage: EmbeddingUsage {
                tokens,
                time: std::time::Duration::ZERO,
            },
            source: EmbeddingSource::Api,
        })
    }
}

/// `(code, message)` of DashScope's `{"code", "message", "request_id"}`.
fn error_body(body: &str) -> (Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return (None, None);
    };
    let value = value.get("error").unwrap_or(&value);
    (
        value.get("code").and_then(text_of),
        value.get("message").and_then(text_of),
    )
}

impl EmbeddingModel for DashScopeEmbeddingModel {
    settings_accessors!();

    async fn embed(&self, request: EmbeddingRequest<'_>) -> Result<EmbeddingResponse, ModelError> {
        let dimensions = request.dimensions.or(self.settings.dimensions);
        let s = &self.settings;
        embed_in_batches(
            &s.model,
            request.texts,
            s.batch_size,
            s.concurrency,
            |chunk| self.call_chunk(chunk, dimensions),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compatible_endpoint_maps_to_the_native_root() {
        assert_eq!(
            native_base_url("https://dashscope.aliyuncs.com/compatible-mode/v1/"),
            "https://dashscope.aliyuncs.com/api/v1"
        );
        assert_eq!(
            native_base_url("https://dashscope-intl.aliyuncs.com/compatible-mode/v1"),
            "https://dashscope-intl.aliyuncs.com/api/v1"
        );
        assert_eq!(
            native_base_url("http://proxy.internal/api/v1"),
            "http://proxy.internal/api/v1"
        );
    }
}
