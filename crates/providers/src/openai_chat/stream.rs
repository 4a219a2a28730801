//! Server-sent `chat.completion.chunk`s as a stream of [`ModelDelta`]s.

use std::collections::VecDeque;

use futures_util::stream::{self, Stream, StreamExt};
use oxiscope_http::{SseEvent, SseStream};
use oxiscope_model::{DeltaStream, ModelDelta, ModelError};

use super::chunk::{Completion, error_message};
use super::error::stream_error;

/// Decodes a raw Chat Completions SSE body (`data: {...}` chunks, then
/// `data: [DONE]`) into increments.
///
/// This is the decoder the model uses, exposed for replaying recorded
/// bodies and benchmarks: `bytes` can be any byte stream, in chunks cut
/// anywhere.
///
/// # Contract
/// The stream ends cleanly only after `[DONE]` or a chunk with a
/// `finish_reason`. A body that ends before either, a transport failure, a
/// chunk that is not a completion chunk, or an `{"error": ...}` chunk ends
/// the stream with one [`ModelError::Stream`] item.
///
/// # Cancel safety
/// Dropping the stream drops `bytes`; a dropped `next()` loses nothing.
pub fn decode_sse_stream<S, B>(bytes: S) -> DeltaStream
where
    S: Stream<Item = Result<B, oxiscope_http::Error>> + Send + Unpin + 'static,
    B: AsRef<[u8]>,
{
    decode_events(SseStream::new(bytes))
}

/// Like [`decode_sse_stream`], for events already framed.
pub(crate) fn decode_events<E>(events: E) -> DeltaStream
where
    E: Stream<Item = Result<SseEvent, oxiscope_http::Error>> + Send + Unpin + 'static,
{
    let state = Decoder {
        events,
        queue: VecDeque::new(),
        finished: false,
        done: false,
    };
    stream::unfold(state, |mut st| async move {
        loop {
            if let Some(delta) = st.queue.pop_front() {
                return Some((Ok(delta), st));
            }
            if st.done {
                return None;
            }
            let item = match st.events.next().await {
                None => {
                    st.done = true;
                    if st.finished {
                        return None;
                    }
                    Err(broken("the stream ended before [DONE]".to_owned()))
                }
                Some(Err(e)) => {
                    st.done = true;
                    Err(stream_error(&e))
                }
                Some(Ok(event)) => st.event(&event),
            };
            if let Err(e) = item {
                st.done = true;
                st.queue.clear();
                return Some((Err(e), st));
            }
        }
    })
    .boxed()
}

struct Decoder<E> {
    events: E,
    queue: VecDeque<ModelDelta>,
    /// A choice reported its `finish_reason`.
    finished: bool,
    /// Nothing more is read.
    done: bool,
}

impl<E> Decoder<E> {
    fn event(&mut self, event: &SseEvent) -> Result<(), ModelError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let completion: Completion = serde_json::from_str(data)
            .map_err(|e| broken(format!("malformed chunk ({e}): {}", preview(data))))?;
        if let Some(error) = &completion.error {
            return Err(broken(format!("error chunk: {}", error_message(error))));
        }
        self.finished |= completion.decode_into(&mut self.queue);
        Ok(())
    }
}

fn broken(message: String) -> ModelError {
    ModelError::Stream { message }
}

/// The start of a chunk, for error messages.
fn preview(data: &str) -> &str {
    match data.char_indices().nth(200) {
        Some((at, _)) => &data[..at],
        None => data,
    }
}
