//! The Anthropic chat model.

use std::sync::Arc;

use oxiscope_http::HttpClient;
use oxiscope_model::{
    ChatModel, ChatRequest, ChatStream, Credential, Formatter, ModelError, Secret, accumulate,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::body_cache::{self, Cached, DEFAULT_CACHE_BYTES};
use crate::common::model::{
    model_builders, own_client, whole_reply, without_trailing_slash, wrong_credential,
};

use super::error;
use super::format::AnthropicChatFormatter;
use super::params::{AnthropicParameters, DEFAULT_MAX_TOKENS};
use super::request::{self, RequestParts};
use super::{response, stream as sse};

/// The default endpoint.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// A Claude model over the Anthropic Messages API (`POST {base}/v1/messages`).
///
/// Streams by default. The conversation is formatted by an
/// [`AnthropicChatFormatter`] unless another formatter is set; its system
/// messages move into the request's `system` field. With a chat formatter,
/// each message's encoded payload is kept between calls while the message
/// keeps its shape, so a call formats only new or changed messages
/// ([`with_message_cache_bytes`](Self::with_message_cache_bytes)). `max_tokens`, which the
/// API requires, comes from the parameters, else the model card's output
/// size (with [`from_credential`](Self::from_credential)), else 4096.
///
/// # Cancel safety
/// As [`ChatModel`]: cancel the token to end the stream with what arrived,
/// marked interrupted; drop the stream to abandon the call.
#[derive(Debug, Clone)]
pub struct AnthropicChatModel {
    http: HttpClient,
    api_key: Secret,
    base_url: String,
    model: String,
    max_tokens: Option<u64>,
    params: AnthropicParameters,
    stream: bool,
    formatter: Arc<dyn Formatter>,
    /// The chat formatter with the messages it encoded; `None` for another
    /// formatter.
    cached: Option<Arc<Cached<AnthropicChatFormatter>>>,
    cache_bytes: usize,
    /// The media policy set with `with_media_policy`, for a chat formatter
    /// given later.
    media: Option<crate::MediaPolicy>,
}

impl AnthropicChatModel {
    /// A streaming model with the default client, endpoint and formatter.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(api_key: impl Into<Secret>, model: impl Into<String>) -> Result<Self, ModelError> {
        let http = own_client()?;
        Ok(Self::with_client(http, api_key, model))
    }

    /// A streaming model on an existing client (shared connection pool).
    pub fn with_client(
        http: HttpClient,
        api_key: impl Into<Secret>,
        model: impl Into<String>,
    ) -> Self {
        let formatter = AnthropicChatFormatter::new().with_http_client(http.clone());
        let cached = Cached::new(formatter.clone(), true, DEFAULT_CACHE_BYTES);
        Self {
            http,
            api_key: api_key.into(),
            base_url: DEFAULT_BASE_URL.to_owned(),
            model: model.into(),
            max_tokens: None,
            params: AnthropicParameters::default(),
            stream: true,
            formatter: Arc::new(formatter),
            cached: Some(Arc::new(cached)),
            cache_bytes: DEFAULT_CACHE_BYTES,
            media: None,
        }
    }

    /// A model for an Anthropic credential: its key and base URL, and the
    /// output size of `model`'s card as the default `max_tokens`.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not an Anthropic
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
    /// [`ModelError::InvalidRequest`] when `credential` is not an Anthropic
    /// one.
    pub fn from_credential_on(
        http: HttpClient,
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let Credential::Anthropic(c) = credential else {
            return Err(wrong_credential(
                "an Anthropic model needs an anthropic_credential",
                credential,
            ));
        };
        let model = model.into();
        let card_output = credential.list_models().ok().and_then(|cards| {
            cards
                .iter()
                .find(|card| card.name == model && card.model_class == "anthropic_chat")
                .map(|card| card.output_size.get())
        });
        let mut this = Self::with_client(http, c.api_key.clone(), model);
        if let Some(base) = c.base_url.as_deref().filter(|b| !b.is_empty()) {
            this = this.with_base_url(base);
        }
        this.max_tokens = card_output;
        Ok(this)
    }

    /// Another endpoint (a proxy, a compatible server). A trailing `/` is
    /// dropped.
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = without_trailing_slash(base_url);
        self
    }

    model_builders!(
        /// The call parameters (thinking, `max_tokens`, ...).
        AnthropicParameters,
        AnthropicChatFormatter,
        split_system: true
    );

    /// The JSON body a call with `request` sends.
    ///
    /// # Errors
    /// As [`Formatter::format`].
    pub async fn request_body(&self, request: ChatRequest<'_>) -> Result<Value, ModelError> {
        let formatted = self.formatter.format(request.messages).await?;
        Ok(request::body(&self.parts(&request), formatted))
    }

    /// The encoded JSON body a call with `request` sends: the bytes of
    /// [`request_body`](Self::request_body), with the kept messages reused.
    ///
    /// # Errors
    /// As [`Formatter::format`].
    pub async fn request_bytes(&self, request: ChatRequest<'_>) -> Result<Vec<u8>, ModelError> {
        let Some(cached) = &self.cached else {
            let body = self.request_body(request).await?;
            return Ok(body.to_string().into_bytes());
        };
        let encoded = cached.encode(request.messages).await?;
        let head = request::body_map(&self.parts(&request), Vec::new());
        body_cache::encode_body(&head, &encoded)
    }

    /// Everything of the body but the messages.
    fn parts<'a>(&'a self, request: &ChatRequest<'a>) -> RequestParts<'a> {
        RequestParts {
            model: &self.model,
            max_tokens: self
                .params
                .max_tokens
                .or(self.max_tokens)
                .unwrap_or(DEFAULT_MAX_TOKENS),
            params: &self.params,
            tools: request.tools,
            tool_choice: request.tool_choice,
            stream: self.stream,
        }
    }
}

impl ChatModel for AnthropicChatModel {
    fn model_name(&self) -> &str {
        &self.model
    }

    fn context_size(&self) -> Option<u64> {
        oxiscope_model::ModelClass::AnthropicChat.context_size_of(&self.model)
    }

    async fn call(
        &self,
        request: ChatRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<ChatStream, ModelError> {
        let body = self.request_bytes(request).await?;
        let builder = self
            .http
            .post(format!("{}/v1/messages", self.base_url))
            .header("x-api-key", self.api_key.expose())
            .header("anthropic-version", API_VERSION)
            .header("content-type", "application/json")
            .body(body);
        if self.stream {
            let events = self.http.sse(builder).await.map_err(error::from_http)?;
            return Ok(accumulate(sse::deltas(events), cancel));
        }
        let whole: Value = self
            .http
            .send_json(builder)
            .await
            .map_err(error::from_http)?;
        let deltas = response::deltas(&whole)?;
        Ok(whole_reply(deltas, cancel))
    }
}
