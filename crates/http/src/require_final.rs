//! Turning "the stream ended before its final event" into an error item.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_util::Stream;

use crate::error::{Error, Result};

/// Passes a stream through, and adds [`Error::UnexpectedEof`] as a last item when the
/// stream ends cleanly without an item that `is_final` accepted.
///
/// Streaming protocols mark their end (`data: [DONE]` for OpenAI chat completions,
/// `event: message_stop` for Anthropic); a connection closed before that marker has cut
/// the reply short even when the transport saw a clean end. Items after the final one are
/// passed through too. When the inner stream ends with an error item, no second error is
/// added.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use futures_util::{StreamExt, stream};
/// use oxiscope_http::{Error, RequireFinal, SseEvent, SseStream};
///
/// let body = stream::iter([Ok::<_, Error>(&b"data: {\"partial\":1}\n\n"[..])]);
/// let events = RequireFinal::new(SseStream::new(body), |event: &SseEvent| event.data == "[DONE]");
/// let items: Vec<_> = events.collect().await;
/// assert!(matches!(items.last(), Some(Err(Error::UnexpectedEof { source: None }))));
/// # }
/// ```
///
/// # Cancel safety
///
/// Dropping it drops the inner stream; a dropped `next()` loses nothing.
#[derive(Debug)]
pub struct RequireFinal<S, F> {
    inner: S,
    is_final: F,
    seen_final: bool,
    failed: bool,
    done: bool,
}

impl<S, F> RequireFinal<S, F> {
    /// Wraps `inner`; `is_final` tells the protocol's final item.
    pub fn new(inner: S, is_final: F) -> Self {
        Self {
            inner,
            is_final,
            seen_final: false,
            failed: false,
            done: false,
        }
    }

    /// Whether the final item has been seen.
    pub fn seen_final(&self) -> bool {
        self.seen_final
    }
}

impl<S, F, T> Stream for RequireFinal<S, F>
where
    S: Stream<Item = Result<T>> + Unpin,
    F: FnMut(&T) -> bool + Unpin,
{
    type Item = Result<T>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        match ready!(Pin::new(&mut this.inner).poll_next(cx)) {
            Some(Ok(item)) => {
                if !this.seen_final && (this.is_final)(&item) {
                    this.seen_final = true;
                }
                Poll::Ready(Some(Ok(item)))
            }
            Some(Err(err)) => {
                this.failed = true;
                Poll::Ready(Some(Err(err)))
            }
            None => {
                this.done = true;
                if this.seen_final || this.failed {
                    Poll::Ready(None)
                } else {
                    Poll::Ready(Some(Err(Error::unexpected_eof())))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::{StreamExt, stream};

    use super::*;

    async fn run(items: Vec<Result<u32>>) -> Vec<Result<u32>> {
        RequireFinal::new(stream::iter(items), |n: &u32| *n == 0)
            .collect()
            .await
    }

    #[tokio::test]
    async fn stream_with_final_item_ends_cleanly() {
        let got = run(vec![Ok(1), Ok(0), Ok(2)]).await;
        assert_eq!(
            got.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
            [1, 0, 2]
        );
    }

    #[tokio::test]
    async fn stream_without_final_item_ends_with_unexpected_eof() {
        let got = run(vec![Ok(1), Ok(2)]).await;
        assert_eq!(got.len(), 3);
        assert!(matches!(got[2], Err(Error::UnexpectedEof { source: None })));
    }

    #[tokio::test]
    async fn inner_error_is_not_doubled() {
        let got = run(vec![
            Ok(1),
            Err(Error::IdleTimeout {
                after: Default::default(),
            }),
        ])
        .await;
        assert_eq!(got.len(), 2);
        assert!(matches!(got[1], Err(Error::IdleTimeout { .. })));
    }
}
