//! Ollama embeddings (`POST {host}/api/embed`).

use std::num::NonZeroU32;

use oxiscope_http::HttpClient;
use oxiscope_model::{
    Credential, EmbeddingModel, EmbeddingRequest, EmbeddingResponse, EmbeddingSource,
    EmbeddingUsage, ModelError, OllamaCredential, embed_in_batches,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::common::{
    Settings, from_http, malformed, own_client, settings_accessors, settings_builders, trimmed,
    wrong_credential,
};

/// Most texts per request.
pub const OLLAMA_EMBEDDING_BATCH_SIZE: usize = 512;

const PROVIDER: &str = "ollama";

/// A model served by Ollama's embedding API.
///
/// Each request is `POST {host}/api/embed` with the body `{"model": m,
/// "input": [texts], "dimensions": n}` (`dimensions` only when a size is
/// asked for). The answer's `embeddings` are in input order; usage is its
/// `prompt_eval_count`. The host defaults to `http://localhost:11434`.
/// Requests hold at most [`OLLAMA_EMBEDDING_BATCH_SIZE`] texts, sent
/// concurrently.
#[derive(Debug, Clone)]
pub struct OllamaEmbeddingModel {
    settings: Settings,
    host: String,
}

#[derive(Deserialize)]
struct Answer {
    embeddings: Vec<Vec<f32>>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
}

impl OllamaEmbeddingModel {
    /// A model on the default host with the shared HTTP client.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(model: impl Into<String>) -> Result<Self, ModelError> {
        Ok(Self::with_client(own_client()?, model))
    }

    /// A model on the default host with `http`.
    pub fn with_client(http: HttpClient, model: impl Into<String>) -> Self {
        Self {
            settings: Settings::new(http, model.into(), OLLAMA_EMBEDDING_BATCH_SIZE),
            host: OllamaCredential::DEFAULT_HOST.to_owned(),
        }
    }

    /// A model for an Ollama credential (its host, when set), on `http`.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not an Ollama one.
    pub fn from_credential_on(
        http: HttpClient,
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let Credential::Ollama(c) = credential else {
            return Err(wrong_credential(
                "an Ollama embedding model needs an ollama_credential",
                credential,
            ));
        };
        let mut this = Self::with_client(http, model);
        if let Some(host) = c.host.as_deref().filter(|h| !h.trim().is_empty()) {
            this = this.with_host(host);
        }
        Ok(this)
    }

    /// Another host (`http://gpu-box:11434`).
    #[must_use]
    pub fn with_host(mut self, host: impl AsRef<str>) -> Self {
        self.host = trimmed(host.as_ref());
        self
    }

    settings_builders!();

    /// The body of one request for `texts`.
    #[must_use]
    pub fn request_body(&self, texts: &[String], dimensions: Option<NonZeroU32>) -> Value {
        let mut body = json!({"model": self.settings.model, "input": texts});
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
        let request = http
            .post(format!("{}/api/embed", self.host))
            .header("content-type", "application/json")
            .body(self.request_body(texts, dimensions).to_string());
        let answer: Answer = http
            .send_json(request)
            .await
            .map_err(|e| from_http(e, PROVIDER, error_body))?;
        if answer.embeddings.len() != texts.len() {
            return Err(malformed(
                PROVIDER,
                &format!(
                    "{} vectors for {} texts",
                    answer.embeddings.len(),
                    texts.len()
                ),
            ));
        }
        Ok(EmbeddingResponse {
            embeddings: answer.embeddings,
            model: answer.model.unwrap_or_default(),
            usage: EmbeddingUsage {
                tokens: answer.prompt_eval_count,
                time: std::time::Duration::ZERO,
            },
            source: EmbeddingSource::Api,
        })
    }
}

/// Ollama's `{"error": "..."}`.
fn error_body(body: &str) -> (Option<String>, Option<String>) {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned));
    (None, message)
}

impl EmbeddingModel for OllamaEmbeddingModel {
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
