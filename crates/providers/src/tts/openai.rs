//! OpenAI speech (`POST {base}/audio/speech`), also any server that speaks
//! OpenAI's API.

use std::time::Instant;

use futures_util::stream::{self, StreamExt};
use oxiscope_http::{HttpClient, SseEvent};
use oxiscope_model::{
    AudioChunk, Credential, ModelError, PCM_MEDIA_TYPE, Secret, TtsEvent, TtsModel, TtsOptions,
    TtsStream,
};
use serde_json::{Map, Value};

use super::common::{
    EventDecoder, Tokens, decode_base64, done, from_http, invalid, malformed, nothing_to_say,
    own_client, sse_audio, trimmed, wrong_credential,
};

/// OpenAI's public endpoint.
pub const OPENAI_TTS_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The formats `response_format` takes, with their media types.
pub const OPENAI_RESPONSE_FORMATS: [(&str, &str); 6] = [
    ("mp3", "audio/mpeg"),
    ("opus", "audio/opus"),
    ("aac", "audio/aac"),
    ("flac", "audio/flac"),
    ("wav", "audio/wav"),
    ("pcm", PCM_MEDIA_TYPE),
];

/// The sample rate of OpenAI's `pcm` output.
const PCM_RATE: u32 = 24_000;

const PROVIDER: &str = "openai";

/// How OpenAI streams the audio back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenAiStreamFormat {
    /// The audio file itself, as a chunked body (no `stream_format` is
    /// sent, as AgentScope calls it). There is no closing marker: a body
    /// that breaks is an error, one that ends cleanly is complete.
    #[default]
    Audio,
    /// `stream_format: "sse"` (`gpt-4o-mini-tts` and later): base64 audio
    /// in `speech.audio.delta` events, usage in the final
    /// `speech.audio.done`.
    Sse,
}

/// An OpenAI text-to-speech model.
///
/// Each call is `POST {base}/audio/speech` with the key as a bearer token
/// (and `OpenAI-Organization` when set) and the body `{"model": m, "voice":
/// v, "input": text, "response_format": f, "instructions": i,
/// "stream_format": "sse"}` (`instructions` and `stream_format` only when
/// set). The chunks' media type follows the format (`mp3` is `audio/mpeg`,
/// `pcm` is 24 kHz [`PCM_MEDIA_TYPE`]). Defaults: voice `alloy`, format
/// `mp3`.
#[derive(Debug, Clone)]
pub struct OpenAiTtsModel {
    http: HttpClient,
    api_key: Secret,
    organization: Option<String>,
    base_url: String,
    model: String,
    voice: String,
    response_format: String,
    instructions: Option<String>,
    stream_format: OpenAiStreamFormat,
}

impl OpenAiTtsModel {
    /// A model on OpenAI's endpoint with the shared HTTP client.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be built.
    pub fn new(api_key: impl Into<Secret>, model: impl Into<String>) -> Result<Self, ModelError> {
        Ok(Self::with_client(own_client()?, api_key, model))
    }

    /// A model on OpenAI's endpoint with `http` (whose retry policy
    /// applies).
    pub fn with_client(
        http: HttpClient,
        api_key: impl Into<Secret>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            http,
            api_key: api_key.into(),
            organization: None,
            base_url: OPENAI_TTS_DEFAULT_BASE_URL.to_owned(),
            model: model.into(),
            voice: "alloy".to_owned(),
            response_format: "mp3".to_owned(),
            instructions: None,
            stream_format: OpenAiStreamFormat::Audio,
        }
    }

    /// A model for an OpenAI credential (its key, organization and
    /// endpoint), on `http`.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `credential` is not an OpenAI one.
    pub fn from_credential_on(
        http: HttpClient,
        credential: &Credential,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let Credential::OpenAi(c) = credential else {
            return Err(wrong_credential(
                "an OpenAI TTS model needs an openai_credential",
                credential,
            ));
        };
        let mut this = Self::with_client(http, c.api_key.clone(), model);
        if let Some(url) = c.base_url.as_deref().filter(|u| !u.trim().is_empty()) {
            this = this.with_base_url(url);
        }
        this.organization = c.organization.clone().filter(|o| !o.is_empty());
        Ok(this)
    }

    /// Another endpoint, API version included (`http://localhost:8000/v1`).
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl AsRef<str>) -> Self {
        self.base_url = trimmed(base_url.as_ref());
        self
    }

    /// Sends `OpenAI-Organization: organization` with each request.
    #[must_use]
    pub fn with_organization(mut self, organization: impl Into<String>) -> Self {
        self.organization = Some(organization.into());
        self
    }

    /// Speaks with `voice` unless a call asks for another.
    #[must_use]
    pub fn with_voice(mut self, voice: impl Into<String>) -> Self {
        self.voice = voice.into();
        self
    }

    /// Asks for `format` (`mp3`, `opus`, `aac`, `flac`, `wav`, `pcm`).
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] for another format.
    pub fn with_response_format(mut self, format: &str) -> Result<Self, ModelError> {
        if media_type_of(format).is_none() {
            let known: Vec<&str> = OPENAI_RESPONSE_FORMATS.iter().map(|(f, _)| *f).collect();
            return Err(invalid(format!(
                "{format:?} is not an OpenAI speech format ({})",
                known.join(", ")
            )));
        }
        format.clone_into(&mut self.response_format);
        Ok(self)
    }

    /// Sends `instructions` on how to speak unless a call gives others.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Chooses how the audio streams back.
    #[must_use]
    pub fn with_stream_format(mut self, format: OpenAiStreamFormat) -> Self {
        self.stream_format = format;
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
        let mut body = Map::new();
        body.insert("model".into(), self.model.clone().into());
        let voice = options.voice.as_ref().unwrap_or(&self.voice);
        body.insert("voice".into(), voice.clone().into());
        body.insert("input".into(), text.into());
        body.insert(
            "response_format".into(),
            self.response_format.clone().into(),
        );
        let instructions = options.instructions.as_ref().or(self.instructions.as_ref());
        if let Some(instructions) = instructions.filter(|i| !i.is_empty()) {
            body.insert("instructions".into(), instructions.clone().into());
        }
        if self.stream_format == OpenAiStreamFormat::Sse {
            body.insert("stream_format".into(), "sse".into());
        }
        Value::Object(body)
    }

    /// The media type and rate of the chosen format.
    fn format(&self) -> Format {
        let media_type = media_type_of(&self.response_format).unwrap_or("audio/mpeg");
        Format {
            media_type,
            sample_rate: (media_type == PCM_MEDIA_TYPE).then_some(PCM_RATE),
        }
    }
}

/// What the chunks of one call are.
#[derive(Debug, Clone, Copy)]
struct Format {
    media_type: &'static str,
    sample_rate: Option<u32>,
}

impl Format {
    fn chunk(self, data: Vec<u8>) -> AudioChunk {
        AudioChunk {
            data,
            media_type: self.media_type.to_owned(),
            sample_rate: self.sample_rate,
        }
    }
}

fn media_type_of(format: &str) -> Option<&'static str> {
    OPENAI_RESPONSE_FORMATS
        .iter()
        .find(|(f, _)| *f == format)
        .map(|(_, media)| *media)
}

/// `(code, message)` of `{"error": {"code" | "type", "message"}}`.
fn error_body(body: &str) -> (Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return (None, None);
    };
    let error = value.get("error").unwrap_or(&value);
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let code = text(error.get("code")).or_else(|| text(error.get("type")));
    let message = match error {
        Value::String(s) => Some(s.clone()),
        _ => text(error.get("message")),
    };
    (code, message)
}

/// The events of `stream_format: "sse"`.
struct SseDecoder {
    format: Format,
    finished: bool,
    tokens: Option<Tokens>,
}

impl EventDecoder for SseDecoder {
    fn event(&mut self, event: &SseEvent) -> Result<Vec<AudioChunk>, ModelError> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| malformed(PROVIDER, &format!("an event that is not JSON ({e})")))?;
        match data.get("type").and_then(Value::as_str).unwrap_or_default() {
            "speech.audio.delta" => {
                let audio = data
                    .get("audio")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let bytes = decode_base64(PROVIDER, audio)?;
                Ok(if bytes.is_empty() {
                    Vec::new()
                } else {
                    vec![self.format.chunk(bytes)]
                })
            }
            "speech.audio.done" => {
                self.finished = true;
                let usage = data.get("usage");
                let count = |name| usage.and_then(|u| u.get(name)).and_then(Value::as_u64);
                if let (Some(input), Some(output)) = (count("input_tokens"), count("output_tokens"))
                {
                    self.tokens = Some((input, output));
                }
                Ok(Vec::new())
            }
            "error" => {
                let (code, message) = error_body(&event.data);
                Err(ModelError::Provider {
                    provider: PROVIDER.to_owned(),
                    status: 500,
                    code,
                    message: message.unwrap_or_else(|| "error event".to_owned()),
                    request_id: None,
                    retry_after: None,
                })
            }
            _ => Ok(Vec::new()),
        }
    }

    fn finished(&self) -> bool {
        self.finished
    }

    fn tokens(&self) -> Option<Tokens> {
        self.tokens
    }
}

impl TtsModel for OpenAiTtsModel {
    fn model_name(&self) -> &str {
        &self.model
    }

    async fn synthesize(&self, text: &str, options: &TtsOptions) -> Result<TtsStream, ModelError> {
        if text.is_empty() {
            return Ok(nothing_to_say());
        }
        let started = Instant::now();
        let mut request = self
            .http
            .post(format!("{}/audio/speech", self.base_url))
            .bearer_auth(self.api_key.expose())
            .header("content-type", "application/json")
            .body(self.request_body(text, options).to_string());
        if let Some(org) = &self.organization {
            request = request.header("openai-organization", org);
        }
        if self.stream_format == OpenAiStreamFormat::Sse {
            let events = self
                .http
                .sse(request)
                .await
                .map_err(|e| from_http(e, PROVIDER, error_body))?;
            let decoder = SseDecoder {
                format: self.format(),
                finished: false,
                tokens: None,
            };
            return Ok(sse_audio(events, decoder, PROVIDER, error_body, started));
        }
        let response = self
            .http
            .send(request)
            .await
            .map_err(|e| from_http(e, PROVIDER, error_body))?;
        let format = self.format();
        let audio = self.http.body(response).filter_map(move |chunk| {
            let item = match chunk {
                Ok(bytes) if bytes.is_empty() => None,
                Ok(bytes) => Some(Ok(TtsEvent::Audio(format.chunk(bytes.to_vec())))),
                Err(e) => Some(Err(from_http(e, PROVIDER, error_body))),
            };
            std::future::ready(item)
        });
        // The body has no closing marker: a clean end is the end; a broken
        // body's error is its last item, and no `Done` follows it.
        let ended = stream::once(async move { Ok(done(None, started)) });
        Ok(audio.chain(ended).scan(false, stop_after_error).boxed())
    }
}

/// Passes items until the first error, which is the last one.
fn stop_after_error(
    failed: &mut bool,
    item: Result<TtsEvent, ModelError>,
) -> std::future::Ready<Option<Result<TtsEvent, ModelError>>> {
    if *failed {
        return std::future::ready(None);
    }
    *failed = item.is_err();
    std::future::ready(Some(item))
}
