//! Gemini speech generation: `generateContent` with audio output, streamed
//! through `streamGenerateContent?alt=sse`.

use std::time::Instant;

use futures_util::stream::{self, StreamExt};
use oxiscope_http::{HttpClient, SseEvent};
use oxiscope_model::{
    AudioChunk, Credential, ModelError, PCM_MEDIA_TYPE, Secret, TtsEvent, TtsModel, TtsOptions,
    TtsStream,
};
use serde_json::{Value, json};

use super::common::{
    EventDecoder, Tokens, decode_base64, done, from_http, invalid, malformed, nothing_to_say,
    own_client, sse_audio, trimmed, wrong_credential,
};

/// The Gemini API's endpoint, version included.
pub const GEMINI_TTS_DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

const PROVIDER: &str = "gemini";

/// A Gemini speech model (`gemini-2.5-flash-preview-tts`, ...).
///
/// Each call is `POST {base}/models/{model}:streamGenerateContent?alt=sse`
/// (or `:generateContent` with [`with_stream(false)`](Self::with_stream))
/// with the key in `x-goog-api-key` and the body `{"contents": [{"role":
/// "user", "parts": [{"text": t}]}], "generationConfig":
/// {"responseModalities": ["AUDIO"], "speechConfig": {"voiceConfig":
/// {"prebuiltVoiceConfig": {"voiceName": v}}}}}`. The audio is the
/// `inlineData` parts of the first candidate, in order: `audio/L16` PCM
/// (24 kHz) becomes [`PCM_MEDIA_TYPE`] with its `rate`. A streamed call is
/// complete when the body ends after a candidate's `finishReason`; usage is
/// `promptTokenCount` / `candidatesTokenCount`. Default voice: `Kore`.
#[derive(Debug, Clone)]
pub struct GeminiTtsModel {
    http: HttpClient,
    api_key: Secret,
    base_url: String,
    model: String,
    voice: String,
    stream: bool,
}

impl GeminiTtsModel {
    /// A model on the Gemini API with the shared HTTP client.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(api_key: impl Into<Secret>, model: impl Into<String>) -> Result<Self, ModelError> {
        Ok(Self::with_client(own_client()?, api_key, model))
    }

    /// A model on the Gemini API with `http`; a `models/` prefix of the
    /// name is dropped.
    pub fn with_client(
        http: HttpClient,
        api_key: impl Into<Secret>,
        model: impl Into<String>,
    ) -> Self {
        let model: String = model.into();
        let model = model
            .strip_prefix("models/")
            .map_or_else(|| model.clone(), str::to_owned);
        Self {
            http,
            api_key: api_key.into(),
            base_url: GEMINI_TTS_DEFAULT_BASE_URL.to_owned(),
            model,
            voice: "Kore".to_owned(),
            stream: true,
        }
    }

    /// A model for a Gemini credential, on `http`.
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
                "a Gemini TTS model needs a gemini_credential",
                credential,
            ));
        };
        Ok(Self::with_client(http, c.api_key.clone(), model))
    }

    /// Another endpoint (a proxy), version included.
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

    /// Streams the audio (`true`, the default) or asks for it in one
    /// answer (`generateContent`; the stream then has one audio chunk per
    /// part).
    #[must_use]
    pub fn with_stream(mut self, stream: bool) -> Self {
        self.stream = stream;
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
        let voice = options.voice.as_ref().unwrap_or(&self.voice);
        json!({
            "contents": [{"role": "user", "parts": [{"text": text}]}],
            "generationConfig": {
                "responseModalities": ["AUDIO"],
                "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": voice}}},
            },
        })
    }

    /// Refuses a model name that would change the URL it is put in.
    fn check_model(&self) -> Result<(), ModelError> {
        let valid = !self.model.is_empty()
            && !self.model.starts_with('.')
            && self
                .model
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if valid {
            Ok(())
        } else {
            Err(invalid(format!(
                "{:?} is not a Gemini model name (letters, digits, '-', '_' and '.')",
                self.model
            )))
        }
    }
}

/// The status object of an error body (a streaming call may wrap it in a
/// list).
fn status_object(body: &Value) -> Option<&Value> {
    match body {
        Value::Array(items) => items.iter().find_map(|v| v.get("error")),
        other => other.get("error"),
    }
}

/// `(error.status, error.message)` of an API error body.
fn error_body(body: &str) -> (Option<String>, Option<String>) {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(status_object);
    let text = |name| {
        error
            .and_then(|e| e.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    (text("status"), text("message"))
}

/// `obj[camel]`, or `obj[snake]` (proxies may write snake case).
fn field<'a>(obj: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    obj.get(camel).or_else(|| obj.get(snake))
}

/// The media type and rate of an `inlineData` MIME type:
/// `audio/L16;codec=pcm;rate=24000` is 24 kHz PCM.
fn media_of(mime: &str) -> (String, Option<u32>) {
    let mut parts = mime.split(';').map(str::trim);
    let base = parts.next().unwrap_or_default().to_ascii_lowercase();
    let rate = parts
        .filter_map(|p| p.strip_prefix("rate="))
        .find_map(|r| r.parse::<u32>().ok());
    if base == "audio/l16" || base == PCM_MEDIA_TYPE {
        (PCM_MEDIA_TYPE.to_owned(), Some(rate.unwrap_or(24_000)))
    } else {
        (base, rate)
    }
}

#[derive(Default)]
struct Decoder {
    finished: bool,
    tokens: Option<Tokens>,
}

impl Decoder {
    /// The audio of one `GenerateContentResponse`.
    fn response(&mut self, data: &Value) -> Result<Vec<AudioChunk>, ModelError> {
        if !data.is_object() {
            return Err(malformed(PROVIDER, "a response that is not an object"));
        }
        if let Some(error) = data.get("error") {
            let status = error
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok())
                .filter(|c| (400..=599).contains(c))
                .unwrap_or(500);
            let text = |name| error.get(name).and_then(Value::as_str).map(str::to_owned);
            return Err(ModelError::Provider {
                provider: PROVIDER.to_owned(),
                status,
                code: text("status"),
                message: text("message").unwrap_or_default(),
                request_id: None,
                retry_after: None,
            });
        }
        if let Some(usage) = field(data, "usageMetadata", "usage_metadata") {
            let count = |camel, snake| field(usage, camel, snake).and_then(Value::as_u64);
            let input = count("promptTokenCount", "prompt_token_count");
            let output = count("candidatesTokenCount", "candidates_token_count");
            if input.is_some() || output.is_some() {
                self.tokens = Some((input.unwrap_or(0), output.unwrap_or(0)));
            }
        }
        let candidate = data
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first());
        let Some(candidate) = candidate else {
            if let Some(reason) = field(data, "promptFeedback", "prompt_feedback")
                .and_then(|f| field(f, "blockReason", "block_reason"))
                .and_then(Value::as_str)
            {
                return Err(refused(reason, "Gemini blocked the text"));
            }
            return Ok(Vec::new());
        };
        let mut chunks = Vec::new();
        let parts = candidate
            .get("content")
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            let Some(inline) = field(part, "inlineData", "inline_data") else {
                continue;
            };
            let mime = field(inline, "mimeType", "mime_type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let data = inline
                .get("data")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if data.is_empty() {
                continue;
            }
            let (media_type, sample_rate) = media_of(mime);
            chunks.push(AudioChunk {
                data: decode_base64(PROVIDER, data)?,
                media_type,
                sample_rate,
            });
        }
        let reason = field(candidate, "finishReason", "finish_reason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match reason {
            "" | "FINISH_REASON_UNSPECIFIED" => {}
            "STOP" | "MAX_TOKENS" | "OTHER" => self.finished = true,
            other => return Err(refused(other, "Gemini stopped the speech")),
        }
        Ok(chunks)
    }
}

/// A synthesis Gemini refused or could not finish (safety, recitation,
/// ...): not retryable.
fn refused(reason: &str, what: &str) -> ModelError {
    ModelError::Provider {
        provider: PROVIDER.to_owned(),
        status: 400,
        code: Some(reason.to_owned()),
        message: format!("{what} ({reason})"),
        request_id: None,
        retry_after: None,
    }
}

impl EventDecoder for Decoder {
    fn event(&mut self, event: &SseEvent) -> Result<Vec<AudioChunk>, ModelError> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| malformed(PROVIDER, &format!("an event that is not JSON ({e})")))?;
        self.response(&data)
    }

    fn finished(&self) -> bool {
        self.finished
    }

    fn tokens(&self) -> Option<Tokens> {
        self.tokens
    }
}

impl TtsModel for GeminiTtsModel {
    fn model_name(&self) -> &str {
        &self.model
    }

    async fn synthesize(&self, text: &str, options: &TtsOptions) -> Result<TtsStream, ModelError> {
        if text.is_empty() {
            return Ok(nothing_to_say());
        }
        self.check_model()?;
        let started = Instant::now();
        let method = if self.stream {
            "streamGenerateContent?alt=sse"
        } else {
            "generateContent"
        };
        let request = self
            .http
            .post(format!("{}/models/{}:{method}", self.base_url, self.model))
            .header("x-goog-api-key", self.api_key.expose())
            .header("content-type", "application/json")
            .body(self.request_body(text, options).to_string());
        if self.stream {
            let events = self
                .http
                .sse(request)
                .await
                .map_err(|e| from_http(e, PROVIDER, error_body))?;
            return Ok(sse_audio(
                events,
                Decoder::default(),
                PROVIDER,
                error_body,
                started,
            ));
        }
        let answer: Value = self
            .http
            .send_json(request)
            .await
            .map_err(|e| from_http(e, PROVIDER, error_body))?;
        let mut decoder = Decoder::default();
        let chunks = decoder.response(&answer)?;
        let mut items: Vec<Result<TtsEvent, ModelError>> =
            chunks.into_iter().map(|c| Ok(TtsEvent::Audio(c))).collect();
        items.push(Ok(done(decoder.tokens, started)));
        Ok(stream::iter(items).boxed())
    }
}
