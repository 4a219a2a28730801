//! The TTS-model trait, what it is asked and the audio it streams back.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;

use crate::ModelError;

/// Per-call choices that override the model's configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TtsOptions {
    /// The voice; `None` keeps the model's.
    pub voice: Option<String>,
    /// Instructions on how to speak, for models that take them (OpenAI's
    /// `gpt-4o-mini-tts`); `None` keeps the model's.
    pub instructions: Option<String>,
}

impl TtsOptions {
    /// Speaks with `voice`.
    #[must_use]
    pub fn with_voice(mut self, voice: impl Into<String>) -> Self {
        self.voice = Some(voice.into());
        self
    }

    /// Speaks following `instructions`.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }
}

/// The media type of raw PCM audio: signed 16-bit little-endian samples,
/// one channel, at the chunk's `sample_rate`.
pub const PCM_MEDIA_TYPE: &str = "audio/pcm";

/// One piece of synthesized audio, in order: the audio of a call is the
/// concatenation of its chunks' bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct AudioChunk {
    /// The audio bytes (not base64).
    pub data: Vec<u8>,
    /// Its MIME type: `audio/mpeg`, `audio/wav`, [`PCM_MEDIA_TYPE`], ...
    pub media_type: String,
    /// Samples per second, when known (always for PCM).
    pub sample_rate: Option<u32>,
}

impl Debug for AudioChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AudioChunk")
            .field("bytes", &self.data.len())
            .field("media_type", &self.media_type)
            .field("sample_rate", &self.sample_rate)
            .finish()
    }
}

/// What a synthesis consumed, when the provider reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TtsUsage {
    /// Input (text) tokens.
    pub input_tokens: u64,
    /// Output (audio) tokens.
    pub output_tokens: u64,
    /// Wall-clock time of the call.
    pub time: Duration,
}

/// One item of a [`TtsStream`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TtsEvent {
    /// The next piece of audio.
    Audio(AudioChunk),
    /// The synthesis is complete; always the last item of a successful
    /// stream, exactly once.
    Done {
        /// Tokens and time, when the provider reported tokens.
        usage: Option<TtsUsage>,
    },
}

/// The audio of one synthesis as it arrives.
///
/// # Contract
/// Zero or more [`TtsEvent::Audio`] items in order, then exactly one
/// [`TtsEvent::Done`]; or, when the call fails after it started (a cut
/// connection, a malformed or error event), an `Err` as the last item
/// instead of `Done`. A stream that ends without either was dropped.
pub type TtsStream = BoxStream<'static, Result<TtsEvent, ModelError>>;

/// The whole audio of one synthesis.
#[derive(Clone, PartialEq, Eq)]
pub struct TtsResponse {
    /// The audio bytes; empty when there was nothing to say.
    pub audio: Vec<u8>,
    /// Their MIME type (empty when there is no audio).
    pub media_type: String,
    /// Samples per second, when known.
    pub sample_rate: Option<u32>,
    /// Tokens and time, when the provider reported tokens.
    pub usage: Option<TtsUsage>,
}

impl Debug for TtsResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtsResponse")
            .field("bytes", &self.audio.len())
            .field("media_type", &self.media_type)
            .field("sample_rate", &self.sample_rate)
            .field("usage", &self.usage)
            .finish()
    }
}

impl TtsResponse {
    /// The audio as a playable file: PCM with a known rate is wrapped in a
    /// WAV container (as AgentScope answers a non-streaming call); other
    /// audio is returned as it is. Gives `(bytes, media type)`.
    #[must_use]
    pub fn into_playable(self) -> (Vec<u8>, String) {
        match (self.media_type.as_str(), self.sample_rate) {
            (PCM_MEDIA_TYPE, Some(rate)) => (
                super::wav::pcm_to_wav(&self.audio, rate),
                "audio/wav".to_owned(),
            ),
            _ => (self.audio, self.media_type),
        }
    }
}

/// The most audio [`collect_audio`] keeps: 64 MiB, over 20 minutes of
/// 24 kHz PCM.
pub const DEFAULT_MAX_TTS_AUDIO_BYTES: usize = 64 << 20;

/// Reads a [`TtsStream`] to its end and joins the audio, keeping at most
/// [`DEFAULT_MAX_TTS_AUDIO_BYTES`].
///
/// # Errors
/// As [`collect_audio_bounded`].
pub async fn collect_audio(stream: TtsStream) -> Result<TtsResponse, ModelError> {
    collect_audio_bounded(stream, DEFAULT_MAX_TTS_AUDIO_BYTES).await
}

/// Reads a [`TtsStream`] to its end and joins the audio, refusing more
/// than `max_bytes` of it.
///
/// # Errors
/// The stream's error item; [`ModelError::Stream`] when the stream ends
/// without its `Done` item, its chunks change media type or rate, or the
/// audio grows past `max_bytes`.
pub async fn collect_audio_bounded(
    mut stream: TtsStream,
    max_bytes: usize,
) -> Result<TtsResponse, ModelError> {
    let mut response = TtsResponse {
        audio: Vec::new(),
        media_type: String::new(),
        sample_rate: None,
        usage: None,
    };
    let mut first = true;
    while let Some(item) = stream.next().await {
        match item? {
            TtsEvent::Audio(chunk) => {
                if first {
                    response.media_type = chunk.media_type;
                    response.sample_rate = chunk.sample_rate;
                    first = false;
                } else if chunk.media_type != response.media_type
                    || chunk.sample_rate != response.sample_rate
                {
                    return Err(ModelError::Stream {
                        message: format!(
                            "the audio changed from {} to {} mid-stream",
                            response.media_type, chunk.media_type
                        ),
                    });
                }
                if response.audio.len().saturating_add(chunk.data.len()) > max_bytes {
                    return Err(ModelError::Stream {
                        message: format!("the audio is longer than {max_bytes} bytes"),
                    });
                }
                response.audio.extend_from_slice(&chunk.data);
            }
            TtsEvent::Done { usage } => {
                response.usage = usage;
                return Ok(response);
            }
        }
    }
    Err(ModelError::Stream {
        message: "the audio stream ended before its end".to_owned(),
    })
}

/// A text-to-speech model.
///
/// # Contract
/// [`synthesize`](Self::synthesize) sends one text and streams its audio
/// back as the provider sends it ([`TtsStream`]'s contract). An empty text
/// sends nothing and streams only `Done { usage: None }`. Failures before
/// the audio starts (a refused endpoint, an error status after the HTTP
/// client's retries) come back in the outer `Result`; later ones end the
/// stream as an error item, never a panic.
///
/// # Cancel safety
/// Dropping the future or the stream abandons the call and closes its
/// connection.
pub trait TtsModel: Send + Sync + Debug {
    /// The model's name, as sent to the provider.
    fn model_name(&self) -> &str;

    /// Synthesizes `text`, streaming the audio.
    ///
    /// # Errors
    /// [`ModelError::Provider`] for an error status (429 and 5xx are
    /// retried first, honouring `Retry-After`), [`ModelError::Connection`]
    /// when the provider cannot be reached, [`ModelError::InvalidRequest`]
    /// when the request cannot be sent (a refused endpoint, a bad option).
    fn synthesize(
        &self,
        text: &str,
        options: &TtsOptions,
    ) -> impl Future<Output = Result<TtsStream, ModelError>> + Send;

    /// Synthesizes `text` and waits for the whole audio
    /// ([`collect_audio`]).
    ///
    /// # Errors
    /// As [`synthesize`](Self::synthesize) and [`collect_audio`].
    fn synthesize_whole(
        &self,
        text: &str,
        options: &TtsOptions,
    ) -> impl Future<Output = Result<TtsResponse, ModelError>> + Send {
        async move { collect_audio(self.synthesize(text, options).await?).await }
    }
}

/// The object-safe twin of [`TtsModel`], implemented for every TTS model,
/// for holding models as `Arc<dyn DynTtsModel>` (which is itself a
/// [`TtsModel`]).
pub trait DynTtsModel: Send + Sync + Debug {
    /// See [`TtsModel::model_name`].
    fn model_name(&self) -> &str;

    /// See [`TtsModel::synthesize`].
    fn synthesize_boxed<'a>(
        &'a self,
        text: &'a str,
        options: &'a TtsOptions,
    ) -> Pin<Box<dyn Future<Output = Result<TtsStream, ModelError>> + Send + 'a>>;
}

impl<T: TtsModel> DynTtsModel for T {
    fn model_name(&self) -> &str {
        TtsModel::model_name(self)
    }

    fn synthesize_boxed<'a>(
        &'a self,
        text: &'a str,
        options: &'a TtsOptions,
    ) -> Pin<Box<dyn Future<Output = Result<TtsStream, ModelError>> + Send + 'a>> {
        Box::pin(self.synthesize(text, options))
    }
}

impl TtsModel for Arc<dyn DynTtsModel> {
    fn model_name(&self) -> &str {
        DynTtsModel::model_name(self.as_ref())
    }

    async fn synthesize(&self, text: &str, options: &TtsOptions) -> Result<TtsStream, ModelError> {
        self.as_ref().synthesize_boxed(text, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream;
    use pretty_assertions::assert_eq;

    fn audio(data: &[u8], media_type: &str) -> Result<TtsEvent, ModelError> {
        Ok(TtsEvent::Audio(AudioChunk {
            data: data.to_vec(),
            media_type: media_type.to_owned(),
            sample_rate: None,
        }))
    }

    fn of(items: Vec<Result<TtsEvent, ModelError>>) -> TtsStream {
        stream::iter(items).boxed()
    }

    #[tokio::test]
    async fn collecting_joins_the_chunks_and_keeps_the_usage() {
        let usage = TtsUsage {
            input_tokens: 1,
            output_tokens: 2,
            time: Duration::from_millis(3),
        };
        let items = vec![
            audio(b"ab", "audio/mpeg"),
            audio(b"c", "audio/mpeg"),
            Ok(TtsEvent::Done { usage: Some(usage) }),
        ];
        let whole = collect_audio(of(items)).await.unwrap();
        assert_eq!(whole.audio, b"abc".to_vec());
        assert_eq!(whole.media_type, "audio/mpeg");
        assert_eq!(whole.usage, Some(usage));
        assert_eq!(
            whole.into_playable(),
            (b"abc".to_vec(), "audio/mpeg".to_owned())
        );
    }

    #[tokio::test]
    async fn a_missing_end_a_format_change_or_too_much_audio_is_an_error() {
        let cases = [
            (vec![audio(b"a", "audio/mpeg")], usize::MAX),
            (
                vec![
                    audio(b"a", "audio/mpeg"),
                    audio(b"b", "audio/wav"),
                    Ok(TtsEvent::Done { usage: None }),
                ],
                usize::MAX,
            ),
            (
                vec![
                    audio(b"abc", "audio/mpeg"),
                    Ok(TtsEvent::Done { usage: None }),
                ],
                2,
            ),
        ];
        for (items, max) in cases {
            let err = collect_audio_bounded(of(items), max).await.unwrap_err();
            assert!(matches!(err, ModelError::Stream { .. }), "{err:?}");
        }
        let failed = vec![
            audio(b"a", "audio/mpeg"),
            Err(ModelError::Connection {
                message: "reset".to_owned(),
            }),
        ];
        let err = collect_audio(of(failed)).await.unwrap_err();
        assert!(matches!(err, ModelError::Connection { .. }), "{err:?}");
        let empty = collect_audio(of(vec![Ok(TtsEvent::Done { usage: None })]))
            .await
            .unwrap();
        assert!(empty.audio.is_empty());
    }
}
