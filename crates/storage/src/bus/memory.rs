//! [`InMemoryBus`]: the bus of a single process.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::{Mutex as AsyncMutex, broadcast, mpsc};

use super::{BusEvent, Cursor, EventStream, MessageBus, RunLease};
use crate::error::Result;
use crate::record::new_id;
use crate::storage::BoxFuture;

/// Live events buffered per subscriber before it has to catch up from the
/// log.
const FANOUT_CAPACITY: usize = 256;

/// The in-process [`MessageBus`]: locks, logs and inboxes in memory.
///
/// Run numbers start from the clock at creation, so a cursor handed out by
/// an earlier process always counts as an earlier run.
#[derive(Debug, Clone)]
pub struct InMemoryBus {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    sessions: Mutex<HashMap<String, SessionSlot>>,
    first_run: u64,
    wake_tx: mpsc::UnboundedSender<String>,
    wake_rx: AsyncMutex<mpsc::UnboundedReceiver<String>>,
}

#[derive(Debug)]
struct SessionSlot {
    lock: Option<(String, Instant)>,
    run: u64,
    log: Vec<BusEvent>,
    fanout: broadcast::Sender<BusEvent>,
    inbox: VecDeque<Value>,
}

impl SessionSlot {
    fn new(run: u64) -> Self {
        Self {
            lock: None,
            run,
            log: Vec::new(),
            fanout: broadcast::channel(FANOUT_CAPACITY).0,
            inbox: VecDeque::new(),
        }
    }

    fn held(&self) -> bool {
        self.lock
            .as_ref()
            .is_some_and(|(_, until)| *until > Instant::now())
    }

    fn after(&self, after: Option<Cursor>) -> Vec<BusEvent> {
        match after {
            Some(c) if c.run == self.run => {
                self.log.iter().filter(|e| e.cursor > c).cloned().collect()
            }
            Some(c) if c.run > self.run => Vec::new(),
            _ => self.log.clone(),
        }
    }
}

impl Default for InMemoryBus {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryBus {
    /// An empty bus.
    #[must_use]
    pub fn new() -> Self {
        let first_run = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX / 2));
        let (wake_tx, wake_rx) = mpsc::unbounded_channel();
        Self {
            inner: Arc::new(Inner {
                sessions: Mutex::new(HashMap::new()),
                first_run,
                wake_tx,
                wake_rx: AsyncMutex::new(wake_rx),
            }),
        }
    }

    fn slots(&self) -> MutexGuard<'_, HashMap<String, SessionSlot>> {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn with_slot<T>(&self, session_id: &str, f: impl FnOnce(&mut SessionSlot) -> T) -> T {
        let mut slots = self.slots();
        let first_run = self.inner.first_run;
        let slot = slots
            .entry(session_id.to_owned())
            .or_insert_with(|| SessionSlot::new(first_run));
        f(slot)
    }

    fn subscribe_now(&self, session_id: &str, after: Option<Cursor>) -> EventStream {
        let (replay, rx) = self.with_slot(session_id, |slot| {
            (slot.after(after), slot.fanout.subscribe())
        });
        let last = replay.last().map(|e| e.cursor).or(after);
        let state = Follow {
            bus: self.clone(),
            session_id: session_id.to_owned(),
            pending: replay.into(),
            rx,
            last,
        };
        futures_util::stream::unfold(state, Follow::next).boxed()
    }
}

/// A subscriber's position: replayed events still to send, the live
/// receiver, and the last cursor sent (to drop duplicates and to catch up
/// after falling behind).
struct Follow {
    bus: InMemoryBus,
    session_id: String,
    pending: VecDeque<BusEvent>,
    rx: broadcast::Receiver<BusEvent>,
    last: Option<Cursor>,
}

impl Follow {
    async fn next(mut self) -> Option<(BusEvent, Self)> {
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
                    let last = self.last;
                    self.pending = self
                        .bus
                        .with_slot(&self.session_id, |slot| slot.after(last))
                        .into();
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

impl MessageBus for InMemoryBus {
    fn try_lock<'a>(
        &'a self,
        session_id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<RunLease>>> {
        let lease = self.with_slot(session_id, |slot| {
            if slot.held() {
                return None;
            }
            let token = new_id();
            slot.lock = Some((token.clone(), Instant::now() + ttl));
            Some(RunLease {
                session_id: session_id.to_owned(),
                token,
            })
        });
        Box::pin(async move { Ok(lease) })
    }

    fn renew<'a>(&'a self, lease: &'a RunLease, ttl: Duration) -> BoxFuture<'a, Result<bool>> {
        let ok = self.with_slot(&lease.session_id, |slot| match &mut slot.lock {
            Some((token, until)) if *token == lease.token => {
                *until = Instant::now() + ttl;
                true
            }
            _ => false,
        });
        Box::pin(async move { Ok(ok) })
    }

    fn unlock<'a>(&'a self, lease: &'a RunLease) -> BoxFuture<'a, Result<bool>> {
        let ok = self.with_slot(&lease.session_id, |slot| match &slot.lock {
            Some((token, _)) if *token == lease.token => {
                slot.lock = None;
                true
            }
            _ => false,
        });
        Box::pin(async move { Ok(ok) })
    }

    fn is_locked<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<bool>> {
        let held = self.with_slot(session_id, |slot| slot.held());
        Box::pin(async move { Ok(held) })
    }

    fn begin_run<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>> {
        self.with_slot(session_id, |slot| {
            slot.run += 1;
            slot.log.clear();
        });
        Box::pin(async { Ok(()) })
    }

    fn publish<'a>(
        &'a self,
        session_id: &'a str,
        payload: Arc<str>,
    ) -> BoxFuture<'a, Result<Cursor>> {
        let cursor = self.with_slot(session_id, |slot| {
            let cursor = Cursor {
                run: slot.run,
                seq: slot.log.len() as u64 + 1,
            };
            let event = BusEvent { cursor, payload };
            slot.log.push(event.clone());
            // No subscriber is not an error: the log keeps the event.
            let _ = slot.fanout.send(event);
            cursor
        });
        Box::pin(async move { Ok(cursor) })
    }

    fn last_cursor<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Cursor>>> {
        let last = self.with_slot(session_id, |slot| slot.log.last().map(|e| e.cursor));
        Box::pin(async move { Ok(last) })
    }

    fn subscribe<'a>(
        &'a self,
        session_id: &'a str,
        after: Option<Cursor>,
    ) -> BoxFuture<'a, Result<EventStream>> {
        let stream = self.subscribe_now(session_id, after);
        Box::pin(async move { Ok(stream) })
    }

    fn push_inbox<'a>(&'a self, session_id: &'a str, item: Value) -> BoxFuture<'a, Result<()>> {
        self.with_slot(session_id, |slot| slot.inbox.push_back(item));
        // The receiver lives as long as the bus.
        let _ = self.inner.wake_tx.send(session_id.to_owned());
        Box::pin(async { Ok(()) })
    }

    fn pop_inbox<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Value>>> {
        let item = self.with_slot(session_id, |slot| slot.inbox.pop_front());
        Box::pin(async move { Ok(item) })
    }

    fn next_wakeup(&self) -> BoxFuture<'_, Result<String>> {
        Box::pin(async move {
            let mut rx = self.inner.wake_rx.lock().await;
            Ok(rx.recv().await.unwrap_or_default())
        })
    }
}
