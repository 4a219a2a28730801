//! The MiniMax chat model: the Anthropic one, configured.

use std::sync::Arc;

use futures_util::StreamExt;
use oxiscope_http::HttpClient;
use oxiscope_model::{
    ChatModel, ChatRequest, ChatStream, Credential, Formatter, MiniMaxCredential, ModelClass,
    ModelError, Secret,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::MediaPolicy;
use crate::anthropic::AnthropicChatModel;
use crate::common::model::{own_client, wrong_credential};

use super::error;
use super::format::MiniMaxChatFormatter;
use super::params::MiniMaxParameters;

/// The default endpoint (the international service; the mainland China one
/// is `https://api.minimaxi.com/anthropic`).
pub const DEFAULT_BASE_URL: &str = MiniMaxCredential::DEFAULT_BASE_URL;

/// A MiniMax model (`MiniMax-M3`, `MiniMax-M2.7`, ...) over MiniMax's
/// Anthropic-compatible API (`POST {base}/v1/messages`).
///
/// The request, the streamed events and the whole replies are Anthropic
/// Messages, handled by [`AnthropicChatModel`]; this type sets what MiniMax
/// does differently: the endpoint, a [`MiniMaxChatFormatter`] (images and
/// videos), [`MiniMaxParameters`] (thinking is `{"type": "adaptive"}`,
/// without a budget), the model cards of `minimax_chat` for `max_tokens`
/// and the context size, and errors that name `minimax`.
///
/// ```
/// use oxiscope_model::{ChatModel, Credential, MiniMaxCredential};
/// use oxiscope_providers::minimax::MiniMaxChatModel;
///
/// let credential = Credential::from(MiniMaxCredential::new("key"));
/// let model = MiniMaxChatModel::from_credential(&credential, "MiniMax-M3")?;
/// assert_eq!(model.model_name(), "MiniMax-M3");
/// assert_eq!(model.context_size(), Some(1_000_000));
/// # Ok::<(), oxiscope_model::ModelError>(())
/// ```
///
/// # Cancel safety
/// As [`ChatModel`]: cancel the token to end the stream with what arrived,
/// marked interrupted; drop the stream to abandon the call.
#[derive(Debug, Clone)]
pub struct MiniMaxChatModel {
    inner: AnthropicChatModel,
    params: MiniMaxParameters,
    /// The card's output size, the `max_tokens` when the parameters give none.
    card_max_tokens: Option<u64>,
}

impl MiniMaxChatModel {
    /// A streaming model with the default client, endpoint and formatter.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(api_key: impl Into<Secret>, model: impl Into<String>) -> Result<Self, ModelError> {
        Ok(Self::with_client(own_client()?, api_key, model))
    }

    /// A streaming model on an existing client (shared connection pool).
    pub fn with_client(
        http: HttpClient,
        api_key: impl Into<Secret>,
        model: impl Into<String>,
    ) -> Self {
        let formatter = MiniMaxChatFormatter::new().with_http_client(http.clone());
        let inner = AnthropicChatModel::with_client(http, api_key, model)
            .with_base_url(DEFAULT_BASE_URL)
            .with_chat_formatter(formatter.into_anthropic());
        let params = MiniMaxParameters::default();
        Self {
            inner: inner.with_parameters(params.anthropic(None)),
            params,
            card_max_tokens: None,
        }
    }

    /// A model for a MiniMax credential: its key and base URL, and the
    /// output size of `model`'s card as the default `max_tokens`.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not a MiniMax
    /// one, or the HTTP client cannot be built.
    pub fn from_credential(
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        Self::from_credential_on(own_client()?, credential, model)
    }

    /// As [`from_credential`](Self::from_credential), on an existing client
    /// (e.g. one restricted to public addresses).
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not a MiniMax one.
    pub fn from_credential_on(
        http: HttpClient,
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let Credential::MiniMax(c) = credential else {
            return Err(wrong_credential(
                "a MiniMax model needs a minimax_credential",
                credential,
            ));
        };
        let model = model.into();
        let card_max_tokens = credential.list_models().ok().and_then(|cards| {
            cards
                .iter()
                .find(|card| {
                    card.name == model && card.model_class == ModelClass::MiniMaxChat.as_str()
                })
                .map(|card| card.output_size.get())
        });
        let mut this = Self::with_client(http, c.api_key.clone(), model);
        if !c.base_url.is_empty() {
            this = this.with_base_url(c.base_url.clone());
        }
        this.card_max_tokens = card_max_tokens;
        let params = this.params.clone();
        Ok(this.with_parameters(params))
    }

    /// Another endpoint (a proxy, the mainland China service). A trailing
    /// `/` is dropped.
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.inner = self.inner.with_base_url(base_url);
        self
    }

    /// The call parameters (`max_tokens`, `thinking_enable`).
    #[must_use]
    pub fn with_parameters(mut self, params: MiniMaxParameters) -> Self {
        self.inner = self
            .inner
            .with_parameters(params.anthropic(self.card_max_tokens));
        self.params = params;
        self
    }

    /// Streams (`true`, the default) or asks for the whole reply at once.
    #[must_use]
    pub fn with_stream(mut self, stream: bool) -> Self {
        self.inner = self.inner.with_stream(stream);
        self
    }

    /// Another formatter (for example [`MiniMaxMultiAgentFormatter`](super::MiniMaxMultiAgentFormatter)).
    /// It formats the whole conversation on every call.
    #[must_use]
    pub fn with_formatter(mut self, formatter: Arc<dyn Formatter>) -> Self {
        self.inner = self.inner.with_formatter(formatter);
        self
    }

    /// Another chat formatter (other media types or limits). Its output for
    /// each message is kept between calls, as with the default one. A media
    /// policy set on the model replaces the formatter's.
    #[must_use]
    pub fn with_chat_formatter(mut self, formatter: MiniMaxChatFormatter) -> Self {
        self.inner = self.inner.with_chat_formatter(formatter.into_anthropic());
        self
    }

    /// Reads and downloads media as `policy` allows (default: any local
    /// file, any URL), for the chat formatter.
    #[must_use]
    pub fn with_media_policy(mut self, policy: MediaPolicy) -> Self {
        self.inner = self.inner.with_media_policy(policy);
        self
    }

    /// Caps the encoded messages kept between calls at `max_bytes` (default
    /// 64 MiB); `0` turns keeping them off.
    #[must_use]
    pub fn with_message_cache_bytes(mut self, max_bytes: usize) -> Self {
        self.inner = self.inner.with_message_cache_bytes(max_bytes);
        self
    }

    /// The formatter in use.
    #[must_use]
    pub fn formatter(&self) -> &Arc<dyn Formatter> {
        self.inner.formatter()
    }

    /// The parameters in use.
    #[must_use]
    pub fn parameters(&self) -> &MiniMaxParameters {
        &self.params
    }

    /// The JSON body a call with `request` sends.
    ///
    /// # Errors
    /// As [`Formatter::format`].
    pub async fn request_body(&self, request: ChatRequest<'_>) -> Result<Value, ModelError> {
        self.inner.request_body(request).await
    }

    /// The encoded JSON body a call with `request` sends.
    ///
    /// # Errors
    /// As [`Formatter::format`].
    pub async fn request_bytes(&self, request: ChatRequest<'_>) -> Result<Vec<u8>, ModelError> {
        self.inner.request_bytes(request).await
    }
}

impl ChatModel for MiniMaxChatModel {
    fn model_name(&self) -> &str {
        self.inner.model_name()
    }

    fn context_size(&self) -> Option<u64> {
        ModelClass::MiniMaxChat.context_size_of(self.inner.model_name())
    }

    async fn call(
        &self,
        request: ChatRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<ChatStream, ModelError> {
        let stream = self
            .inner
            .call(request, cancel)
            .await
            .map_err(error::rename)?;
        Ok(stream.map(|item| item.map_err(error::rename)).boxed())
    }
}
