//! The in-process bus's table of session slots, with the idle index that
//! bounds retained replay logs and the queue of wakeups.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use super::slot::SessionSlot;

/// How long the in-process bus keeps the replay log of a session nothing
/// needs any more (no run, no queued input, no subscriber): until the log
/// has been idle for `idle_ttl`, or until `idle_logs` more recently idle
/// logs are kept, whichever comes first. The oldest go first; expiry is
/// checked on every bus operation.
///
/// Such a log only serves a client that reconnects with a cursor of the
/// run that just ended; once it is dropped, that client gets the next
/// run's events (the ended run's messages are in the store).
///
/// Every log, idle or not, also has a byte budget: beside the count bound
/// of [`MessageBus::publish`](super::MessageBus::publish), its oldest
/// events leave it while the payloads it keeps add up to more than
/// `log_bytes`. The newest event always stays, so a log holds at most
/// `log_bytes` plus one event. A cursor whose next events left the log
/// this way is treated as one they left by count: its subscriber gets the
/// whole retained log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Idle logs kept at most.
    pub idle_logs: usize,
    /// How long an idle log is kept at most.
    pub idle_ttl: Duration,
    /// The payload bytes one replay log keeps at most (beyond its newest
    /// event).
    pub log_bytes: usize,
}

/// The default [`Retention::log_bytes`]: 8 MiB.
pub const DEFAULT_REPLAY_LOG_BYTES: usize = 8 << 20;

impl Default for Retention {
    /// 128 idle logs, for at most a minute; 8 MiB per log.
    fn default() -> Self {
        Self {
            idle_logs: 128,
            idle_ttl: Duration::from_secs(60),
            log_bytes: DEFAULT_REPLAY_LOG_BYTES,
        }
    }
}

/// What an in-process bus holds right now, for tests and metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retained {
    /// Sessions with any state (a lock, a log, input or subscribers).
    pub sessions: usize,
    /// Events in replay logs.
    pub events: usize,
    /// Payload bytes of the events in replay logs.
    pub bytes: usize,
    /// Queued inputs.
    pub inputs: usize,
    /// Pending wakeups.
    pub wakeups: usize,
    /// Attached subscribers.
    pub subscribers: usize,
}

/// Every session slot, and the books kept across them.
#[derive(Debug)]
pub(super) struct Table {
    pub(super) slots: HashMap<String, SessionSlot>,
    pub(super) books: Books,
}

/// The idle index, the wakeup queue and the counters.
#[derive(Debug)]
pub(super) struct Books {
    /// Idle slots with a log, least recently used first: when each went
    /// idle.
    idle: BTreeMap<u64, (String, Instant)>,
    /// Sessions with unannounced queued input, oldest first.
    wakeups: BTreeMap<u64, String>,
    /// Orders slots, idle entries and wakeups.
    tick: u64,
    /// The latest run number handed out.
    last_run: u64,
}

/// Microseconds since the epoch.
fn clock_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX / 2))
}

impl Books {
    pub(super) fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// A run number above every one handed out before, by this bus or (the
    /// clock being ahead) by an earlier process.
    pub(super) fn next_run(&mut self) -> u64 {
        self.last_run = (self.last_run + 1).max(clock_micros());
        self.last_run
    }

    /// Posts a wakeup for the session unless one is pending.
    pub(super) fn post_wakeup(&mut self, session_id: &str, slot: &mut SessionSlot) {
        if slot.wakeup.is_none() {
            let key = self.next_tick();
            slot.wakeup = Some(key);
            self.wakeups.insert(key, session_id.to_owned());
        }
    }

    /// Withdraws the session's pending wakeup, if any.
    pub(super) fn withdraw_wakeup(&mut self, slot: &mut SessionSlot) {
        if let Some(key) = slot.wakeup.take() {
            self.wakeups.remove(&key);
        }
    }
}

impl Table {
    pub(super) fn new() -> Self {
        Self {
            slots: HashMap::new(),
            books: Books {
                idle: BTreeMap::new(),
                wakeups: BTreeMap::new(),
                tick: 0,
                last_run: clock_micros(),
            },
        }
    }

    /// The session's slot, created when missing, and the books.
    pub(super) fn slot(&mut self, session_id: &str) -> (&mut SessionSlot, &mut Books) {
        let Self { slots, books } = self;
        let slot = slots.entry(session_id.to_owned()).or_insert_with(|| {
            let generation = books.next_tick();
            SessionSlot::new(generation, books.last_run)
        });
        (slot, books)
    }

    /// Re-files the session's slot after a change: out of the idle index
    /// while something needs it, at the back of the index when idle with a
    /// log, gone when idle without one. Then drops the idle logs beyond
    /// `retention`.
    pub(super) fn settle(&mut self, session_id: &str, retention: Retention) {
        let now = Instant::now();
        let Self { slots, books } = self;
        if let Some(slot) = slots.get_mut(session_id) {
            if let Some(key) = slot.idle.take() {
                books.idle.remove(&key);
            }
            if slot.is_idle(now) {
                if slot.log.is_empty() {
                    self.remove(session_id);
                } else {
                    let key = books.next_tick();
                    slot.idle = Some(key);
                    books.idle.insert(key, (session_id.to_owned(), now));
                }
            }
        }
        self.sweep(now, retention);
    }

    /// Drops idle logs older than the retention's TTL, then the least
    /// recently idle beyond its count.
    pub(super) fn sweep(&mut self, now: Instant, retention: Retention) {
        while let Some((_, (session_id, since))) = self.books.idle.first_key_value() {
            let expired = now.saturating_duration_since(*since) >= retention.idle_ttl;
            if !expired && self.books.idle.len() <= retention.idle_logs {
                break;
            }
            let session_id = session_id.clone();
            self.remove(&session_id);
        }
    }

    /// Drops the session's slot and its entries in the books.
    pub(super) fn remove(&mut self, session_id: &str) {
        if let Some(mut slot) = self.slots.remove(session_id) {
            if let Some(key) = slot.idle {
                self.books.idle.remove(&key);
            }
            self.books.withdraw_wakeup(&mut slot);
        }
    }

    /// Takes the oldest pending wakeup.
    pub(super) fn take_wakeup(&mut self) -> Option<String> {
        let (_, session_id) = self.books.wakeups.pop_first()?;
        if let Some(slot) = self.slots.get_mut(&session_id) {
            slot.wakeup = None;
        }
        Some(session_id)
    }

    /// What the table holds.
    pub(super) fn retained(&self) -> Retained {
        let mut retained = Retained {
            sessions: self.slots.len(),
            wakeups: self.books.wakeups.len(),
            ..Retained::default()
        };
        for slot in self.slots.values() {
            retained.events += slot.log.len();
            retained.bytes += slot.log_bytes;
            retained.inputs += slot.inbox.len();
            retained.subscribers += slot.subscribers;
        }
        retained
    }
}
