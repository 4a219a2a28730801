//! Server-sent events framing: an incremental decoder and a stream over byte chunks.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_util::Stream;

use crate::error::{DecodeError, Error, Result};
use crate::lines::LineSplitter;

/// The default limit on one line or one event's data, in bytes (16 MiB).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One server-sent event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The `event:` field, if the event had one.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
    /// The `id:` field, if the event had one (values containing NUL are ignored).
    pub id: Option<String>,
    /// The `retry:` field, if the event had a valid one (ASCII digits, milliseconds).
    pub retry: Option<Duration>,
}

impl SseEvent {
    /// An event with only data.
    #[must_use]
    pub fn new(data: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            ..Self::default()
        }
    }

    /// Sets the event type.
    #[must_use]
    pub fn with_event(mut self, event: impl Into<String>) -> Self {
        self.event = Some(event.into());
        self
    }

    /// Sets the id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the retry hint.
    #[must_use]
    pub fn with_retry(mut self, retry: Duration) -> Self {
        self.retry = Some(retry);
        self
    }

    /// The event type, with the SSE default `"message"` when the event named none.
    #[must_use]
    pub fn event_type(&self) -> &str {
        self.event.as_deref().unwrap_or("message")
    }
}

/// An incremental SSE decoder: feed it byte chunks split anywhere, take events out.
///
/// It follows the WHATWG event-stream rules: lines end in CRLF, LF or CR; a leading
/// byte-order mark is dropped; lines starting with `:` are comments; a line without a colon
/// is a field with an empty value; one space after the colon is dropped; `data:` lines are
/// joined with `\n`; an empty line dispatches the event if it had any `data:` line; unknown
/// fields are ignored; bytes that are not UTF-8 become U+FFFD. Unlike a browser, it also
/// delivers a last event that lacks its final blank line at the end of input, so a stream
/// without a final newline loses nothing.
///
/// Each byte is scanned once; a line is copied only when it spans chunks.
///
/// ```
/// use oxiscope_http::{SseDecoder, SseEvent};
///
/// let mut decoder = SseDecoder::new();
/// decoder.feed(b"event: delta\ndata: hel").unwrap();
/// assert_eq!(decoder.next_event(), None);
/// decoder.feed(b"lo\n\n").unwrap();
/// assert_eq!(decoder.next_event(), Some(SseEvent::new("hello").with_event("delta")));
/// ```
#[derive(Debug)]
pub struct SseDecoder {
    lines: LineSplitter,
    fields: Fields,
    ready: VecDeque<SseEvent>,
}

/// The fields of the event being read.
#[derive(Debug, Default)]
struct Fields {
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    retry: Option<Duration>,
    max_data: usize,
    too_long: bool,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder with the default size limit ([`DEFAULT_MAX_EVENT_BYTES`]).
    #[must_use]
    pub fn new() -> Self {
        Self::with_max_event_bytes(DEFAULT_MAX_EVENT_BYTES)
    }

    /// A decoder that refuses a line or an event's data longer than `max` bytes.
    #[must_use]
    pub fn with_max_event_bytes(max: usize) -> Self {
        Self {
            lines: LineSplitter::new(max),
            fields: Fields {
                max_data: max,
                ..Fields::default()
            },
            ready: VecDeque::new(),
        }
    }

    /// Feeds the next chunk of the byte stream.
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] with [`DecodeError::TooLong`] when a line or an event grows past
    /// the limit; the decoder should not be fed again after that.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<()> {
        let Self {
            lines,
            fields,
            ready,
        } = self;
        let fed = lines.feed(chunk, |line| fields.line(line, ready));
        if fed.is_err() || fields.too_long {
            return Err(Error::Decode {
                kind: DecodeError::TooLong {
                    limit: fields.max_data,
                },
            });
        }
        Ok(())
    }

    /// Ends the input: a last line without terminator is read, and an event still open is
    /// dispatched.
    pub fn finish(&mut self) {
        let Self {
            lines,
            fields,
            ready,
        } = self;
        lines.finish(|line| fields.line(line, ready));
        fields.dispatch(ready);
    }

    /// Takes the next complete event, if there is one.
    pub fn next_event(&mut self) -> Option<SseEvent> {
        self.ready.pop_front()
    }
}

impl Fields {
    fn line(&mut self, line: &[u8], ready: &mut VecDeque<SseEvent>) {
        if line.is_empty() {
            self.dispatch(ready);
            return;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(0) => return,
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max_data {
                    self.too_long = true;
                    return;
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                self.data.push_str(&String::from_utf8_lossy(value));
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            b"id" if !value.contains(&0) => {
                self.id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // Digits only, so this fails only on overflow, which is ignored too.
                let millis = std::str::from_utf8(value)
                    .ok()
                    .and_then(|digits| digits.parse::<u64>().ok());
                if let Some(millis) = millis {
                    self.retry = Some(Duration::from_millis(millis));
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, ready: &mut VecDeque<SseEvent>) {
        if self.has_data {
            ready.push_back(SseEvent {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
                id: self.id.take(),
                retry: self.retry.take(),
            });
        } else {
            self.event = None;
            self.id = None;
            self.retry = None;
        }
        self.has_data = false;
    }
}

/// A stream of [`SseEvent`]s read from a stream of byte chunks.
///
/// When the byte stream ends, a last event without its final blank line is still
/// delivered, then the stream ends. When the byte stream yields an error (for a response
/// body: [`Error::UnexpectedEof`] or [`Error::IdleTimeout`]), the partly read event is
/// dropped, the error is the last item, and the stream ends: a stream cut mid-way is never
/// passed off as complete. A clean end does not prove the server finished; protocols with a
/// final event (`[DONE]`, `message_stop`) should check for it, for example with
/// [`crate::RequireFinal`].
///
/// # Cancel safety
///
/// Dropping the stream drops the byte stream, which for a response body closes the
/// connection. Nothing is lost by dropping a pending `next()`: events are only taken out
/// when returned.
#[derive(Debug)]
pub struct SseStream<S> {
    bytes: S,
    decoder: SseDecoder,
    error: Option<Error>,
    done: bool,
}

impl<S> SseStream<S> {
    /// Reads events from `bytes`, with the default size limit.
    pub fn new(bytes: S) -> Self {
        Self::with_decoder(bytes, SseDecoder::new())
    }

    /// Reads events from `bytes` with a decoder configured by the caller.
    pub fn with_decoder(bytes: S, decoder: SseDecoder) -> Self {
        Self {
            bytes,
            decoder,
            error: None,
            done: false,
        }
    }
}

impl<S, B, E> Stream for SseStream<S>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: Into<Error>,
{
    type Item = Result<SseEvent>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(event) = this.decoder.next_event() {
                return Poll::Ready(Some(Ok(event)));
            }
            if let Some(err) = this.error.take() {
                this.done = true;
                return Poll::Ready(Some(Err(err)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            match ready!(Pin::new(&mut this.bytes).poll_next(cx)) {
                Some(Ok(chunk)) => {
                    // Events completed before an over-long one are still delivered first.
                    if let Err(err) = this.decoder.feed(chunk.as_ref()) {
                        this.error = Some(err);
                    }
                }
                Some(Err(err)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(err.into())));
                }
                None => {
                    this.done = true;
                    this.decoder.finish();
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
