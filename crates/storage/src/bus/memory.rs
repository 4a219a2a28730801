//! [`InMemoryBus`]: the bus of a single process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::Notify;

use super::follow::Follow;
use super::slot::SessionSlot;
use super::table::{Books, Retained, Retention, Table};
use super::{BusEvent, Cursor, EventStream, MessageBus, Release, RunLease};
use crate::error::Result;
use crate::record::new_id;
use crate::storage::BoxFuture;

/// The in-process [`MessageBus`]: locks, logs and inboxes in memory.
///
/// A session's slot exists while something needs it: a lock, queued input,
/// a subscriber, or a replay log within the bus's [`Retention`].
/// Read-only calls (`is_locked`, `last_cursor`, `pop_inbox` of an empty
/// inbox) never create one. [`retained`](Self::retained) counts what is
/// kept.
///
/// Run numbers come from a clock (microseconds) that never goes back, so a
/// cursor handed out earlier, by this process or an earlier one, always
/// counts as an earlier run, even after the session's slot was dropped.
#[derive(Debug, Clone)]
pub struct InMemoryBus {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    table: Mutex<Table>,
    wakeup: Notify,
    retention: Retention,
    /// Open-run records by session (see [`MessageBus::open_run`]).
    runs: Mutex<HashMap<String, Value>>,
}

impl Default for InMemoryBus {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryBus {
    /// An empty bus with the default [`Retention`].
    #[must_use]
    pub fn new() -> Self {
        Self::with_retention(Retention::default())
    }

    /// An empty bus that keeps idle replay logs as `retention` says.
    #[must_use]
    pub fn with_retention(retention: Retention) -> Self {
        Self {
            inner: Arc::new(Inner {
                table: Mutex::new(Table::new()),
                wakeup: Notify::new(),
                retention,
                runs: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// What the bus holds now, after dropping expired idle logs.
    #[must_use]
    pub fn retained(&self) -> Retained {
        let mut table = self.table();
        table.sweep(Instant::now(), self.inner.retention);
        table.retained()
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.inner
            .table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn runs(&self) -> MutexGuard<'_, HashMap<String, Value>> {
        self.inner
            .runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the session's slot (created when missing), then
    /// re-files the slot.
    fn change<T>(&self, session_id: &str, f: impl FnOnce(&mut SessionSlot, &mut Books) -> T) -> T {
        let mut table = self.table();
        let (slot, books) = table.slot(session_id);
        let out = f(slot, books);
        table.settle(session_id, self.inner.retention);
        out
    }

    /// Runs `f` on the slot `lease` holds, then re-files it; `None` when
    /// the lease no longer holds it.
    fn change_owned<T>(
        &self,
        lease: &RunLease,
        f: impl FnOnce(&mut SessionSlot) -> T,
    ) -> Option<T> {
        let mut table = self.table();
        let slot = table.slots.get_mut(&lease.session_id)?;
        match &slot.lock {
            Some((token, _)) if *token == lease.token => {}
            _ => return None,
        }
        let out = f(slot);
        table.settle(&lease.session_id, self.inner.retention);
        Some(out)
    }

    /// Runs `f` on the session's slot, if there is one.
    fn read<T>(&self, session_id: &str, f: impl FnOnce(&SessionSlot) -> T) -> Option<T> {
        self.table().slots.get(session_id).map(f)
    }

    fn subscribe_now(&self, session_id: &str, after: Option<Cursor>) -> EventStream {
        let (replay, rx, generation) = self.change(session_id, |slot, _| {
            (slot.after(after), slot.subscribe(), slot.generation)
        });
        let last = replay.last().map(|e| e.cursor).or(after);
        let follow = Follow {
            bus: self.clone(),
            session_id: session_id.to_owned(),
            generation,
            pending: replay.into(),
            rx,
            last,
        };
        futures_util::stream::unfold(follow, Follow::next).boxed()
    }

    /// The retained events after `last`, for a subscriber of slot
    /// `generation` that fell behind; `None` when that slot is gone.
    pub(super) fn catch_up(
        &self,
        session_id: &str,
        generation: u64,
        last: Option<Cursor>,
    ) -> Option<Vec<BusEvent>> {
        self.read(session_id, |slot| {
            (slot.generation == generation).then(|| slot.after(last))
        })
        .flatten()
    }

    /// A subscriber of slot `generation` left.
    pub(super) fn unsubscribe(&self, session_id: &str, generation: u64) {
        let mut table = self.table();
        match table.slots.get_mut(session_id) {
            Some(slot) if slot.generation == generation => slot.unsubscribe(),
            _ => return,
        }
        table.settle(session_id, self.inner.retention);
    }
}

impl MessageBus for InMemoryBus {
    fn depth(&self) -> Option<Retained> {
        Some(self.retained())
    }

    fn try_lock<'a>(
        &'a self,
        session_id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<RunLease>>> {
        let lease = self.change(session_id, |slot, _| {
            let now = Instant::now();
            if slot.held(now) {
                return None;
            }
            let token = new_id();
            slot.lock = Some((token.clone(), now + ttl));
            Some(RunLease {
                session_id: session_id.to_owned(),
                token,
            })
        });
        Box::pin(async move { Ok(lease) })
    }

    fn renew<'a>(&'a self, lease: &'a RunLease, ttl: Duration) -> BoxFuture<'a, Result<bool>> {
        let ok = self.change_owned(lease, |slot| {
            if let Some((_, until)) = &mut slot.lock {
                *until = Instant::now() + ttl;
            }
        });
        Box::pin(async move { Ok(ok.is_some()) })
    }

    fn unlock<'a>(&'a self, lease: &'a RunLease) -> BoxFuture<'a, Result<bool>> {
        let ok = self.change_owned(lease, |slot| slot.lock = None);
        Box::pin(async move { Ok(ok.is_some()) })
    }

    fn release<'a>(&'a self, lease: &'a RunLease) -> BoxFuture<'a, Result<Release>> {
        let released = self.change_owned(lease, |slot| {
            if slot.inbox.is_empty() {
                slot.lock = None;
                Release::Released
            } else {
                Release::InboxPending
            }
        });
        Box::pin(async move { Ok(released.unwrap_or(Release::NotHeld)) })
    }

    fn is_locked<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<bool>> {
        let held = self.read(session_id, |slot| slot.held(Instant::now()));
        Box::pin(async move { Ok(held.unwrap_or(false)) })
    }

    fn begin_run<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>> {
        self.change(session_id, |slot, books| slot.begin(books.next_run()));
        Box::pin(async { Ok(()) })
    }

    fn publish<'a>(
        &'a self,
        session_id: &'a str,
        payload: Arc<str>,
        replay_limit: usize,
    ) -> BoxFuture<'a, Result<Cursor>> {
        let max_bytes = self.inner.retention.log_bytes;
        let cursor = self.change(session_id, |slot, _| {
            slot.publish(payload, replay_limit, max_bytes)
        });
        Box::pin(async move { Ok(cursor) })
    }

    fn checkpoint<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>> {
        self.change(session_id, |slot, _| slot.checkpoint());
        Box::pin(async { Ok(()) })
    }

    fn last_cursor<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Cursor>>> {
        let last = self.read(session_id, |slot| slot.log.back().map(|e| e.cursor));
        Box::pin(async move { Ok(last.flatten()) })
    }

    fn subscribe<'a>(
        &'a self,
        session_id: &'a str,
        after: Option<Cursor>,
    ) -> BoxFuture<'a, Result<EventStream>> {
        let stream = self.subscribe_now(session_id, after);
        Box::pin(async move { Ok(stream) })
    }

    fn push_inbox<'a>(
        &'a self,
        session_id: &'a str,
        item: Value,
        limit: usize,
    ) -> BoxFuture<'a, Result<bool>> {
        let queued = self.change(session_id, |slot, books| {
            if slot.inbox.len() >= limit {
                return false;
            }
            slot.inbox.push_back(item);
            books.post_wakeup(session_id, slot);
            true
        });
        if queued {
            self.inner.wakeup.notify_waiters();
        }
        Box::pin(async move { Ok(queued) })
    }

    fn pop_inbox<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Value>>> {
        let mut table = self.table();
        let Table { slots, books } = &mut *table;
        let item = slots.get_mut(session_id).and_then(|slot| {
            let item = slot.inbox.pop_front();
            if slot.inbox.is_empty() {
                books.withdraw_wakeup(slot);
            }
            item
        });
        if item.is_some() {
            table.settle(session_id, self.inner.retention);
        }
        drop(table);
        Box::pin(async move { Ok(item) })
    }

    fn next_wakeup(&self) -> BoxFuture<'_, Result<String>> {
        Box::pin(async move {
            loop {
                let notified = self.inner.wakeup.notified();
                tokio::pin!(notified);
                // Registered before looking, so a push in between is seen.
                notified.as_mut().enable();
                let taken = self.table().take_wakeup();
                if let Some(session_id) = taken {
                    return Ok(session_id);
                }
                notified.await;
            }
        })
    }

    fn open_run<'a>(&'a self, session_id: &'a str, info: Value) -> BoxFuture<'a, Result<()>> {
        self.runs().insert(session_id.to_owned(), info);
        Box::pin(async { Ok(()) })
    }

    fn close_run<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<bool>> {
        let closed = self.runs().remove(session_id).is_some();
        Box::pin(async move { Ok(closed) })
    }

    fn open_runs(&self) -> BoxFuture<'_, Result<Vec<(String, Value)>>> {
        let runs: Vec<_> = self
            .runs()
            .iter()
            .map(|(id, info)| (id.clone(), info.clone()))
            .collect();
        Box::pin(async move { Ok(runs) })
    }

    fn open_run_info<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Value>>> {
        let info = self.runs().get(session_id).cloned();
        Box::pin(async move { Ok(info) })
    }

    fn forget_session<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>> {
        self.runs().remove(session_id);
        self.table().remove(session_id);
        Box::pin(async { Ok(()) })
    }
}
