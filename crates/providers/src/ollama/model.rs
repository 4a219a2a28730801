//! The Ollama chat model.

use std::sync::Arc;

use futures_util::stream::StreamExt;
use oxiscope_http::HttpClient;
use oxiscope_model::{
    ChatModel, ChatRequest, ChatStream, Credential, Formatter, ModelError, OllamaCredential,
    accumulate,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::body_cache::{self, Cached, DEFAULT_CACHE_BYTES};
use crate::common::model::{
    model_builders, own_client, whole_reply, without_trailing_slash, wrong_credential,
};

use super::format::OllamaChatFormatter;
use super::params::OllamaParameters;
use super::request;
use super::stream::{self as ndjson, Decoder, from_http};

/// A model served by Ollama's native chat API (`POST {host}/api/chat`).
///
/// Streams newline-delimited JSON by default. The host defaults to
/// `http://localhost:11434`; reading `OLLAMA_HOST` is left to the caller.
///
/// # Cancel safety
/// As [`ChatModel`]: cancel the token to end the stream with what arrived,
/// marked interrupted; drop the stream to abandon the call.
#[derive(Debug, Clone)]
pub struct OllamaChatModel {
    http: HttpClient,
    host: String,
    model: String,
    params: OllamaParameters,
    stream: bool,
    formatter: Arc<dyn Formatter>,
    /// The chat formatter with the messages it encoded; `None` for another
    /// formatter.
    cached: Option<Arc<Cached<OllamaChatFormatter>>>,
    cache_bytes: usize,
    /// The media policy set with `with_media_policy`, for a chat formatter
    /// given later.
    media: Option<crate::MediaPolicy>,
}

impl OllamaChatModel {
    /// A streaming model on the default host, with its own HTTP client.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(model: impl Into<String>) -> Result<Self, ModelError> {
        let http = own_client()?;
        Ok(Self::with_client(http, model))
    }

    /// A streaming model on the default host, on an existing client.
    pub fn with_client(http: HttpClient, model: impl Into<String>) -> Self {
        let formatter = OllamaChatFormatter::new().with_http_client(http.clone());
        let cached = Cached::new(formatter.clone(), false, DEFAULT_CACHE_BYTES);
        Self {
            http,
            host: OllamaCredential::DEFAULT_HOST.to_owned(),
            model: model.into(),
            params: OllamaParameters::default(),
            stream: true,
            formatter: Arc::new(formatter),
            cached: Some(Arc::new(cached)),
            cache_bytes: DEFAULT_CACHE_BYTES,
            media: None,
        }
    }

    /// A model for an Ollama credential (its host, when set).
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not an Ollama
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
    /// [`ModelError::InvalidRequest`] when `credential` is not an Ollama
    /// one.
    pub fn from_credential_on(
        http: HttpClient,
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let Credential::Ollama(c) = credential else {
            return Err(wrong_credential(
                "an Ollama model needs an ollama_credential",
                credential,
            ));
        };
        let mut this = Self::with_client(http, model);
        if let Some(host) = c.host.as_deref().filter(|h| !h.is_empty()) {
            this = this.with_host(host);
        }
        Ok(this)
    }

    /// Another server (`http://gpu-box:11434`). A trailing `/` is dropped.
    #[must_use]
    pub fn with_host(mut self, host: impl Into<String>) -> Self {
        self.host = without_trailing_slash(host);
        self
    }

    model_builders!(
        /// The call parameters (`think`, options).
        OllamaParameters,
        OllamaChatFormatter,
        split_system: false
    );

    /// The JSON body a call with `request` sends.
    ///
    /// # Errors
    /// As [`Formatter::format`].
    pub async fn request_body(&self, request: ChatRequest<'_>) -> Result<Value, ModelError> {
        let messages = self.formatter.format(request.messages).await?;
        Ok(request::body(
            &self.model,
            &self.params,
            messages,
            request.tools,
            request.tool_choice,
            self.stream,
        ))
    }

    /// The encoded JSON body a call with `request` sends: the bytes of
    /// [`request_body`](Self::request_body), with the messages kept from
    /// earlier calls reused (see
    /// [`with_message_cache_bytes`](Self::with_message_cache_bytes)).
    ///
    /// # Errors
    /// As [`Formatter::format`].
    pub async fn request_bytes(&self, request: ChatRequest<'_>) -> Result<Vec<u8>, ModelError> {
        let Some(cached) = &self.cached else {
            let body = self.request_body(request).await?;
            return Ok(body.to_string().into_bytes());
        };
        let encoded = cached.encode(request.messages).await?;
        let head = request::body_map(
            &self.model,
            &self.params,
            Vec::new(),
            request.tools,
            request.tool_choice,
            self.stream,
        );
        body_cache::encode_body(&head, &encoded)
    }
}

impl ChatModel for OllamaChatModel {
    fn model_name(&self) -> &str {
        &self.model
    }

    fn context_size(&self) -> Option<u64> {
        oxiscope_model::ModelClass::OllamaChat.context_size_of(&self.model)
    }

    async fn call(
        &self,
        request: ChatRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<ChatStream, ModelError> {
        let body = self.request_bytes(request).await?;
        let builder = self
            .http
            .post(format!("{}/api/chat", self.host))
            .header("content-type", "application/json")
            .body(body);
        if self.stream {
            let lines = self
                .http
                .ndjson::<Value>(builder)
                .await
                .map_err(from_http)?;
            return Ok(accumulate(ndjson::deltas(lines.boxed()), cancel));
        }
        let whole: Value = self.http.send_json(builder).await.map_err(from_http)?;
        let deltas = Decoder::default().line(&whole)?;
        Ok(whole_reply(deltas, cancel))
    }
}
