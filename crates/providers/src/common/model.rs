//! Chat-model plumbing shared by the Anthropic and Ollama models.

use futures_util::stream::{self, StreamExt};
use oxiscope_http::HttpClient;
use oxiscope_model::{ChatStream, Credential, ModelDelta, ModelError, accumulate};
use tokio_util::sync::CancellationToken;

/// A new HTTP client for a model that was given none.
pub(crate) fn own_client() -> Result<HttpClient, ModelError> {
    HttpClient::shared().map_err(|e| ModelError::InvalidRequest {
        message: e.to_string(),
    })
}

/// The error for a credential of the wrong type: `needs` (`an Ollama model
/// needs an ollama_credential`), then the type it got.
pub(crate) fn wrong_credential(needs: &str, credential: &Credential) -> ModelError {
    ModelError::InvalidRequest {
        message: format!("{needs}, not a {}", credential.credential_type().as_str()),
    }
}

/// `url` without its trailing `/`s.
pub(crate) fn without_trailing_slash(url: impl Into<String>) -> String {
    let url: String = url.into();
    url.trim_end_matches('/').to_owned()
}

/// The deltas of a whole (not streamed) reply as a chat stream.
pub(crate) fn whole_reply(deltas: Vec<ModelDelta>, cancel: CancellationToken) -> ChatStream {
    accumulate(stream::iter(deltas.into_iter().map(Ok)).boxed(), cancel)
}

/// An HTTP failure of a call to `provider`. `read_body` turns the body of
/// an error status into the API's `(code, message)`.
pub(crate) fn from_http(
    err: oxiscope_http::Error,
    provider: &str,
    read_body: impl FnOnce(&str) -> (Option<String>, String),
) -> ModelError {
    use oxiscope_http::Error as E;
    if let Some(refused) = crate::media::refused_endpoint(&err) {
        return refused;
    }
    match err {
        E::Status(status) => {
            let (code, message) = read_body(&status.body);
            ModelError::Provider {
                provider: provider.to_owned(),
                status: status.status.as_u16(),
                code,
                message,
                request_id: status.request_id.clone(),
                retry_after: status.retry_after,
            }
        }
        E::Connect { .. } | E::Timeout { .. } => ModelError::Connection {
            message: err.to_string(),
        },
        E::Build { .. } | E::InvalidRequest { .. } => ModelError::InvalidRequest {
            message: err.to_string(),
        },
        other => ModelError::Stream {
            message: other.to_string(),
        },
    }
}

/// The builders of a chat model with `params`, `stream`, `formatter`,
/// `cached` (the chat formatter `$chat` with its message cache, `None` for
/// another formatter), `media` (the media policy set on the model) and
/// `cache_bytes` fields: `with_parameters` (documented by the given
/// attributes), `with_stream`, `with_formatter`, `with_chat_formatter`,
/// `with_media_policy`, `with_message_cache_bytes` and `formatter`.
/// `split_system` says whether system messages go to the body's own field.
macro_rules! model_builders {
    ($(#[$params_meta:meta])* $params:ty, $chat:ty, split_system: $split:expr) => {
        $(#[$params_meta])*
        #[must_use]
        pub fn with_parameters(mut self, params: $params) -> Self {
            self.params = params;
            self
        }

        /// Streams (`true`, the default) or asks for the whole reply at once.
        #[must_use]
        pub fn with_stream(mut self, stream: bool) -> Self {
            self.stream = stream;
            self
        }

        /// Another formatter (for example the multi-agent one). It formats
        /// the whole conversation on every call: unlike the chat formatter,
        /// it may join neighbouring messages, so nothing is kept between
        /// calls.
        #[must_use]
        pub fn with_formatter(
            mut self,
            formatter: std::sync::Arc<dyn oxiscope_model::Formatter>,
        ) -> Self {
            self.formatter = formatter;
            self.cached = None;
            self
        }

        /// Another chat formatter (other media types or limits). Its output
        /// for each message is kept between calls, as with the default one.
        /// A media policy set on the model replaces the formatter's.
        #[must_use]
        pub fn with_chat_formatter(mut self, formatter: $chat) -> Self {
            let formatter = match &self.media {
                Some(policy) => formatter.with_media_policy(policy.clone()),
                None => formatter,
            };
            self.formatter = std::sync::Arc::new(formatter.clone());
            self.cached = Some(std::sync::Arc::new($crate::body_cache::Cached::new(
                formatter,
                $split,
                self.cache_bytes,
            )));
            self
        }

        /// Reads and downloads media as `policy` allows (default: any local
        /// file, any URL). It applies to the chat formatter, the default one
        /// or one given with `with_chat_formatter` before or after this
        /// call; a formatter given with `with_formatter` keeps its own rules.
        #[must_use]
        pub fn with_media_policy(mut self, policy: $crate::MediaPolicy) -> Self {
            self.media = Some(policy);
            match self.cached.take() {
                Some(cached) => self.with_chat_formatter(cached.formatter().clone()),
                None => self,
            }
        }

        /// Caps the encoded messages kept between calls at `max_bytes`
        /// (default 64 MiB; the least recently used go first); `0` turns
        /// keeping them off. With the chat formatter, a call formats only
        /// the messages that are new or changed since they were kept.
        #[must_use]
        pub fn with_message_cache_bytes(mut self, max_bytes: usize) -> Self {
            self.cache_bytes = max_bytes;
            self.cached = self
                .cached
                .map(|cached| std::sync::Arc::new(cached.resized(max_bytes)));
            self
        }

        /// The formatter in use.
        #[must_use]
        pub fn formatter(&self) -> &std::sync::Arc<dyn oxiscope_model::Formatter> {
            &self.formatter
        }
    };
}

pub(crate) use model_builders;
