//! The message bus: per-session run locks, bounded replay logs with
//! cursors, live fan-out, and a bounded inbox with a wakeup queue.

mod cursor;
mod follow;
mod memory;
mod redis;
mod slot;
mod table;

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::BoxStream;
use serde_json::Value;

pub use cursor::{Cursor, InvalidCursor};
pub use memory::InMemoryBus;
pub use redis::{RedisBus, RedisBusOptions};
pub use table::{DEFAULT_REPLAY_LOG_BYTES, Retained, Retention};

use crate::error::Result;
use crate::storage::BoxFuture;

/// One published event: its position in the session's log and its payload
/// (the exact bytes subscribers send on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusEvent {
    /// Where it sits in the session's log; pass it back as `after` to
    /// resume behind it.
    pub cursor: Cursor,
    /// The serialised event.
    pub payload: Arc<str>,
}

/// The right to run a session, held until released or expired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLease {
    /// The session.
    pub session_id: String,
    /// Proves ownership: only the holder's token renews or releases.
    pub token: String,
}

/// What [`MessageBus::release`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// The lock is free.
    Released,
    /// The inbox holds input: the lock is still held, so the holder serves
    /// the input, then releases again.
    InboxPending,
    /// The lease no longer holds the lock (it expired and was taken, or the
    /// session was forgotten); nothing changed.
    NotHeld,
}

/// Live events of one session: the replay after a cursor, then every later
/// event, across runs, until the bus drops the session.
///
/// Within a run, cursors are consecutive (`seq` grows by one per event), so
/// a consumer that sees `seq` jump knows events were skipped: that happens
/// only when the events after its cursor had already left the bounded
/// replay log (see [`MessageBus::subscribe`]).
pub type EventStream = BoxStream<'static, BusEvent>;

/// Coordinates runs and carries their events to subscribers.
///
/// The in-process [`InMemoryBus`] serves one process; a networked bus
/// (Redis) implements the same contract so any replica can run any session
/// and every subscriber sees every event.
///
/// Everything a bus keeps is bounded: a run's replay log keeps its last
/// `replay_limit` events and no more payload bytes than its
/// [`Retention::log_bytes`] (beyond its newest event), an inbox at most `limit` inputs, a wakeup is kept
/// only while its session has queued input, and
/// [`forget_session`](Self::forget_session) drops all of a session's state.
///
/// # The lock and the inbox
/// An input that arrives while a run holds the lock is queued; the holder
/// serves the inbox before it lets go, and lets go with
/// [`release`](Self::release), which refuses while input is queued. A
/// producer queues with [`push_inbox`](Self::push_inbox) and then calls
/// [`try_lock`](Self::try_lock): if the holder released in between, the
/// producer gets the lock and serves the inbox itself. Either way no input
/// is left behind by a run that ends.
///
/// # Cancel safety
/// Every method is a single atomic step; dropping its future leaves the bus
/// as before or as after the step.
pub trait MessageBus: Send + Sync + std::fmt::Debug {
    /// Takes the session's run lock for `ttl` unless a live lease holds it.
    ///
    /// # Errors
    /// The backend's failure; a held lock is `Ok(None)`.
    fn try_lock<'a>(
        &'a self,
        session_id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<RunLease>>>;
    /// Extends a lease; `false` when it expired and someone else took it.
    ///
    /// # Errors
    /// The backend's failure.
    fn renew<'a>(&'a self, lease: &'a RunLease, ttl: Duration) -> BoxFuture<'a, Result<bool>>;
    /// Releases a lease whatever the inbox holds; `false` when it was no
    /// longer held by its token. A run that ends normally uses
    /// [`release`](Self::release) instead, so queued input is not left
    /// behind.
    ///
    /// # Errors
    /// The backend's failure.
    fn unlock<'a>(&'a self, lease: &'a RunLease) -> BoxFuture<'a, Result<bool>>;
    /// Releases a lease only if the session's inbox is empty, atomically
    /// with that check.
    ///
    /// # Errors
    /// The backend's failure.
    fn release<'a>(&'a self, lease: &'a RunLease) -> BoxFuture<'a, Result<Release>>;
    /// Whether a live lease holds the session (a run is active).
    ///
    /// # Errors
    /// The backend's failure.
    fn is_locked<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<bool>>;

    /// Starts a new run's log for the session: earlier events are no longer
    /// replayed. Call it while holding the lease.
    ///
    /// # Errors
    /// The backend's failure.
    fn begin_run<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>>;
    /// Appends an event to the current run's log and sends it to every
    /// subscriber; returns its cursor. The log keeps the last
    /// `replay_limit` events of the run, and of those only the newest that
    /// fit in the bus's [`Retention::log_bytes`] (the newest event always
    /// stays); older ones leave it (0 keeps none: live subscribers only).
    ///
    /// # Errors
    /// The backend's failure.
    fn publish<'a>(
        &'a self,
        session_id: &'a str,
        payload: Arc<str>,
        replay_limit: usize,
    ) -> BoxFuture<'a, Result<Cursor>>;
    /// Marks the events published so far in the current run as persisted
    /// (the messages they make are stored): a subscriber without a cursor
    /// gets only the events after this point; one with a cursor still gets
    /// what follows it.
    ///
    /// # Errors
    /// The backend's failure.
    fn checkpoint<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>>;
    /// The cursor of the last event in the current run's log; `None` when
    /// the log is empty or was dropped.
    ///
    /// # Errors
    /// The backend's failure.
    fn last_cursor<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Cursor>>>;
    /// Subscribes: the current run's retained events after `after` (those
    /// after the last [`checkpoint`](Self::checkpoint) when `None`, all of
    /// them when `after` belongs to an earlier run), then
    /// live events, with no duplicate and no gap the log could fill.
    ///
    /// When the events right after `after` have already left the bounded
    /// log, the subscriber gets the whole retained log: a consistent suffix
    /// of the run, whose first cursor is more than one past `after`. A
    /// subscriber that falls behind the live fan-out catches up the same
    /// way. The stream ends when the session is forgotten.
    ///
    /// # Errors
    /// The backend's failure.
    fn subscribe<'a>(
        &'a self,
        session_id: &'a str,
        after: Option<Cursor>,
    ) -> BoxFuture<'a, Result<EventStream>>;

    /// Queues an input for the session unless its inbox already holds
    /// `limit` inputs, and posts a wakeup for the session; `false` when the
    /// inbox is full (nothing is queued).
    ///
    /// # Errors
    /// The backend's failure.
    fn push_inbox<'a>(
        &'a self,
        session_id: &'a str,
        item: Value,
        limit: usize,
    ) -> BoxFuture<'a, Result<bool>>;
    /// Takes the oldest queued input of the session; taking the last one
    /// also withdraws the session's pending wakeup.
    ///
    /// # Errors
    /// The backend's failure.
    fn pop_inbox<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Value>>>;
    /// Waits for the next session with queued input. Each session has at
    /// most one pending wakeup, withdrawn when its inbox empties or the
    /// session is forgotten, so wakeups nobody waits for cost nothing
    /// beyond the inputs they announce.
    ///
    /// # Cancel safety
    /// Cancel safe: a wakeup is only taken when the future completes.
    ///
    /// # Errors
    /// The backend's failure.
    fn next_wakeup(&self) -> BoxFuture<'_, Result<String>>;

    /// Records that a run of the session has started a reply, with `info`
    /// (what a replica needs to end the run if its runner dies: ids, a
    /// small JSON document). Replaces an earlier record of the session.
    /// The record stays until [`close_run`](Self::close_run) or
    /// [`forget_session`](Self::forget_session): a runner removes it once
    /// the reply's last event is published, so a record whose session is
    /// not locked belongs to a run whose runner died (see
    /// [`open_runs`](Self::open_runs)).
    ///
    /// # Errors
    /// The backend's failure.
    fn open_run<'a>(&'a self, session_id: &'a str, info: Value) -> BoxFuture<'a, Result<()>>;
    /// Removes the session's open-run record; `false` when there was none.
    ///
    /// # Errors
    /// The backend's failure.
    fn close_run<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<bool>>;
    /// Every open-run record: the session id and its info, in no order.
    /// There is at most one per session, so the list is as long as the
    /// number of replies running (or orphaned) now.
    ///
    /// # Errors
    /// The backend's failure.
    fn open_runs(&self) -> BoxFuture<'_, Result<Vec<(String, Value)>>>;
    /// The session's open-run record, if any: one lookup, where
    /// [`MessageBus::open_runs`] reads them all.
    ///
    /// # Errors
    /// The backend's failure.
    fn open_run_info<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Value>>> {
        Box::pin(async move {
            Ok(self
                .open_runs()
                .await?
                .into_iter()
                .find(|(id, _)| id == session_id)
                .map(|(_, info)| info))
        })
    }

    /// Drops everything the bus keeps for the session: its replay log,
    /// inbox, wakeup, lock and open-run record; its subscribers' streams
    /// end. Call it when the session is deleted.
    ///
    /// # Errors
    /// The backend's failure.
    fn forget_session<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>>;

    /// What the bus holds now (sessions, replayable events, queued inputs,
    /// subscribers), for metrics; `None` when the backend cannot tell
    /// cheaply.
    fn depth(&self) -> Option<Retained> {
        None
    }
}
