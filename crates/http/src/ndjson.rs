//! Newline-delimited JSON framing: lines of a byte stream, raw or parsed.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_util::Stream;
use serde::de::DeserializeOwned;

use crate::error::{DecodeError, Error, Result};
use crate::lines::LineSplitter;
use crate::sse::DEFAULT_MAX_EVENT_BYTES;

/// A stream of the non-blank lines of a byte stream, as `String`s.
///
/// Lines end in LF, CRLF or CR, may be split across chunks at any byte, and a last line
/// without terminator is delivered at the end of input. Lines holding only whitespace are
/// skipped and a leading byte-order mark is dropped. A line that is not UTF-8 is an
/// [`Error::Decode`] item; an error (from the bytes or from decoding) is the last item.
///
/// # Cancel safety
///
/// Dropping the stream drops the byte stream (for a response body: closes the connection);
/// a dropped `next()` loses nothing.
#[derive(Debug)]
pub struct LineStream<S> {
    reader: LineReader<S>,
}

/// A stream of JSON values, one per non-blank line of a byte stream (NDJSON / JSON Lines).
///
/// Framing as for [`LineStream`]; each line is parsed as a `T` (by default
/// [`serde_json::Value`]). A line that does not parse is an [`Error::Decode`] item carrying
/// the line number, and ends the stream.
///
/// # Cancel safety
///
/// As for [`LineStream`].
#[derive(Debug)]
pub struct NdjsonStream<S, T = serde_json::Value> {
    reader: LineReader<S>,
    _item: PhantomData<fn() -> T>,
}

impl<S> LineStream<S> {
    /// Reads lines from `bytes`, refusing lines over 16 MiB.
    pub fn new(bytes: S) -> Self {
        Self {
            reader: LineReader::new(bytes, DEFAULT_MAX_EVENT_BYTES),
        }
    }

    /// Reads lines from `bytes`, refusing lines over `max_line` bytes.
    pub fn with_max_line(bytes: S, max_line: usize) -> Self {
        Self {
            reader: LineReader::new(bytes, max_line),
        }
    }
}

impl<S, T> NdjsonStream<S, T> {
    /// Reads JSON lines from `bytes`, refusing lines over 16 MiB.
    pub fn new(bytes: S) -> Self {
        Self::with_max_line(bytes, DEFAULT_MAX_EVENT_BYTES)
    }

    /// Reads JSON lines from `bytes`, refusing lines over `max_line` bytes.
    pub fn with_max_line(bytes: S, max_line: usize) -> Self {
        Self {
            reader: LineReader::new(bytes, max_line),
            _item: PhantomData,
        }
    }
}

impl<S, B, E> Stream for LineStream<S>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: Into<Error>,
{
    type Item = Result<String>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let reader = &mut self.reader;
        let Some((number, line)) = ready!(reader.poll_line(cx)?) else {
            return Poll::Ready(None);
        };
        let decoded = String::from_utf8(line).map_err(|_| Error::Decode {
            kind: DecodeError::Utf8 { line: number },
        });
        if decoded.is_err() {
            reader.stop();
        }
        Poll::Ready(Some(decoded))
    }
}

impl<S, B, E, T> Stream for NdjsonStream<S, T>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: Into<Error>,
    T: DeserializeOwned,
{
    type Item = Result<T>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let reader = &mut self.reader;
        let Some((number, line)) = ready!(reader.poll_line(cx)?) else {
            return Poll::Ready(None);
        };
        let parsed = serde_json::from_slice(&line).map_err(|source| Error::Decode {
            kind: DecodeError::Json {
                line: Some(number),
                source,
            },
        });
        if parsed.is_err() {
            reader.stop();
        }
        Poll::Ready(Some(parsed))
    }
}

/// A complete non-blank line with its 1-based line number.
type NumberedLine = (u64, Vec<u8>);

/// The shared engine: complete non-blank lines with their 1-based line numbers.
#[derive(Debug)]
struct LineReader<S> {
    bytes: S,
    splitter: LineSplitter,
    ready: VecDeque<NumberedLine>,
    line_number: u64,
    max_line: usize,
    done: bool,
}

impl<S> LineReader<S> {
    fn new(bytes: S, max_line: usize) -> Self {
        Self {
            bytes,
            splitter: LineSplitter::new(max_line),
            ready: VecDeque::new(),
            line_number: 0,
            max_line,
            done: false,
        }
    }

    /// Ends the stream after an error item.
    fn stop(&mut self) {
        self.done = true;
        self.ready.clear();
    }

    fn push_line(ready: &mut VecDeque<NumberedLine>, number: &mut u64, line: &[u8]) {
        *number += 1;
        if !line.iter().all(u8::is_ascii_whitespace) {
            ready.push_back((*number, line.to_vec()));
        }
    }

    fn poll_line<B, E>(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<NumberedLine>>>
    where
        S: Stream<Item = Result<B, E>> + Unpin,
        B: AsRef<[u8]>,
        E: Into<Error>,
    {
        loop {
            if let Some(line) = self.ready.pop_front() {
                return Poll::Ready(Some(Ok(line)));
            }
            if self.done {
                return Poll::Ready(None);
            }
            let Self {
                bytes,
                splitter,
                ready,
                line_number,
                max_line,
                done,
            } = self;
            match ready!(Pin::new(bytes).poll_next(cx)) {
                Some(Ok(chunk)) => {
                    let fed = splitter.feed(chunk.as_ref(), |line| {
                        Self::push_line(ready, line_number, line);
                    });
                    if fed.is_err() {
                        // Lines completed before the over-long one are dropped with it: the
                        // error ends the stream either way.
                        ready.clear();
                        *done = true;
                        let kind = DecodeError::TooLong { limit: *max_line };
                        return Poll::Ready(Some(Err(Error::Decode { kind })));
                    }
                }
                Some(Err(err)) => {
                    *done = true;
                    return Poll::Ready(Some(Err(err.into())));
                }
                None => {
                    *done = true;
                    splitter.finish(|line| Self::push_line(ready, line_number, line));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use futures_util::{StreamExt, stream};
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;

    fn chunks(parts: &[&'static [u8]]) -> impl Stream<Item = Result<Bytes>> + Unpin {
        stream::iter(
            parts
                .iter()
                .map(|p| Ok(Bytes::from_static(p)))
                .collect::<Vec<_>>(),
        )
    }

    async fn values(parts: &[&'static [u8]]) -> Vec<Result<Value>> {
        NdjsonStream::<_, Value>::new(chunks(parts)).collect().await
    }

    #[tokio::test]
    async fn blank_lines_are_skipped_and_missing_final_newline_is_fine() {
        let got: Vec<Value> = values(&[b"{\"a\":1}\n\n  \r\n{\"b\"", b":2}\r{\"c\":", b"3}"])
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(got, [json!({"a": 1}), json!({"b": 2}), json!({"c": 3})]);
    }

    #[tokio::test]
    async fn invalid_json_is_a_decode_error_with_line_number_and_ends_the_stream() {
        let got = values(&[b"{\"a\":1}\n\nnot json\n{\"b\":2}\n"]).await;
        assert_eq!(got.len(), 2);
        assert!(
            matches!(
                &got[1],
                Err(Error::Decode {
                    kind: DecodeError::Json { line: Some(3), .. }
                })
            ),
            "{got:?}"
        );
    }

    #[tokio::test]
    async fn raw_lines_keep_utf8_split_across_chunks() {
        let text = "ä👋\nb".as_bytes();
        let (head, tail) = text.split_at(3);
        let head: &'static [u8] = head.to_vec().leak();
        let tail: &'static [u8] = tail.to_vec().leak();
        let got: Vec<String> = LineStream::new(chunks(&[head, tail]))
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(got, ["ä👋", "b"]);
    }

    #[tokio::test]
    async fn invalid_utf8_line_is_a_decode_error() {
        let got: Vec<Result<String>> = LineStream::new(chunks(&[b"ok\n\xFF\nmore\n"]))
            .collect()
            .await;
        assert_eq!(got.len(), 2);
        assert!(matches!(
            &got[1],
            Err(Error::Decode {
                kind: DecodeError::Utf8 { line: 2 }
            })
        ));
    }

    #[tokio::test]
    async fn over_long_line_is_a_decode_error() {
        let got: Vec<Result<String>> = LineStream::with_max_line(chunks(&[b"abc", b"defgh"]), 4)
            .collect()
            .await;
        assert_eq!(got.len(), 1);
        assert!(matches!(
            &got[0],
            Err(Error::Decode {
                kind: DecodeError::TooLong { limit: 4 }
            })
        ));
    }
}
