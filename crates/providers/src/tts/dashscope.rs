//! Qwen-TTS on DashScope's native multimodal generation API, streamed as
//! server-sent events (what AgentScope's `DashScopeTTSModel` calls through
//! the DashScope SDK's `MultiModalConversation`).

use std::time::Instant;

use oxiscope_http::{HttpClient, SseEvent};
use oxiscope_model::{
    AudioChunk, Credential, DashScopeCredential, ModelError, PCM_MEDIA_TYPE, Secret, TtsModel,
    TtsOptions, TtsStream,
};
use serde_json::{Map, Value};

use super::common::{
    EventDecoder, Tokens, decode_base64, from_http, malformed, nothing_to_say, own_client,
    sse_audio, trimmed, wrong_credential,
};
use crate::embedding::{DASHSCOPE_NATIVE_BASE_URL, native_base_url};

/// The sample rate of Qwen-TTS audio (16-bit mono PCM).
pub const DASHSCOPE_TTS_SAMPLE_RATE: u32 = 24_000;

const PROVIDER: &str = "dashscope";

/// A DashScope Qwen-TTS model (`qwen3-tts-flash`, `qwen-tts`, ...).
///
/// Each call is `POST {base}/services/aigc/multimodal-generation/generation`
/// with the key as a bearer token, `X-DashScope-SSE: enable`, and the body
/// `{"model": m, "input": {"text": t, "voice": v, "language_type": l}}`
/// (`language_type` only when set). Each event's `output.audio.data` is
/// the next piece of 24 kHz PCM, base64; the stream is complete after an
/// event whose `output.finish_reason` is `stop`, and `usage` carries the
/// tokens. An event with a `code` and no `output` is the API's error.
/// Default voice: `Cherry`.
#[derive(Debug, Clone)]
pub struct DashScopeTtsModel {
    http: HttpClient,
    api_key: Secret,
    base_url: String,
    model: String,
    voice: String,
    language_type: Option<String>,
}

impl DashScopeTtsModel {
    /// A model on DashScope's native API with the shared HTTP client.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(api_key: impl Into<Secret>, model: impl Into<String>) -> Result<Self, ModelError> {
        Ok(Self::with_client(own_client()?, api_key, model))
    }

    /// A model on DashScope's native API with `http`.
    pub fn with_client(
        http: HttpClient,
        api_key: impl Into<Secret>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            http,
            api_key: api_key.into(),
            base_url: DASHSCOPE_NATIVE_BASE_URL.to_owned(),
            model: model.into(),
            voice: "Cherry".to_owned(),
            language_type: None,
        }
    }

    /// A model for a DashScope credential, on `http`: its key, and the
    /// native root of its endpoint ([`native_base_url`]).
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not a DashScope
    /// one.
    pub fn from_credential_on(
        http: HttpClient,
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let Credential::DashScope(c) = credential else {
            return Err(wrong_credential(
                "a DashScope TTS model needs a dashscope_credential",
                credential,
            ));
        };
        let endpoint = if c.base_url.trim().is_empty() {
            DashScopeCredential::DEFAULT_BASE_URL
        } else {
            c.base_url.as_str()
        };
        Ok(Self::with_client(http, c.api_key.clone(), model)
            .with_base_url(native_base_url(endpoint)))
    }

    /// Another native API root (`https://dashscope-intl.aliyuncs.com/api/v1`).
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl AsRef<str>) -> Self {
        self.base_url = trimmed(base_url.as_ref());
        self
    }

    /// Speaks with `voice` unless a call asks for another.
    #[must_use]
    pub fn with_voice(mut self, voice: impl Into<String>) -> Self {
        self.voice = voice.into();
        self
    }

    /// Sends `language_type` (`Chinese`, `English`, `Auto`, ...).
    #[must_use]
    pub fn with_language_type(mut self, language: impl Into<String>) -> Self {
        self.language_type = Some(language.into());
        self
    }

    /// Uses another HTTP client.
    #[must_use]
    pub fn with_http_client(mut self, http: HttpClient) -> Self {
        self.http = http;
        self
    }

    /// The body of a call for `text`.
    #[must_use]
    pub fn request_body(&self, text: &str, options: &TtsOptions) -> Value {
        let mut input = Map::new();
        input.insert("text".into(), text.into());
        let voice = options.voice.as_ref().unwrap_or(&self.voice);
        input.insert("voice".into(), voice.clone().into());
        if let Some(language) = &self.language_type {
            input.insert("language_type".into(), language.clone().into());
        }
        let mut body = Map::new();
        body.insert("model".into(), self.model.clone().into());
        body.insert("input".into(), Value::Object(input));
        Value::Object(body)
    }
}

/// The `(code, message)` of an error body: JSON, or the `data:` line of an
/// SSE error event.
fn error_body(body: &str) -> (Option<String>, Option<String>) {
    let value = serde_json::from_str::<Value>(body).ok().or_else(|| {
        body.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .find_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
    });
    let Some(value) = value else {
        return (None, None);
    };
    let text = |name| {
        value
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    (text("code"), text("message"))
}

/// The HTTP status an error event stands for: its `status_code`, else one
/// guessed from DashScope's error code.
fn event_status(data: &Value, code: &str) -> u16 {
    data.get("status_code")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (400..=599).contains(s))
        .unwrap_or(if code.starts_with("Throttling") {
            429
        } else if code.starts_with("Internal") {
            500
        } else {
            400
        })
}

#[derive(Default)]
struct Decoder {
    finished: bool,
    tokens: Option<Tokens>,
}

impl EventDecoder for Decoder {
    fn event(&mut self, event: &SseEvent) -> Result<Vec<AudioChunk>, ModelError> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| malformed(PROVIDER, &format!("an event that is not JSON ({e})")))?;
        if !data.is_object() {
            return Err(malformed(PROVIDER, "an event that is not an object"));
        }
        let output = data.get("output").filter(|o| o.is_object());
        let code = data.get("code").and_then(Value::as_str).unwrap_or_default();
        if event.event_type() == "error" || (output.is_none() && !code.is_empty()) {
            let (code, message) = error_body(&event.data);
            return Err(ModelError::Provider {
                provider: PROVIDER.to_owned(),
                status: event_status(&data, code.as_deref().unwrap_or_default()),
                code,
                message: message.unwrap_or_else(|| "error event".to_owned()),
                request_id: data
                    .get("request_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                retry_after: None,
            });
        }
        let Some(output) = output else {
            return Err(malformed(PROVIDER, "an event without output"));
        };
        if let Some(usage) = data.get("usage") {
            let count = |name| usage.get(name).and_then(Value::as_u64);
            if let (Some(input), Some(out)) = (count("input_tokens"), count("output_tokens")) {
                self.tokens = Some((input, out));
            }
        }
        let reason = output
            .get("finish_reason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !reason.is_empty() && reason != "null" {
            self.finished = true;
        }
        let audio = output
            .get("audio")
            .and_then(|a| a.get("data"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if audio.is_empty() {
            return Ok(Vec::new());
        }
        let bytes = decode_base64(PROVIDER, audio)?;
        Ok(vec![AudioChunk {
            data: bytes,
            media_type: PCM_MEDIA_TYPE.to_owned(),
            sample_rate: Some(DASHSCOPE_TTS_SAMPLE_RATE),
        }])
    }

    fn finished(&self) -> bool {
        self.finished
    }

    fn tokens(&self) -> Option<Tokens> {
        self.tokens
    }
}

impl TtsModel for DashScopeTtsModel {
    fn model_name(&self) -> &str {
        &self.model
    }

    async fn synthesize(&self, text: &str, options: &TtsOptions) -> Result<TtsStream, ModelError> {
        if text.is_empty() {
            return Ok(nothing_to_say());
        }
        let started = Instant::now();
        let request = self
            .http
            .post(format!(
                "{}/services/aigc/multimodal-generation/generation",
                self.base_url
            ))
            .bearer_auth(self.api_key.expose())
            .header("content-type", "application/json")
            .header("x-dashscope-sse", "enable")
            .body(self.request_body(text, options).to_string());
        let events = self
            .http
            .sse(request)
            .await
            .map_err(|e| from_http(e, PROVIDER, error_body))?;
        Ok(sse_audio(
            events,
            Decoder::default(),
            PROVIDER,
            error_body,
            started,
        ))
    }
}
