//! Gemini embeddings (`POST {base}/models/{model}:batchEmbedContents`).

use std::num::NonZeroU32;

use oxiscope_http::HttpClient;
use oxiscope_model::{
    Credential, EmbeddingModel, EmbeddingRequest, EmbeddingResponse, EmbeddingSource,
    EmbeddingUsage, ModelError, Secret, embed_in_batches,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::common::{
    Settings, from_http, malformed, own_client, path_safe_model, settings_accessors,
    settings_builders, trimmed, wrong_credential,
};

/// Most texts per request (the API takes at most 100 requests per batch).
pub const GEMINI_EMBEDDING_BATCH_SIZE: usize = 100;

/// The Gemini API's endpoint, version included.
pub const GEMINI_DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

const PROVIDER: &str = "gemini";

/// A Gemini embedding model.
///
/// Each request is `POST {base}/models/{model}:batchEmbedContents` with the
/// key in `x-goog-api-key` and the body `{"requests": [{"model":
/// "models/{model}", "content": {"parts": [{"text": t}]}, "taskType": ..,
/// "outputDimensionality": n}, ...]}` (one entry per text; `taskType` and
/// `outputDimensionality` only when set). The answer's `embeddings[i].values`
/// is the vector of text `i`; the API reports no token usage. Requests hold
/// at most [`GEMINI_EMBEDDING_BATCH_SIZE`] texts, sent concurrently.
#[derive(Debug, Clone)]
pub struct GeminiEmbeddingModel {
    settings: Settings,
    api_key: Secret,
    base_url: String,
    task_type: Option<String>,
}

#[derive(Deserialize)]
struct Answer {
    embeddings: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    values: Vec<f32>,
}

impl GeminiEmbeddingModel {
    /// A model on the Gemini API with the shared HTTP client.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(api_key: impl Into<Secret>, model: impl Into<String>) -> Result<Self, ModelError> {
        Ok(Self::with_client(own_client()?, api_key, model))
    }

    /// A model on the Gemini API with `http`. A `models/` prefix of the
    /// name is dropped.
    pub fn with_client(
        http: HttpClient,
        api_key: impl Into<Secret>,
        model: impl Into<String>,
    ) -> Self {
        let model: String = model.into();
        let model = model
            .strip_prefix("models/")
            .map_or_else(|| model.clone(), str::to_owned);
        Self {
            settings: Settings::new(http, model, GEMINI_EMBEDDING_BATCH_SIZE),
            api_key: api_key.into(),
            base_url: GEMINI_DEFAULT_BASE_URL.to_owned(),
            task_type: None,
        }
    }

    /// A model for a Gemini credential, on `http`.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not a Gemini one.
    pub fn from_credential_on(
        http: HttpClient,
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let Credential::Gemini(c) = credential else {
            return Err(wrong_credential(
                "a Gemini embedding model needs a gemini_credential",
                credential,
            ));
        };
        Ok(Self::with_client(http, c.api_key.clone(), model))
    }

    /// Another endpoint (a proxy), version included.
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl AsRef<str>) -> Self {
        self.base_url = trimmed(base_url.as_ref());
        self
    }

    /// Sends `taskType` (`RETRIEVAL_QUERY`, `RETRIEVAL_DOCUMENT`,
    /// `SEMANTIC_SIMILARITY`, ...) with each text.
    #[must_use]
    pub fn with_task_type(mut self, task_type: impl Into<String>) -> Self {
        self.task_type = Some(task_type.into());
        self
    }

    settings_builders!();

    /// The body of one request for `texts`.
    #[must_use]
    pub fn request_body(&self, texts: &[String], dimensions: Option<NonZeroU32>) -> Value {
        let name = format!("models/{}", self.settings.model);
        let requests: Vec<Value> = texts
            .iter()
            .map(|text| {
                let mut entry = Map::new();
                entry.insert("model".to_owned(), Value::String(name.clone()));
                entry.insert("content".to_owned(), json!({"parts": [{"text": text}]}));
                if let Some(task) = &self.task_type {
                    entry.insert("taskType".to_owned(), Value::String(task.clone()));
                }
                if let Some(size) = dimensions {
                    entry.insert("outputDimensionality".to_owned(), size.get().into());
                }
                Value::Object(entry)
            })
            .collect();
        json!({ "requests": requests })
    }

    async fn call_chunk(
        &self,
        texts: &[String],
        dimensions: Option<NonZeroU32>,
    ) -> Result<EmbeddingResponse, ModelError> {
        path_safe_model("Gemini", &self.settings.model)?;
        let http = &self.settings.http;
        let request = http
            .post(format!(
                "{}/models/{}:batchEmbedContents",
                self.base_url, self.settings.model
            ))
            .header("x-goog-api-key", self.api_key.expose())
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
            embeddings: answer.embeddings.into_iter().map(|e| e.values).collect(),
            model: self.settings.model.clone(),
            usage: EmbeddingUsage::default(),
            source: EmbeddingSource::Api,
        })
    }
}

/// `(error.status, error.message)` of Google's error object.
fn error_body(body: &str) -> (Option<String>, Option<String>) {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(|v| match v {
        Value::Array(items) => items.iter().find_map(|i| i.get("error")),
        other => other.get("error"),
    });
    let field = |name: &str| {
        error
            .and_then(|e| e.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    (field("status"), field("message"))
}

impl EmbeddingModel for GeminiEmbeddingModel {
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
