//! What the embedding wires share: the batching settings, HTTP failures as
//! [`ModelError`]s, and checks on what a tenant may put in a URL.

use std::num::NonZeroU32;

use oxiscope_http::{Error as HttpError, HttpClient};
use oxiscope_model::ModelError;
use serde_json::Value;

pub(super) use crate::wire::{ReadBody, invalid, own_client, wrong_credential};

/// Settings every embedding model has: its client, name, vector size and
/// how requests are split.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    pub(super) http: HttpClient,
    pub(super) model: String,
    pub(super) dimensions: Option<NonZeroU32>,
    pub(super) batch_size: usize,
    pub(super) concurrency: usize,
}

impl Settings {
    pub(super) fn new(http: HttpClient, model: String, batch_size: usize) -> Self {
        Self {
            http,
            model,
            dimensions: None,
            batch_size,
            concurrency: oxiscope_model::DEFAULT_EMBEDDING_CONCURRENCY,
        }
    }
}

/// `url` without its trailing `/`s.
pub(super) fn trimmed(url: &str) -> String {
    url.trim_end_matches('/').to_owned()
}

/// Refuses a model name that would change the URL it is put in (it comes
/// from configuration a tenant writes): one path segment of letters,
/// digits, `-`, `_` and `.`, not starting with `.`.
pub(super) fn path_safe_model(provider: &str, model: &str) -> Result<(), ModelError> {
    let valid = !model.is_empty()
        && !model.starts_with('.')
        && model
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if valid {
        Ok(())
    } else {
        Err(invalid(format!(
            "{model:?} is not a {provider} model name (letters, digits, '-', '_' and '.')"
        )))
    }
}

/// An HTTP failure of an embedding call to `provider`.
pub(super) fn from_http(err: HttpError, provider: &str, read_body: ReadBody) -> ModelError {
    crate::wire::from_http(err, provider, read_body, "embedding response")
}

/// A string or number as text.
pub(super) fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The error for an answer that does not fit the request.
pub(super) fn malformed(provider: &str, what: &str) -> ModelError {
    ModelError::Stream {
        message: format!("malformed {provider} embedding response: {what}"),
    }
}

/// The builder methods every embedding model has, on a `settings` field.
macro_rules! settings_builders {
    () => {
        /// Asks for vectors of `dimensions` values (unless a request asks
        /// for another size); without it the provider's default size is
        /// used and no size is sent.
        #[must_use]
        pub fn with_dimensions(mut self, dimensions: std::num::NonZeroU32) -> Self {
            self.settings.dimensions = Some(dimensions);
            self
        }

        /// Sends at most `batch_size` texts per request (at least 1).
        #[must_use]
        pub fn with_batch_size(mut self, batch_size: usize) -> Self {
            self.settings.batch_size = batch_size.max(1);
            self
        }

        /// Keeps at most `concurrency` requests of one call in flight (at
        /// least 1; default
        /// [`DEFAULT_EMBEDDING_CONCURRENCY`](oxiscope_model::DEFAULT_EMBEDDING_CONCURRENCY)).
        #[must_use]
        pub fn with_concurrency(mut self, concurrency: usize) -> Self {
            self.settings.concurrency = concurrency.max(1);
            self
        }

        /// Uses another HTTP client (its retry policy applies to each
        /// request).
        #[must_use]
        pub fn with_http_client(mut self, http: oxiscope_http::HttpClient) -> Self {
            self.settings.http = http;
            self
        }
    };
}

/// The `model_name` and `dimensions` of [`EmbeddingModel`](oxiscope_model::EmbeddingModel)
/// from a `settings` field.
macro_rules! settings_accessors {
    () => {
        fn model_name(&self) -> &str {
            &self.settings.model
        }

        fn dimensions(&self) -> Option<std::num::NonZeroU32> {
            self.settings.dimensions
        }
    };
}

pub(super) use {settings_accessors, settings_builders};
