//! An idle timeout for any stream of results.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use tokio::time::{Instant, Sleep};

use crate::error::Error;

/// Ends a stream with [`Error::IdleTimeout`] when no item arrives for `after`.
///
/// The clock starts when the wrapper is first polled and restarts at every item. After the
/// timeout item, or any error item of the inner stream, the stream ends. Items of the
/// inner stream `Result<T, E>` come out as `Result<T, Error>`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// use futures_util::{StreamExt, stream};
/// use oxiscope_http::{Error, IdleTimeout};
///
/// let silent = stream::pending::<Result<bytes::Bytes, Error>>();
/// let mut stream = IdleTimeout::new(silent, Duration::from_secs(30));
/// assert!(matches!(stream.next().await, Some(Err(Error::IdleTimeout { .. }))));
/// assert!(stream.next().await.is_none());
/// # }
/// ```
///
/// # Cancel safety
///
/// Dropping the wrapper drops the inner stream; a dropped `next()` loses nothing.
#[derive(Debug)]
pub struct IdleTimeout<S> {
    inner: S,
    after: Duration,
    /// Created at the first wait (so the wrapper can be built outside a runtime) and
    /// reused after. It is not moved at every item (a trip through the runtime's timer
    /// wheel per chunk): set at an earlier wait, it may fire early, and is then moved to
    /// `deadline`.
    sleep: Option<Pin<Box<Sleep>>>,
    /// When the current wait becomes a timeout: `after` past its start (`None` between an
    /// item and the next wait).
    deadline: Option<Instant>,
    done: bool,
}

impl<S> IdleTimeout<S> {
    /// Wraps `inner` with an idle timeout of `after`.
    pub fn new(inner: S, after: Duration) -> Self {
        Self {
            inner,
            after,
            sleep: None,
            deadline: None,
            done: false,
        }
    }

    /// The idle timeout.
    pub fn after(&self) -> Duration {
        self.after
    }

    /// Unwraps the inner stream.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, T, E> Stream for IdleTimeout<S>
where
    S: Stream<Item = Result<T, E>> + Unpin,
    E: Into<Error>,
{
    type Item = Result<T, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if let Poll::Ready(item) = Pin::new(&mut this.inner).poll_next(cx) {
            this.deadline = None;
            return Poll::Ready(match item {
                Some(Ok(value)) => Some(Ok(value)),
                Some(Err(err)) => {
                    this.done = true;
                    Some(Err(err.into()))
                }
                None => {
                    this.done = true;
                    None
                }
            });
        }
        let after = this.after;
        let deadline = *this.deadline.get_or_insert_with(|| Instant::now() + after);
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        loop {
            match sleep.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                // Set at an earlier silence: items came since.
                Poll::Ready(()) if sleep.deadline() < deadline => sleep.as_mut().reset(deadline),
                Poll::Ready(()) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(Error::IdleTimeout { after })));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use futures_util::{StreamExt, stream};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn items_arriving_in_time_pass_through() {
        let slow = stream::iter([1, 2, 3]).then(|n| async move {
            tokio::time::sleep(Duration::from_secs(20)).await;
            Ok::<_, Error>(n)
        });
        let got: Vec<_> = IdleTimeout::new(Box::pin(slow), Duration::from_secs(30))
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(got, [1, 2, 3]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_timer_set_at_an_earlier_wait_neither_cuts_a_later_one_short_nor_stretches_it() {
        // Each wait (3 s) is under the timeout, all of them together far over it.
        let steady = stream::iter(0..6).then(|n| async move {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Ok::<_, Error>(n)
        });
        let stalled = Box::pin(steady.chain(stream::pending()));
        let mut stream = IdleTimeout::new(stalled, Duration::from_secs(5));
        for n in 0..6 {
            assert_eq!(stream.next().await.unwrap().unwrap(), n);
        }
        let silent_since = Instant::now();
        let err = stream.next().await.unwrap().unwrap_err();
        assert!(matches!(err, Error::IdleTimeout { .. }));
        assert_eq!(silent_since.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn silence_after_a_chunk_is_an_idle_timeout() {
        let first = stream::iter([Ok::<_, Error>(Bytes::from_static(b"x"))]);
        let stalled = first.chain(stream::pending());
        let mut stream = IdleTimeout::new(stalled, Duration::from_secs(5));
        assert_eq!(
            stream.next().await.unwrap().unwrap(),
            Bytes::from_static(b"x")
        );
        let err = stream.next().await.unwrap().unwrap_err();
        assert!(matches!(err, Error::IdleTimeout { after } if after == Duration::from_secs(5)));
        assert!(stream.next().await.is_none());
    }
}
