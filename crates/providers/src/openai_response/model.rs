//! The OpenAI Responses API chat model.

use std::any::Any;
use std::sync::Arc;

use futures_util::stream::{self, StreamExt};
use oxiscope_http::HttpClient;
use oxiscope_model::{
    ChatModel, ChatRequest, ChatStream, Credential, Formatter, ModelClass, ModelError, Secret,
    accumulate,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::error;
use super::format::OpenAiResponseFormatter;
use super::params::OpenAiResponseParameters;
use super::request::{self, RequestParts};
use super::stream as sse;
use crate::MediaPolicy;
use crate::openai_chat::Vendor;

/// A model over the OpenAI Responses API (`POST {base}/responses`, the base
/// being `https://api.openai.com/v1` unless the credential names another).
///
/// Streams by default. The conversation is formatted by an
/// [`OpenAiResponseFormatter`] unless another formatter is set. Calls are
/// stateless (`store: false`): the whole conversation is sent each time,
/// and reasoning is replayed from the thinking blocks. When reasoning is
/// asked for (`thinking_enable` or `reasoning_effort`), the request
/// includes `reasoning.encrypted_content`, which comes back on each
/// thinking block and goes back in the next request; a reasoning item kept
/// with only its id is left out of a request that stores nothing.
///
/// ```
/// use oxiscope_model::ChatModel;
/// use oxiscope_providers::openai_response::{OpenAiResponseModel, OpenAiResponseParameters};
///
/// let model = OpenAiResponseModel::new("sk-test", "o4-mini")?
///     .with_parameters(OpenAiResponseParameters::default().with_reasoning_effort("low"));
/// assert_eq!(model.model_name(), "o4-mini");
/// assert_eq!(model.base_url(), "https://api.openai.com/v1");
/// # Ok::<(), oxiscope_model::ModelError>(())
/// ```
///
/// # Cancel safety
/// As [`ChatModel`]: cancel the token to end the stream with what arrived,
/// marked interrupted; drop the stream to abandon the call.
#[derive(Debug, Clone)]
pub struct OpenAiResponseModel {
    http: HttpClient,
    api_key: Secret,
    organization: Option<String>,
    base_url: String,
    model: String,
    params: OpenAiResponseParameters,
    stream: bool,
    store: bool,
    encrypted_reasoning: Option<bool>,
    instructions: Option<String>,
    formatter: Arc<dyn Formatter>,
    /// `formatter` when it is an [`OpenAiResponseFormatter`].
    chat: Option<OpenAiResponseFormatter>,
    /// The media policy set on the model, applied to a chat formatter.
    media: Option<MediaPolicy>,
}

impl OpenAiResponseModel {
    /// A streaming model with the shared client, OpenAI's endpoint and the
    /// chat formatter.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(api_key: impl Into<Secret>, model: impl Into<String>) -> Result<Self, ModelError> {
        let http = HttpClient::shared().map_err(|e| ModelError::InvalidRequest {
            message: format!("cannot build the HTTP client: {e}"),
        })?;
        Ok(Self::with_client(http, api_key, model))
    }

    /// A streaming model on an existing client (shared connection pool).
    pub fn with_client(
        http: HttpClient,
        api_key: impl Into<Secret>,
        model: impl Into<String>,
    ) -> Self {
        let formatter = OpenAiResponseFormatter::new().with_http_client(http.clone());
        let base_url = Vendor::OpenAi
            .default_base_url()
            .unwrap_or("https://api.openai.com/v1");
        Self {
            http,
            api_key: api_key.into(),
            organization: None,
            base_url: base_url.to_owned(),
            model: model.into(),
            params: OpenAiResponseParameters::default(),
            stream: true,
            store: false,
            encrypted_reasoning: None,
            instructions: None,
            formatter: Arc::new(formatter.clone()),
            chat: Some(formatter),
            media: None,
        }
    }

    /// A model for an OpenAI credential (key, organization, base URL), on
    /// `http` (e.g. a client restricted to public addresses).
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not an OpenAI one.
    pub fn from_credential_on(
        http: HttpClient,
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let Credential::OpenAi(c) = credential else {
            return Err(ModelError::InvalidRequest {
                message: format!(
                    "an OpenAI Responses model needs an openai_credential, not a {}",
                    credential.credential_type().as_str()
                ),
            });
        };
        let mut this = Self::with_client(http, c.api_key.clone(), model);
        this.organization.clone_from(&c.organization);
        if let Some(base) = c.base_url.as_deref().filter(|b| !b.trim().is_empty()) {
            this = this.with_base_url(base);
        }
        Ok(this)
    }

    /// As [`from_credential_on`](Self::from_credential_on), on the shared
    /// client.
    ///
    /// # Errors
    /// As [`from_credential_on`](Self::from_credential_on), and when the
    /// HTTP client cannot be built.
    pub fn from_credential(
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let http = HttpClient::shared().map_err(|e| ModelError::InvalidRequest {
            message: format!("cannot build the HTTP client: {e}"),
        })?;
        Self::from_credential_on(http, credential, model)
    }

    /// Another endpoint, e.g. `https://proxy.example/v1` (a trailing `/` is
    /// dropped; `/responses` is appended).
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into().trim_end_matches('/').to_owned();
        self
    }

    /// The `OpenAI-Organization` header.
    #[must_use]
    pub fn with_organization(mut self, organization: impl Into<String>) -> Self {
        self.organization = Some(organization.into());
        self
    }

    /// The generation parameters.
    #[must_use]
    pub fn with_parameters(mut self, params: OpenAiResponseParameters) -> Self {
        self.params = params;
        self
    }

    /// Streams (`true`, the default) or asks for the whole reply at once.
    #[must_use]
    pub fn with_stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// Lets the provider keep responses (`store: true`); off by default,
    /// since every call sends the whole conversation.
    #[must_use]
    pub fn with_store(mut self, store: bool) -> Self {
        self.store = store;
        self
    }

    /// Whether to ask for `reasoning.encrypted_content`, whatever the
    /// parameters say (by default: when reasoning is asked for). Models
    /// that do not reason refuse it.
    #[must_use]
    pub fn with_encrypted_reasoning(mut self, include: bool) -> Self {
        self.encrypted_reasoning = Some(include);
        self
    }

    /// The request's `instructions` (sent besides any system message).
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Another formatter (for example the multi-agent one). A media policy
    /// set on the model applies to it when it is an
    /// [`OpenAiResponseFormatter`].
    #[must_use]
    pub fn with_formatter(mut self, formatter: impl Formatter + 'static) -> Self {
        let any: &dyn Any = &formatter;
        self.chat = any.downcast_ref::<OpenAiResponseFormatter>().cloned();
        self.formatter = Arc::new(formatter);
        match self.media.clone() {
            Some(policy) => self.with_media_policy(policy),
            None => self,
        }
    }

    /// Reads `file://` media as `policy` allows; applies to the chat
    /// formatter, the default one or one given before or after this call.
    /// Calls go to the endpoint through the model's client, whose address
    /// rules the factory sets from the same policy.
    #[must_use]
    pub fn with_media_policy(mut self, policy: MediaPolicy) -> Self {
        if let Some(chat) = self.chat.take() {
            let chat = chat.with_media_policy(policy.clone());
            self.formatter = Arc::new(chat.clone());
            self.chat = Some(chat);
        }
        self.media = Some(policy);
        self
    }

    /// The endpoint, without `/responses`.
    #[must_use]
    pub fn base_url(&self) -> &str {
        &self.base_url
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
        let input = self.formatter.format(request.messages).await?;
        let parts = RequestParts {
            model: &self.model,
            instructions: self.instructions.as_deref(),
            params: &self.params,
            tools: request.tools,
            tool_choice: request.tool_choice,
            stream: self.stream,
            store: self.store,
            encrypted_reasoning: self
                .encrypted_reasoning
                .unwrap_or_else(|| self.params.reasoning_requested()),
        };
        Ok(request::body(&parts, input))
    }
}

impl ChatModel for OpenAiResponseModel {
    fn model_name(&self) -> &str {
        &self.model
    }

    fn context_size(&self) -> Option<u64> {
        ModelClass::OpenAiResponse.context_size_of(&self.model)
    }

    /// Formats the conversation, sends it, and returns the accumulated
    /// response stream.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the messages cannot be formatted
    /// or the endpoint is refused; [`ModelError::Provider`] for an error
    /// status (after the client's retries), with the API's code and message,
    /// the request id and `Retry-After`; [`ModelError::Connection`] when no
    /// response came. For a whole response, also the errors of decoding it.
    async fn call(
        &self,
        request: ChatRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<ChatStream, ModelError> {
        let body = self.request_body(request).await?;
        let bytes = serde_json::to_vec(&body).map_err(|e| ModelError::InvalidRequest {
            message: format!("cannot encode the request: {e}"),
        })?;
        let mut builder = self
            .http
            .post(format!("{}/responses", self.base_url))
            .header("content-type", "application/json")
            .body(bytes);
        if !self.api_key.is_empty() {
            builder = builder.bearer_auth(self.api_key.expose());
        }
        if let Some(org) = &self.organization {
            builder = builder.header("openai-organization", org);
        }
        if self.stream {
            let events = self
                .http
                .sse(builder)
                .await
                .map_err(|e| error::from_http(&e))?;
            return Ok(accumulate(sse::deltas(events), cancel));
        }
        let whole: Value = self
            .http
            .send_json(builder)
            .await
            .map_err(|e| error::from_http(&e))?;
        let deltas = sse::whole(&whole)?;
        Ok(accumulate(
            stream::iter(deltas.into_iter().map(Ok)).boxed(),
            cancel,
        ))
    }
}
