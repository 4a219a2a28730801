//! What the embedding wires share: the batching settings, HTTP failures as
//! [`ModelError`]s, and checks on what a tenant may put in a URL.

use std::num::NonZeroU32;

use oxiscope_http::{Error as HttpError, HttpClient};
use oxiscope_model::{Credential, ModelError};
use serde_json::Value;

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

/// The shared HTTP client, for a model that was given none.
pub(super) fn own_client() -> Result<HttpClient, ModelError> {
    HttpClient::shared().map_err(|e| invalid(format!("cannot build the HTTP client: {e}")))
}

pub(super) fn invalid(message: String) -> ModelError {
    ModelError::InvalidRequest { message }
}

/// The error for a credential of the wrong type.
pub(super) fn wrong_credential(needs: &str, credential: &Credential) -> ModelError {
    invalid(format!(
        "{needs}, not a {}",
        credential.credential_type().as_str()
    ))
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

/// An HTTP failure of a call to `provider`; `read_body` turns an error
/// body into the provider's `(code, message)`.
pub(super) fn from_http(
    err: HttpError,
    provider: &str,
    read_body: fn(&str) -> (Option<String>, Option<String>),
) -> ModelError {
    match err {
        HttpError::RefusedAddress {
            url,
            address,
            reason,
        } => invalid(format!(
            "the model endpoint {url} resolves to {reason} ({address}), and model endpoints \
             are restricted to public addresses here; nothing was sent to it"
        )),
        HttpError::Status(status) => {
            let (code, message) = read_body(&status.body);
            let message = message.unwrap_or_else(|| {
                let body = status.body.trim();
                if body.is_empty() {
                    format!("HTTP {} with an empty body", status.status.as_u16())
                } else {
                    body.to_owned()
                }
            });
            ModelError::Provider {
                provider: provider.to_owned(),
                status: status.status.as_u16(),
                code,
                message,
                request_id: status.request_id.clone(),
                retry_after: status.retry_after,
            }
        }
        HttpError::Connect { .. } | HttpError::Timeout { .. } => ModelError::Connection {
            message: err.to_string(),
        },
        HttpError::Build { .. } | HttpError::InvalidRequest { .. } => invalid(err.to_string()),
        other => ModelError::Stream {
            message: format!("cannot read the {provider} embedding response: {other}"),
        },
    }
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
