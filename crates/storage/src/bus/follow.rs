//! A subscriber of the in-process bus: replay, then live events.

use std::collections::VecDeque;

use tokio::sync::broadcast;

use super::memory::InMemoryBus;
use super::{BusEvent, Cursor};

/// A subscriber's position: replayed events still to send, the live
/// receiver, and the last cursor sent (to drop duplicates and to catch up
/// after falling behind). Dropping it tells the bus the subscriber left.
pub(super) struct Follow {
    pub(super) bus: InMemoryBus,
    pub(super) session_id: String,
    /// The slot subscribed to: a later slot of the same session is not
    /// this subscriber's.
    pub(super) generation: u64,
    pub(super) pending: VecDeque<BusEvent>,
    pub(super) rx: broadcast::Receiver<BusEvent>,
    pub(super) last: Option<Cursor>,
}

impl Follow {
    /// The next event, or `None` once the session is forgotten.
    pub(super) async fn next(mut self) -> Option<(BusEvent, Self)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                self.last = Some(event.cursor);
                return Some((event, self));
            }
            match self.rx.recv().await {
                Ok(event) => {
                    if self.last.is_some_and(|last| event.cursor <= last) {
                        continue;
                    }
                    self.last = Some(event.cursor);
                    return Some((event, self));
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let caught_up =
                        self.bus
                            .catch_up(&self.session_id, self.generation, self.last)?;
                    self.pending = caught_up.into();
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        self.bus.unsubscribe(&self.session_id, self.generation);
    }
}
