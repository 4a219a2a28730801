//! OpenAI embeddings (`POST {base}/embeddings`), also any server that
//! speaks OpenAI's API (vLLM, a DashScope or Ollama compatible endpoint).

use std::num::NonZeroU32;

use oxiscope_http::HttpClient;
use oxiscope_model::{
    Credential, EmbeddingModel, EmbeddingRequest, EmbeddingResponse, EmbeddingSource,
    EmbeddingUsage, ModelError, Secret, embed_in_batches,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::common::{
    Settings, from_http, malformed, own_client, settings_accessors, settings_builders, text_of,
    trimmed, wrong_credential,
};

/// Most texts per request (OpenAI's own limit is 2048 inputs).
pub const OPENAI_EMBEDDING_BATCH_SIZE: usize = 2048;

/// OpenAI's public endpoint.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

const PROVIDER: &str = "openai";

/// An OpenAI embedding model.
///
/// Each request is `POST {base}/embeddings` with the key as a bearer token
/// (and `OpenAI-Organization` when set) and the body
/// `{"input": [texts], "model": m, "encoding_format": "float",
/// "dimensions": n}` (`dimensions` only when a size is asked for). The
/// vectors are put in input order by their `index`; usage is
/// `usage.total_tokens`. Requests hold at most
/// [`OPENAI_EMBEDDING_BATCH_SIZE`] texts, sent concurrently.
#[derive(Debug, Clone)]
pub struct OpenAiEmbeddingModel {
    settings: Settings,
    api_key: Secret,
    organization: Option<String>,
    base_url: String,
}

#[derive(Deserialize)]
struct Answer {
    data: Vec<Item>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens: Option<u64>,
}

impl OpenAiEmbeddingModel {
    /// A model on OpenAI's endpoint with the shared HTTP client.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(api_key: impl Into<Secret>, model: impl Into<String>) -> Result<Self, ModelError> {
        Ok(Self::with_client(own_client()?, api_key, model))
    }

    /// A model on OpenAI's endpoint with `http`.
    pub fn with_client(
        http: HttpClient,
        api_key: impl Into<Secret>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            settings: Settings::new(http, model.into(), OPENAI_EMBEDDING_BATCH_SIZE),
            api_key: api_key.into(),
            organization: None,
            base_url: OPENAI_DEFAULT_BASE_URL.to_owned(),
        }
    }

    /// A model for an OpenAI credential (its key, organization and
    /// endpoint), on `http`.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not an OpenAI one.
    pub fn from_credential_on(
        http: HttpClient,
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let Credential::OpenAi(c) = credential else {
            return Err(wrong_credential(
                "an OpenAI embedding model needs an openai_credential",
                credential,
            ));
        };
        let mut this = Self::with_client(http, c.api_key.clone(), model);
        if let Some(url) = c.base_url.as_deref().filter(|u| !u.trim().is_empty()) {
            this = this.with_base_url(url);
        }
        this.organization = c.organization.clone().filter(|o| !o.is_empty());
        Ok(this)
    }

    /// Another endpoint, API version included (`http://localhost:8000/v1`).
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl AsRef<str>) -> Self {
        self.base_url = trimmed(base_url.as_ref());
        self
    }

    /// Sends `OpenAI-Organization: organization` with each request.
    #[must_use]
    pub fn with_organization(mut self, organization: impl Into<String>) -> Self {
        self.organization = Some(organization.into());
        self
    }

    settings_builders!();

    /// The body of one request for `texts`.
    #[must_use]
    pub fn request_body(&self, texts: &[String], dimensions: Option<NonZeroU32>) -> Value {
        let mut body = json!({
            "input": texts,
            "model": self.settings.model,
            "encoding_format": "float",
        });
        if let (Some(size), Value::Object(map)) = (dimensions, &mut body) {
            map.insert("dimensions".to_owned(), size.get().into());
        }
        body
    }

    async fn call_chunk(
        &self,
        texts: &[String],
        dimensions: Option<NonZeroU32>,
    ) -> Result<EmbeddingResponse, ModelError> {
        let http = &self.settings.http;
        let mut request = http
            .post(format!("{}/embeddings", self.base_url))
            .bearer_auth(self.api_key.expose())
            .header("content-type", "application/json")
            .body(self.request_body(texts, dimensions).to_string());
        if let Some(org) = &self.organization {
            request = request.header("openai-organization", org);
        }
        let answer: Answer = http
            .send_json(request)
            .await
            .map_err(|e| from_http(e, PROVIDER, error_body))?;
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in answer.data.into_iter().enumerate() {
            let index = item.index.unwrap_or(position);
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
        let tokens = answer
            .usage
            .and_then(|u| u.total_tokens.or(u.prompt_tokens));
        Ok(EmbeddingResponse {
            embeddings,
            model: answer.model.unwrap_or_default(),
            usage: EmbeddingUsage {
                tokens,
                time: std::time::Duration::ZERO,
            },
            source: EmbeddingSource::Api,
        })
    }
}

/// `(code, message)` of `{"error": {"code" | "type", "message"}}`.
fn error_body(body: &str) -> (Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return (None, None);
    };
    let error = value.get("error").unwrap_or(&value);
    let code = error
        .get("code")
        .and_then(text_of)
        .or_else(|| error.get("type").and_then(text_of));
    let message = match error {
        Value::String(s) => Some(s.clone()),
        _ => error.get("message").and_then(text_of),
    };
    (code, message)
}

impl EmbeddingModel for OpenAiEmbeddingModel {
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
