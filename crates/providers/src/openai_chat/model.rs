//! [`OpenAiChatModel`]: a chat model over `POST {base}/chat/completions`.

use std::any::Any;
use std::sync::Arc;

use futures_util::stream::{self, StreamExt};
use oxiscope_http::HttpClient;
use oxiscope_model::{
    ChatModel, ChatRequest, ChatStream, Credential, Formatter, ModelError, OpenAiCredential,
    Secret, accumulate,
};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::body_cache::{self, Cached, DEFAULT_CACHE_BYTES};

use super::chunk::{Completion, error_message};
use super::error::setup_error;
use super::format::OpenAiChatFormatter;
use super::request::Body;
use super::stream::decode_events;
use super::vendor::Vendor;
use crate::MediaPolicy;

/// A chat model served over OpenAI's Chat Completions API, by OpenAI or by
/// a compatible vendor ([`Vendor`]).
///
/// ```
/// use oxiscope_model::ChatModel;
/// use oxiscope_providers::openai_chat::{OpenAiChatModel, Vendor};
///
/// let model = OpenAiChatModel::builder("deepseek-chat")
///     .with_vendor(Vendor::DeepSeek)
///     .with_api_key("sk-test")
///     .with_parameter("temperature", 0.2)
///     .build()?;
/// assert_eq!(model.model_name(), "deepseek-chat");
/// assert_eq!(model.base_url(), "https://api.deepseek.com");
/// # Ok::<(), oxiscope_model::ModelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiChatModel {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    http: HttpClient,
    vendor: Vendor,
    base_url: String,
    api_key: Secret,
    organization: Option<String>,
    model: String,
    stream: bool,
    parameters: Map<String, Value>,
    formatter: Arc<dyn Formatter>,
    /// The chat formatter with the messages it encoded, when the formatter
    /// is one (formatting then goes message by message).
    cached: Option<Cached<OpenAiChatFormatter>>,
}

/// Options of an [`OpenAiChatModel`]; see [`OpenAiChatModel::builder`].
#[derive(Debug, Clone)]
pub struct OpenAiChatModelBuilder {
    model: String,
    vendor: Vendor,
    base_url: Option<String>,
    api_key: Secret,
    organization: Option<String>,
    stream: bool,
    parameters: Map<String, Value>,
    http: Option<HttpClient>,
    formatter: Option<Arc<dyn Formatter>>,
    /// `formatter` when it is an [`OpenAiChatFormatter`] (either variant).
    own_formatter: Option<OpenAiChatFormatter>,
    media: Option<MediaPolicy>,
    cache_bytes: usize,
}

impl OpenAiChatModel {
    /// Options for calling `model` (streaming on, OpenAI's endpoint, the
    /// vendor's chat formatter).
    pub fn builder(model: impl Into<String>) -> OpenAiChatModelBuilder {
        OpenAiChatModelBuilder {
            model: model.into(),
            vendor: Vendor::OpenAi,
            base_url: None,
            api_key: Secret::new(""),
            organization: None,
            stream: true,
            parameters: Map::new(),
            http: None,
            formatter: None,
            own_formatter: None,
            media: None,
            cache_bytes: DEFAULT_CACHE_BYTES,
        }
    }

    /// Options for calling `model` with a stored credential: key, endpoint
    /// and vendor come from it.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] for a credential type this family does
    /// not serve (Anthropic, Gemini, Ollama, MiniMax).
    pub fn from_credential(
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<OpenAiChatModelBuilder, ModelError> {
        let builder = Self::builder(model);
        Ok(match credential {
            Credential::OpenAi(c) => builder.with_credential(c),
            Credential::DeepSeek(c) => builder
                .with_vendor(Vendor::DeepSeek)
                .with_api_key(c.api_key.clone())
                .with_base_url(c.base_url.clone()),
            Credential::Moonshot(c) => builder
                .with_vendor(Vendor::Moonshot)
                .with_api_key(c.api_key.clone())
                .with_base_url(c.base_url.clone()),
            Credential::Volcengine(c) => builder
                .with_vendor(Vendor::Volcengine)
                .with_api_key(c.api_key.clone())
                .with_base_url(c.base_url.clone()),
            Credential::DashScope(c) => builder
                .with_vendor(Vendor::DashScope)
                .with_api_key(c.api_key.clone())
                .with_base_url(c.base_url.clone()),
            Credential::Xai(c) => builder
                .with_vendor(Vendor::Xai)
                .with_api_key(c.api_key.clone())
                .with_base_url(format!("https://{}/v1", c.api_host)),
            other => {
                return Err(ModelError::InvalidRequest {
                    message: format!(
                        "a {} credential is not served by the OpenAI chat family",
                        other.credential_type().as_str()
                    ),
                });
            }
        })
    }

    /// The vendor served.
    #[must_use]
    pub fn vendor(&self) -> Vendor {
        self.inner.vendor
    }

    /// The endpoint, without `/chat/completions`.
    #[must_use]
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// Whether responses are streamed.
    #[must_use]
    pub fn is_streaming(&self) -> bool {
        self.inner.stream
    }

    /// The formatter that builds `messages`.
    #[must_use]
    pub fn formatter(&self) -> &dyn Formatter {
        self.inner.formatter.as_ref()
    }

    /// The encoded JSON body a call with `request` sends.
    ///
    /// With the chat variant of [`OpenAiChatFormatter`] (the default), each
    /// message's encoded payload is kept between calls and reused while the
    /// message keeps its shape (see
    /// [`with_message_cache_bytes`](OpenAiChatModelBuilder::with_message_cache_bytes)),
    /// so a call formats only the messages that are new or changed. The
    /// bytes are those of encoding [`request_body`](Self::request_body).
    ///
    /// # Errors
    /// As [`Formatter::format`].
    pub async fn request_bytes(&self, request: ChatRequest<'_>) -> Result<Vec<u8>, ModelError> {
        let inner = &self.inner;
        let Some(cached) = &inner.cached else {
            let body = self.request_body(request).await?;
            return serde_json::to_vec(&body).map_err(|e| ModelError::InvalidRequest {
                message: format!("cannot encode the request: {e}"),
            });
        };
        let encoded = cached.encode(request.messages).await?;
        let head = Body {
            model: &inner.model,
            messages: Vec::new(),
            tools: request.tools,
            tool_choice: request.tool_choice,
            stream: inner.stream,
            parameters: &inner.parameters,
        }
        .into_map();
        body_cache::encode_body(&head, &encoded)
    }

    fn provider(&self) -> &'static str {
        self.inner.vendor.provider_name()
    }

    /// The JSON body a call with `request` sends (before it is encoded).
    ///
    /// # Errors
    /// As [`Formatter::format`].
    pub async fn request_body(&self, request: ChatRequest<'_>) -> Result<Value, ModelError> {
        let inner = &self.inner;
        let messages = inner.formatter.format(request.messages).await?;
        Ok(Body {
            model: &inner.model,
            messages,
            tools: request.tools,
            tool_choice: request.tool_choice,
            stream: inner.stream,
            parameters: &inner.parameters,
        }
        .into_json())
    }
}

impl OpenAiChatModelBuilder {
    /// Serves `vendor`: its default endpoint (unless one is set) and its
    /// chat formatter (unless one is set).
    #[must_use]
    pub fn with_vendor(mut self, vendor: Vendor) -> Self {
        self.vendor = vendor;
        self
    }

    /// The API key, sent as a bearer token.
    #[must_use]
    pub fn with_api_key(mut self, api_key: impl Into<Secret>) -> Self {
        self.api_key = api_key.into();
        self
    }

    /// Key, organization and endpoint from an OpenAI credential.
    #[must_use]
    pub fn with_credential(mut self, credential: &OpenAiCredential) -> Self {
        self.api_key = credential.api_key.clone();
        self.organization.clone_from(&credential.organization);
        if let Some(url) = &credential.base_url {
            self.base_url = Some(url.clone());
        }
        self
    }

    /// The endpoint, e.g. `https://api.openai.com/v1` (a trailing `/` is
    /// ignored).
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// The `OpenAI-Organization` header.
    #[must_use]
    pub fn with_organization(mut self, organization: impl Into<String>) -> Self {
        self.organization = Some(organization.into());
        self
    }

    /// Streams responses (the default) or asks for whole ones.
    #[must_use]
    pub fn with_stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// Extra body parameters (`temperature`, `max_tokens`, ... with the
    /// model card's names), replacing earlier ones. `model`, `messages`,
    /// `stream`, `stream_options`, `tools` and `tool_choice` are ignored.
    #[must_use]
    pub fn with_parameters(mut self, parameters: Map<String, Value>) -> Self {
        self.parameters = parameters;
        self
    }

    /// One extra body parameter.
    #[must_use]
    pub fn with_parameter(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.parameters.insert(name.into(), value.into());
        self
    }

    /// The HTTP client (timeouts, retries) to use.
    #[must_use]
    pub fn with_http_client(mut self, http: HttpClient) -> Self {
        self.http = Some(http);
        self
    }

    /// Replaces the vendor's chat formatter (e.g. with the multi-agent one).
    #[must_use]
    pub fn with_formatter(mut self, formatter: impl Formatter + 'static) -> Self {
        let any: &dyn Any = &formatter;
        self.own_formatter = any.downcast_ref::<OpenAiChatFormatter>().cloned();
        self.formatter = Some(Arc::new(formatter));
        self
    }

    /// Reads and downloads media as `policy` allows (default: any local
    /// file, any URL). It applies to the vendor's chat formatter and to any
    /// [`OpenAiChatFormatter`] given with [`with_formatter`](Self::with_formatter),
    /// before or after this call; another formatter keeps its own rules.
    #[must_use]
    pub fn with_media_policy(mut self, policy: MediaPolicy) -> Self {
        self.media = Some(policy);
        self
    }

    /// Caps the encoded messages kept between calls at `max_bytes` (default
    /// 64 MiB; the least recently used go first). `0` turns keeping them
    /// off. Only the chat variant of [`OpenAiChatFormatter`] keeps them:
    /// other formatters may join neighbouring messages.
    #[must_use]
    pub fn with_message_cache_bytes(mut self, max_bytes: usize) -> Self {
        self.cache_bytes = max_bytes;
        self
    }

    /// The model.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when no endpoint is known (vLLM needs
    /// one) or the HTTP client cannot be built.
    pub fn build(self) -> Result<OpenAiChatModel, ModelError> {
        let base_url = self
            .base_url
            .filter(|u| !u.trim().is_empty())
            .or_else(|| self.vendor.default_base_url().map(str::to_owned))
            .ok_or_else(|| ModelError::InvalidRequest {
                message: format!("{} needs a base URL", self.vendor.provider_name()),
            })?;
        let http = match self.http {
            Some(http) => http,
            None => HttpClient::shared().map_err(|e| ModelError::InvalidRequest {
                message: format!("cannot build the HTTP client: {e}"),
            })?,
        };
        let (formatter, own): (Arc<dyn Formatter>, _) = match self.formatter {
            Some(formatter) => (formatter, self.own_formatter),
            None => {
                let chat = OpenAiChatFormatter::chat(self.vendor).with_http_client(http.clone());
                (Arc::new(chat.clone()), Some(chat))
            }
        };
        let (formatter, own): (Arc<dyn Formatter>, _) = match (own, self.media) {
            (Some(own), Some(policy)) => {
                let own = own.with_media_policy(policy);
                (Arc::new(own.clone()), Some(own))
            }
            (own, _) => (formatter, own),
        };
        let cached = own
            .filter(|f| !f.is_multi_agent() && self.cache_bytes > 0)
            .map(|chat| Cached::new(chat, false, self.cache_bytes));
        Ok(OpenAiChatModel {
            inner: Arc::new(Inner {
                http,
                vendor: self.vendor,
                base_url: base_url.trim_end_matches('/').to_owned(),
                api_key: self.api_key,
                organization: self.organization,
                model: self.model,
                stream: self.stream,
                parameters: super::params::wire_parameters(self.vendor, self.parameters),
                formatter,
                cached,
            }),
        })
    }
}

impl ChatModel for OpenAiChatModel {
    fn model_name(&self) -> &str {
        &self.inner.model
    }

    fn context_size(&self) -> Option<u64> {
        use oxiscope_model::ModelClass;
        let class = match self.inner.vendor {
            Vendor::OpenAi => ModelClass::OpenAiChat,
            Vendor::DeepSeek => ModelClass::DeepSeekChat,
            Vendor::Moonshot => ModelClass::MoonshotChat,
            Vendor::Xai => ModelClass::XaiChat,
            Vendor::Volcengine => ModelClass::VolcengineChat,
            Vendor::DashScope => ModelClass::DashScopeChat,
            Vendor::Vllm => return None,
        };
        class.context_size_of(&self.inner.model)
    }

    /// Formats the conversation, sends it, and returns the accumulated
    /// response stream.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the messages cannot be formatted;
    /// [`ModelError::Provider`] for an error status (after the client's
    /// retries), with the vendor's code and message, the `x-request-id` and
    /// `Retry-After`; [`ModelError::Connection`] when no response came.
    /// For a whole (non-streamed) response, also the errors of decoding it.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the request. Cancelling `cancel` after
    /// the stream started ends it with a final chunk marked interrupted.
    async fn call(
        &self,
        request: ChatRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<ChatStream, ModelError> {
        let inner = &self.inner;
        let body = self.request_bytes(request).await?;
        let mut http_request = inner
            .http
            .post(format!("{}/chat/completions", inner.base_url))
            .header("content-type", "application/json")
            .body(body);
        if !inner.api_key.is_empty() {
            http_request = http_request.bearer_auth(inner.api_key.expose());
        }
        if let Some(org) = &inner.organization {
            http_request = http_request.header("openai-organization", org);
        }
        if inner.stream {
            let events = inner
                .http
                .sse(http_request)
                .await
                .map_err(|e| setup_error(self.provider(), &e))?;
            return Ok(accumulate(decode_events(events), cancel));
        }
        let value: Value = inner
            .http
            .send_json(http_request)
            .await
            .map_err(|e| setup_error(self.provider(), &e))?;
        let deltas = decode_whole(value)?;
        Ok(accumulate(
            stream::iter(deltas.into_iter().map(Ok)).boxed(),
            cancel,
        ))
    }
}

/// The increments of a whole `chat.completion` response.
fn decode_whole(value: Value) -> Result<Vec<oxiscope_model::ModelDelta>, ModelError> {
    let completion: Completion = serde_json::from_value(value).map_err(|e| ModelError::Stream {
        message: format!("malformed response: {e}"),
    })?;
    if let Some(error) = &completion.error {
        return Err(ModelError::Stream {
            message: format!("error response: {}", error_message(error)),
        });
    }
    let mut deltas = Vec::new();
    completion.decode_into(&mut deltas);
    Ok(deltas)
}
