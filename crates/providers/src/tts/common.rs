//! What the TTS wires share: HTTP failures as [`ModelError`]s, base64
//! audio, and turning a provider's server-sent events into a [`TtsStream`].

use std::collections::VecDeque;
use std::time::Instant;

use base64::Engine as _;
use futures_util::stream::{self, StreamExt};
use oxiscope_http::{BodyStream, Error as HttpError, SseEvent, SseStream};
use oxiscope_model::{AudioChunk, ModelError, TtsEvent, TtsStream, TtsUsage};

pub(super) use crate::wire::{ReadBody, invalid, own_client, wrong_credential};

/// `url` without its trailing `/`s.
pub(super) fn trimmed(url: &str) -> String {
    url.trim().trim_end_matches('/').to_owned()
}

/// The error for audio or an event that cannot be read.
pub(super) fn malformed(provider: &str, what: &str) -> ModelError {
    ModelError::Stream {
        message: format!("malformed {provider} speech response: {what}"),
    }
}

/// The bytes of base64 `data` (standard alphabet, padding optional).
pub(super) fn decode_base64(provider: &str, data: &str) -> Result<Vec<u8>, ModelError> {
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(data.trim()))
        .map_err(|e| malformed(provider, &format!("audio that is not base64 ({e})")))
}

/// An HTTP failure of a speech call to `provider`.
pub(super) fn from_http(err: HttpError, provider: &str, read_body: ReadBody) -> ModelError {
    crate::wire::from_http(err, provider, read_body, "speech stream")
}

/// The stream of an empty text: nothing to say, nothing sent.
pub(super) fn nothing_to_say() -> TtsStream {
    stream::iter([Ok(TtsEvent::Done { usage: None })]).boxed()
}

/// Token counts a provider reported: `(input, output)`.
pub(super) type Tokens = (u64, u64);

/// Reads the events of one provider's streamed synthesis.
pub(super) trait EventDecoder: Send + 'static {
    /// The audio of one event.
    ///
    /// # Errors
    /// [`ModelError::Stream`] for an event that cannot be read,
    /// [`ModelError::Provider`] for an error event.
    fn event(&mut self, event: &SseEvent) -> Result<Vec<AudioChunk>, ModelError>;

    /// Whether the provider's final event was seen.
    fn finished(&self) -> bool;

    /// The tokens reported so far.
    fn tokens(&self) -> Option<Tokens>;
}

/// The `Done` item of a call that started at `started`.
pub(super) fn done(tokens: Option<Tokens>, started: Instant) -> TtsEvent {
    TtsEvent::Done {
        usage: tokens.map(|(input_tokens, output_tokens)| TtsUsage {
            input_tokens,
            output_tokens,
            time: started.elapsed(),
        }),
    }
}

struct SseState<D> {
    events: SseStream<BodyStream>,
    decoder: D,
    pending: VecDeque<TtsEvent>,
    ended: bool,
    provider: &'static str,
    read_body: ReadBody,
    started: Instant,
}

/// The audio of a streamed call: each event's chunks in order, then `Done`
/// once the body ends after the provider's final event. A body that ends
/// before it, breaks or stalls, and a malformed or error event, end the
/// stream with an error item.
pub(super) fn sse_audio<D: EventDecoder>(
    events: SseStream<BodyStream>,
    decoder: D,
    provider: &'static str,
    read_body: ReadBody,
    started: Instant,
) -> TtsStream {
    let state = SseState {
        events,
        decoder,
        pending: VecDeque::new(),
        ended: false,
        provider,
        read_body,
        started,
    };
    stream::unfold(state, |mut st| async move {
        loop {
            if let Some(event) = st.pending.pop_front() {
                return Some((Ok(event), st));
            }
            if st.ended {
                return None;
            }
            let failure = match st.events.next().await {
                None if st.decoder.finished() => {
                    st.ended = true;
                    st.pending.push_back(done(st.decoder.tokens(), st.started));
                    continue;
                }
                None => ModelError::Stream {
                    message: format!(
                        "the {} speech stream ended before its final event (cut short)",
                        st.provider
                    ),
                },
                Some(Err(e)) => from_http(e, st.provider, st.read_body),
                Some(Ok(event)) if event.data.trim().is_empty() => continue,
                Some(Ok(event)) => match st.decoder.event(&event) {
                    Ok(chunks) => {
                        st.pending.extend(chunks.into_iter().map(TtsEvent::Audio));
                        continue;
                    }
                    Err(e) => e,
                },
            };
            st.ended = true;
            st.pending.clear();
            return Some((Err(failure), st));
        }
    })
    .boxed()
}
