//! The message bus: per-session run locks, replay logs with cursors, live
//! fan-out, and an inbox with a wakeup queue.

mod cursor;
mod memory;

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::BoxStream;
use serde_json::Value;

pub use cursor::{Cursor, InvalidCursor};
pub use memory::InMemoryBus;

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

/// Live events of one session: the replay after a cursor, then every later
/// event, across runs, until the bus drops the session.
pub type EventStream = BoxStream<'static, BusEvent>;

/// Coordinates runs and carries their events to subscribers.
///
/// The in-process [`InMemoryBus`] serves one process; a networked bus
/// (Redis) implements the same contract so any replica can run any session
/// and every subscriber sees every event.
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
    /// Releases a lease; `false` when it was no longer held by its token.
    ///
    /// # Errors
    /// The backend's failure.
    fn unlock<'a>(&'a self, lease: &'a RunLease) -> BoxFuture<'a, Result<bool>>;
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
    /// subscriber; returns its cursor.
    ///
    /// # Errors
    /// The backend's failure.
    fn publish<'a>(
        &'a self,
        session_id: &'a str,
        payload: Arc<str>,
    ) -> BoxFuture<'a, Result<Cursor>>;
    /// The cursor of the last event in the current run's log.
    ///
    /// # Errors
    /// The backend's failure.
    fn last_cursor<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Cursor>>>;
    /// Subscribes: the current run's events after `after` (all of them when
    /// `None` or when `after` belongs to an earlier run), then live events,
    /// with no gap and no duplicate.
    ///
    /// # Errors
    /// The backend's failure.
    fn subscribe<'a>(
        &'a self,
        session_id: &'a str,
        after: Option<Cursor>,
    ) -> BoxFuture<'a, Result<EventStream>>;

    /// Queues an input for the session and posts a wakeup for it.
    ///
    /// # Errors
    /// The backend's failure.
    fn push_inbox<'a>(&'a self, session_id: &'a str, item: Value) -> BoxFuture<'a, Result<()>>;
    /// Takes the oldest queued input of the session.
    ///
    /// # Errors
    /// The backend's failure.
    fn pop_inbox<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Value>>>;
    /// Waits for the next session with queued input.
    ///
    /// # Cancel safety
    /// Cancel safe: a wakeup is only taken when the future completes.
    ///
    /// # Errors
    /// The backend's failure.
    fn next_wakeup(&self) -> BoxFuture<'_, Result<String>>;
}
