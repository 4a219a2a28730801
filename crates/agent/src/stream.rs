//! The stream a reply returns.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures_util::{Stream, StreamExt};
use oxiscope_message::{AgentEvent, Msg};
use tokio_util::sync::CancellationToken;

use crate::agent::Inner;
use crate::middleware::EventStream;

/// The events of one reply.
///
/// # Contract
/// The first event is `REPLY_START`, exactly once (also when a parked
/// reply resumes: it carries the parked reply's id). The stream then ends
/// either
/// - with exactly one `REPLY_END`, its last event — finished reason
///   `completed`, `interrupted`, `exceed_max_iters` or `error` (also for an
///   input refused before anything changed: a `REPLY_START` / `REPLY_END`
///   pair of its own, with the error, that the state does not record), or
/// - when the reply parks, with `REQUIRE_USER_CONFIRM` /
///   `REQUIRE_EXTERNAL_EXECUTION` and no `REPLY_END` (the reply is not
///   finished; it continues, with a new `REPLY_START` of the same id, when
///   the answer arrives), as AgentScope does.
///
/// An interrupt sent to an agent that is not parked on that reply is a
/// no-op: the stream is empty.
///
/// The reply message the agent stores is exactly the message rebuilt from
/// the stream: [`new_reply_msg`](crate::new_reply_msg) of the
/// `REPLY_START`, then [`apply_event`](crate::apply_event) of every event
/// (for a resumed reply: the stored message, the input event, then the
/// stream). Exceptions are opt-in: hints configured not to be streamed
/// (`emit_hint_event` off, [`PrepHint`](crate::PrepHint) flags), and a
/// compression that cuts into the running reply (the stored reply keeps
/// only what stayed). `on_reply` middleware changes only what the consumer
/// sees, never the state.
///
/// # Cancel safety
/// Dropping the stream interrupts the reply: the agent stops at the next
/// safe point, closes unfinished tool calls with interrupted results, keeps
/// the partial text and ends the reply as interrupted in its state, so the
/// next reply can start at once.
pub struct ReplyStream {
    events: EventStream,
    cancel: CancellationToken,
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ReplyStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplyStream").finish_non_exhaustive()
    }
}

/// An item of [`ReplyStream::with_message`]: every event, then the reply
/// message.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyItem {
    /// An event of the reply.
    Event(AgentEvent),
    /// The reply message as the agent's state holds it once the stream
    /// ended: finished (`finished_reason` set) or parked.
    Message(Msg),
}

impl ReplyStream {
    pub(crate) fn new(events: EventStream, cancel: CancellationToken, inner: Arc<Inner>) -> Self {
        Self {
            events,
            cancel,
            inner,
        }
    }

    /// Interrupts the reply; the stream then ends with `REPLY_END`
    /// (`interrupted`).
    pub fn interrupt(&self) {
        self.cancel.cancel();
    }

    /// The same events, followed by the reply message once the reply
    /// ended or parked (nothing more when the input started no reply).
    pub fn with_message(self) -> impl Stream<Item = ReplyItem> + Send {
        let inner = Arc::clone(&self.inner);
        let reply_id: Arc<Mutex<Option<String>>> = Arc::default();
        let seen = Arc::clone(&reply_id);
        let events = self.map(move |event| {
            if let AgentEvent::ReplyStart(start) = &event {
                *seen.lock().unwrap_or_else(PoisonError::into_inner) = Some(start.reply_id.clone());
            }
            ReplyItem::Event(event)
        });
        let last = futures_util::stream::once(async move {
            let id = reply_id
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()?;
            let state = inner.state.lock().await;
            let msg = state.context.iter().rev().find(|m| m.id == id)?.clone();
            Some(ReplyItem::Message(msg))
        })
        .filter_map(futures_util::future::ready);
        events.chain(last)
    }
}

impl Stream for ReplyStream {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.events.as_mut().poll_next(cx)
    }
}

impl Drop for ReplyStream {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
