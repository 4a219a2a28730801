//! A subscriber of the Redis bus: replay from the log, then live events
//! from the hub.

use std::collections::VecDeque;
use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::broadcast;

use super::super::{BusEvent, Cursor, EventStream};
use super::hub::{Attachment, Live};
use super::{RedisBus, cursor};
use crate::error::{Error, Result};

/// What one replay read returns.
struct Replay {
    /// The `forgets` counter when it was read.
    forgets: u64,
    /// The cursor the replay started after, if any.
    start: Option<Cursor>,
    events: Vec<BusEvent>,
}

/// A subscriber's position; dropping it detaches from the hub.
struct Follow {
    bus: RedisBus,
    session_id: String,
    rx: broadcast::Receiver<Live>,
    pending: VecDeque<BusEvent>,
    last: Option<Cursor>,
    /// Forget notices up to this number are older than the subscription.
    forgets: u64,
    _attachment: Attachment,
}

impl RedisBus {
    pub(super) async fn subscribe_now(
        &self,
        session_id: &str,
        after: Option<Cursor>,
    ) -> Result<EventStream> {
        let channel = self.inner.keys.channel(session_id);
        let (rx, attachment) = self.inner.hub.attach(&channel).await?;
        let replay = self.replay(session_id, after).await?;
        let last = replay.events.last().map(|e| e.cursor).or(replay.start);
        let follow = Follow {
            bus: self.clone(),
            session_id: session_id.to_owned(),
            rx,
            pending: replay.events.into(),
            last,
            forgets: replay.forgets,
            _attachment: attachment,
        };
        Ok(futures_util::stream::unfold(follow, Follow::next).boxed())
    }

    /// The retained events after `after` (after the checkpoint when
    /// `None`).
    async fn replay(&self, session_id: &str, after: Option<Cursor>) -> Result<Replay> {
        let after = after.map(|c| c.to_string()).unwrap_or_default();
        let (forgets, start, entries): (u64, String, Vec<(String, Vec<String>)>) = self
            .run(&self.inner.scripts.replay, session_id, &[after.as_bytes()])
            .await?;
        let start = if start.is_empty() {
            None
        } else {
            Some(cursor(&start)?)
        };
        let events = entries
            .into_iter()
            .map(|(id, fields)| {
                let payload = fields
                    .into_iter()
                    .nth(1)
                    .ok_or_else(|| Error::BusReply(format!("log entry {id} has no payload")))?;
                Ok(BusEvent {
                    cursor: cursor(&id)?,
                    payload: Arc::from(payload),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Replay {
            forgets,
            start,
            events,
        })
    }
}

impl Follow {
    /// The next event; `None` once the session is forgotten or the
    /// connection to Redis is lost.
    async fn next(mut self) -> Option<(BusEvent, Self)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                self.last = Some(event.cursor);
                return Some((event, self));
            }
            match self.rx.recv().await {
                Ok(Live::Event(event)) => {
                    if self.last.is_some_and(|last| event.cursor <= last) {
                        continue;
                    }
                    self.last = Some(event.cursor);
                    return Some((event, self));
                }
                Ok(Live::Forgotten(n)) => {
                    if n > self.forgets {
                        return None;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    // A forget notice lost with the lagged messages is
                    // not seen; the subscriber then follows the session's
                    // next run.
                    match self.bus.replay(&self.session_id, self.last).await {
                        Ok(replay) => self.pending = replay.events.into(),
                        Err(e) => {
                            tracing::warn!(session_id = self.session_id, error = %e, "redis bus: a lagging subscriber could not catch up; its stream ends");
                            return None;
                        }
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}
