//! Response bodies as byte streams, and bounded reads of them.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::stream::BoxStream;
use futures_util::{Stream, StreamExt};

use crate::error::{Error, Result};
use crate::idle::IdleTimeout;

/// The body of a response as a stream of byte chunks, with an idle timeout.
///
/// A connection that breaks mid-body yields [`Error::UnexpectedEof`]; a body that stays
/// silent for the idle timeout yields [`Error::IdleTimeout`]. Either is the last item.
///
/// # Cancel safety
///
/// Dropping the stream closes the connection (it is not returned to the pool half-read);
/// a dropped `next()` loses nothing.
pub struct BodyStream {
    inner: IdleTimeout<BoxStream<'static, Result<Bytes>>>,
}

impl std::fmt::Debug for BodyStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyStream")
            .field("idle_timeout", &self.inner.after())
            .finish()
    }
}

impl BodyStream {
    /// The body of `response`, failing when no chunk arrives for `idle_timeout`.
    pub fn new(response: reqwest::Response, idle_timeout: Duration) -> Self {
        let chunks = response
            .bytes_stream()
            .map(|chunk| chunk.map_err(Error::from_body));
        Self {
            inner: IdleTimeout::new(chunks.boxed(), idle_timeout),
        }
    }

    /// Reads the whole body, refusing more than `max_bytes`.
    ///
    /// # Errors
    ///
    /// [`Error::BodyTooLarge`] past `max_bytes`; any error item of the stream.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropping the future loses what was read so far.
    pub async fn collect_bounded(mut self, max_bytes: u64) -> Result<Bytes> {
        let mut body = BytesMut::new();
        while let Some(chunk) = self.next().await {
            let chunk = chunk?;
            if body.len() as u64 + chunk.len() as u64 > max_bytes {
                return Err(Error::BodyTooLarge { limit: max_bytes });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    }

    /// Reads at most `max_bytes` of the body and drops the rest; errors end the read
    /// quietly. For error bodies, where something is better than nothing.
    pub(crate) async fn collect_lossy(mut self, max_bytes: usize) -> Vec<u8> {
        let mut body = Vec::new();
        while let Some(Ok(chunk)) = self.next().await {
            let room = max_bytes - body.len();
            if chunk.len() >= room {
                body.extend_from_slice(&chunk[..room]);
                break;
            }
            body.extend_from_slice(&chunk);
        }
        body
    }
}

impl Stream for BodyStream {
    type Item = Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.inner).poll_next(cx)
    }
}
