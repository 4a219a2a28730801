//! Emitting a reply's events: each event is applied to the reply message
//! kept in the agent state with [`apply_event`] (so the state always
//! equals what the stream rebuilds), then sent to the consumer.

use oxiscope_message::{AgentEvent, AppendError, Appended, Id, Msg, Stamp, Stamper};
use tokio::sync::mpsc;

use crate::error::AgentError;

/// Applies one event to a reply message exactly as the agent does: like
/// [`Msg::append_event`], but the blocks the event creates take their
/// time (and, for a text block inside a tool result, their id) from the
/// event instead of the clock. Rebuilding a reply's stream this way —
/// [`Msg::reply`] from `REPLY_START`, then every event (and, for a
/// resumed reply, the input event first) — gives exactly the message the
/// agent stores.
///
/// # Errors
/// As [`Msg::append_event`].
pub fn apply_event(msg: &mut Msg, event: &AgentEvent) -> Result<Appended, AppendError> {
    msg.append_event_with(event, &EventStamp(event))
}

/// Ids and times from the event being applied.
struct EventStamp<'a>(&'a AgentEvent);

impl Stamper for EventStamp<'_> {
    fn new_id(&self) -> Id {
        self.0.id().into()
    }

    fn now(&self) -> Stamp {
        self.0.created_at().clone()
    }
}

/// The sending half of a reply: the reply message and the channel.
#[derive(Debug)]
pub(crate) struct Emitter {
    tx: mpsc::Sender<AgentEvent>,
    /// Whether the consumer has gone away (the reply goes on updating the
    /// state until it reaches a consistent end).
    closed: bool,
}

impl Emitter {
    pub(crate) fn new(tx: mpsc::Sender<AgentEvent>) -> Self {
        Self { tx, closed: false }
    }

    /// Applies `event` to `reply`, then sends it.
    ///
    /// # Errors
    /// [`AgentError::Internal`] when the event does not fit the message —
    /// a bug in the loop, reported instead of corrupting the state.
    pub(crate) async fn emit(
        &mut self,
        reply: &mut Msg,
        event: AgentEvent,
    ) -> Result<(), AgentError> {
        apply_event(reply, &event).map_err(|e| AgentError::Internal(e.to_string()))?;
        self.send(event).await;
        Ok(())
    }

    /// Sends an event that does not change the reply message.
    pub(crate) async fn send(&mut self, event: AgentEvent) {
        if !self.closed && self.tx.send(event).await.is_err() {
            self.closed = true;
        }
    }

    /// Whether the consumer dropped the stream.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed || self.tx.is_closed()
    }
}
