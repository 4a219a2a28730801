//! Emitting a reply's events: each event is applied to the reply message
//! kept in the agent state (so the state always equals what the stream
//! rebuilds), then sent to the consumer.

use oxiscope_message::{AgentEvent, Msg};
use tokio::sync::mpsc;

use crate::error::AgentError;

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
        reply
            .append_event(&event)
            .map_err(|e| AgentError::Internal(e.to_string()))?;
        self.send(event).await;
        Ok(())
    }

    /// Sends an event that does not change the reply message.
    pub(crate) async fn send(&mut self, event: AgentEvent) {
        if !self.closed && self.tx.send(event).await.is_err() {
            self.closed = true;
        }
    }

    /// The channel (to wait for the consumer to go away).
    pub(crate) fn sender(&self) -> &mpsc::Sender<AgentEvent> {
        &self.tx
    }

    /// Whether the consumer dropped the stream.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed || self.tx.is_closed()
    }
}
