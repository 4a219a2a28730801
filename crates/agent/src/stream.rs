//! The stream a reply returns.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;
use oxiscope_message::AgentEvent;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The events of one reply.
///
/// # Contract
/// The first event is `REPLY_START` (also when a parked reply resumes: it
/// carries the parked reply's id). The stream ends either with exactly one
/// `REPLY_END` — finished reason `completed`, `interrupted`,
/// `exceed_max_iters` or `error` — or, when the reply parks, with
/// `REQUIRE_USER_CONFIRM` / `REQUIRE_EXTERNAL_EXECUTION` (the reply is not
/// finished; it continues when the answer arrives). An interrupt sent to an
/// agent that is not parked is a no-op: the stream is empty.
///
/// # Cancel safety
/// Dropping the stream interrupts the reply: the agent stops at the next
/// safe point, closes unfinished tool calls with interrupted results, keeps
/// the partial text and ends the reply as interrupted in its state, so the
/// next reply can start at once.
#[derive(Debug)]
pub struct ReplyStream {
    rx: mpsc::Receiver<AgentEvent>,
    cancel: CancellationToken,
}

impl ReplyStream {
    pub(crate) fn new(rx: mpsc::Receiver<AgentEvent>, cancel: CancellationToken) -> Self {
        Self { rx, cancel }
    }

    /// Interrupts the reply; the stream then ends with `REPLY_END`
    /// (`interrupted`).
    pub fn interrupt(&self) {
        self.cancel.cancel();
    }
}

impl Stream for ReplyStream {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for ReplyStream {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
