//! The Gemini chat model.

use std::sync::Arc;

use oxiscope_http::HttpClient;
use oxiscope_message::{Msg, Role};
use oxiscope_model::{
    ChatModel, ChatRequest, ChatStream, Credential, Formatter, ModelError, Secret, accumulate,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::common::model::{own_client, whole_reply, without_trailing_slash, wrong_credential};

use super::error;
use super::format::GeminiChatFormatter;
use super::params::GeminiParameters;
use super::request::{self, RequestParts};
use super::stream as sse;

/// The default endpoint, API version included.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// A Gemini model over the Gemini API: `POST
/// {base}/models/{model}:streamGenerateContent?alt=sse`, or
/// `:generateContent` with streaming off. The key goes in
/// `x-goog-api-key`.
///
/// The leading system messages become the request's `systemInstruction`;
/// the rest of the conversation is formatted by a [`GeminiChatFormatter`]
/// unless another formatter is set. Tool schemas are rewritten into the
/// subset of JSON Schema Gemini accepts ([`sanitize_schema`](super::sanitize_schema)).
/// Function calls keep their `thoughtSignature` on the reply's thinking
/// block, and the formatter puts it back, as Gemini 3 requires.
///
/// A reply Gemini stops for safety, recitation or a malformed function
/// call, or a blocked prompt, ends the stream with a
/// [`ModelError::Provider`] naming the reason.
///
/// # Cancel safety
/// As [`ChatModel`]: cancel the token to end the stream with what arrived,
/// marked interrupted; drop the stream to abandon the call.
#[derive(Debug, Clone)]
pub struct GeminiChatModel {
    http: HttpClient,
    api_key: Secret,
    base_url: String,
    model: String,
    params: GeminiParameters,
    stream: bool,
    formatter: Arc<dyn Formatter>,
    /// The chat formatter in use, `None` after `with_formatter`.
    chat: Option<GeminiChatFormatter>,
    /// The media policy set with `with_media_policy`, for a chat formatter
    /// given later.
    media: Option<crate::MediaPolicy>,
}

impl GeminiChatModel {
    /// A streaming model with the default client, endpoint and formatter.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(api_key: impl Into<Secret>, model: impl Into<String>) -> Result<Self, ModelError> {
        Ok(Self::with_client(own_client()?, api_key, model))
    }

    /// A streaming model on an existing client (shared connection pool).
    /// A `models/` prefix of the name is dropped.
    pub fn with_client(
        http: HttpClient,
        api_key: impl Into<Secret>,
        model: impl Into<String>,
    ) -> Self {
        let model: String = model.into();
        let model = model
            .strip_prefix("models/")
            .map_or_else(|| model.clone(), str::to_owned);
        let formatter = GeminiChatFormatter::new().with_http_client(http.clone());
        Self {
            http,
            api_key: api_key.into(),
            base_url: DEFAULT_BASE_URL.to_owned(),
            model,
            params: GeminiParameters::default(),
            stream: true,
            formatter: Arc::new(formatter.clone()),
            chat: Some(formatter),
            media: None,
        }
    }

    /// A model for a Gemini credential.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not a Gemini one,
    /// or the HTTP client cannot be built.
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
    /// [`ModelError::InvalidRequest`] when `credential` is not a Gemini one.
    pub fn from_credential_on(
        http: HttpClient,
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let Credential::Gemini(c) = credential else {
            return Err(wrong_credential(
                "a Gemini model needs a gemini_credential",
                credential,
            ));
        };
        Ok(Self::with_client(http, c.api_key.clone(), model))
    }

    /// Another endpoint (a proxy), API version included
    /// (`https://proxy.example/v1beta`). A trailing `/` is dropped.
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = without_trailing_slash(base_url);
        self
    }

    /// The call parameters (thinking, `max_tokens`, ...).
    #[must_use]
    pub fn with_parameters(mut self, params: GeminiParameters) -> Self {
        self.params = params;
        self
    }

    /// Streams (`true`, the default) or asks for the whole reply at once.
    #[must_use]
    pub fn with_stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// Another formatter (for example the multi-agent one); it keeps its
    /// own media rules.
    #[must_use]
    pub fn with_formatter(mut self, formatter: Arc<dyn Formatter>) -> Self {
        self.formatter = formatter;
        self.chat = None;
        self
    }

    /// Another chat formatter (other media types or limits). A media policy
    /// set on the model replaces the formatter's.
    #[must_use]
    pub fn with_chat_formatter(mut self, formatter: GeminiChatFormatter) -> Self {
        let formatter = match &self.media {
            Some(policy) => formatter.with_media_policy(policy.clone()),
            None => formatter,
        };
        self.formatter = Arc::new(formatter.clone());
        self.chat = Some(formatter);
        self
    }

    /// Reads and downloads media as `policy` allows (default: any local
    /// file, any URL). It applies to the chat formatter, the default one or
    /// one given with `with_chat_formatter` before or after this call.
    #[must_use]
    pub fn with_media_policy(mut self, policy: crate::MediaPolicy) -> Self {
        self.media = Some(policy);
        match self.chat.take() {
            Some(chat) => self.with_chat_formatter(chat),
            None => self,
        }
    }

    /// The formatter in use.
    #[must_use]
    pub fn formatter(&self) -> &Arc<dyn Formatter> {
        &self.formatter
    }

    /// The JSON body a call with `request` sends.
    ///
    /// # Errors
    /// As [`Formatter::format`].
    pub async fn request_body(&self, request: ChatRequest<'_>) -> Result<Value, ModelError> {
        let (system, rest) = leading_system(request.messages);
        let contents = self.formatter.format(rest).await?;
        let parts = RequestParts {
            system,
            params: &self.params,
            tools: request.tools,
            tool_choice: request.tool_choice,
        };
        Ok(request::body(&parts, contents))
    }

    /// The URL of a call, refusing a model name that is not one path
    /// segment of plain characters (it comes from configuration a tenant
    /// writes).
    fn url(&self) -> Result<String, ModelError> {
        let valid = !self.model.is_empty()
            && !self.model.starts_with('.')
            && self
                .model
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !valid {
            return Err(ModelError::InvalidRequest {
                message: format!(
                    "{:?} is not a Gemini model name (letters, digits, '-', '_' and '.')",
                    self.model
                ),
            });
        }
        Ok(if self.stream {
            format!(
                "{}/models/{}:streamGenerateContent?alt=sse",
                self.base_url, self.model
            )
        } else {
            format!("{}/models/{}:generateContent", self.base_url, self.model)
        })
    }
}

/// The text of the leading system messages (joined by a blank line), and
/// the messages after them.
fn leading_system(msgs: &[Msg]) -> (Option<String>, &[Msg]) {
    let count = msgs.iter().take_while(|m| m.role == Role::System).count();
    let (system, rest) = msgs.split_at(count);
    let texts: Vec<String> = system
        .iter()
        .map(|m| m.text("\n"))
        .filter(|t| !t.is_empty())
        .collect();
    let system = (!texts.is_empty()).then(|| texts.join("\n\n"));
    (system, rest)
}

impl ChatModel for GeminiChatModel {
    fn model_name(&self) -> &str {
        &self.model
    }

    fn context_size(&self) -> Option<u64> {
        oxiscope_model::ModelClass::GeminiChat.context_size_of(&self.model)
    }

    async fn call(
        &self,
        request: ChatRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<ChatStream, ModelError> {
        let url = self.url()?;
        let body = self.request_body(request).await?;
        let body = serde_json::to_vec(&body).map_err(|e| ModelError::InvalidRequest {
            message: format!("cannot encode the request: {e}"),
        })?;
        let builder = self
            .http
            .post(url)
            .header("x-goog-api-key", self.api_key.expose())
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
        Ok(whole_reply(sse::whole(&whole)?, cancel))
    }
}
