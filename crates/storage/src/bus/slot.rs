//! What the in-process bus keeps for one session.

use std::collections::VecDeque;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::broadcast;

use super::{BusEvent, Cursor};

/// Live events buffered per subscriber before it has to catch up from the
/// log.
const FANOUT_CAPACITY: usize = 256;

/// One session's lock, current run log, subscribers and inbox.
#[derive(Debug)]
pub(super) struct SessionSlot {
    /// Tells this slot from a later one of the same session (after the
    /// session was forgotten or its idle log dropped).
    pub(super) generation: u64,
    pub(super) lock: Option<(String, Instant)>,
    pub(super) run: u64,
    /// The `seq` of the last event published in `run`.
    pub(super) seq: u64,
    /// The `seq` of the last event of `run` whose content is persisted
    /// (see [`MessageBus::checkpoint`](super::MessageBus::checkpoint)); 0
    /// when none is.
    pub(super) checkpoint: u64,
    /// The last events of `run`, oldest first, with consecutive `seq`s.
    pub(super) log: VecDeque<BusEvent>,
    /// The payload bytes of `log`.
    pub(super) log_bytes: usize,
    /// Live fan-out; only while someone subscribes.
    pub(super) fanout: Option<broadcast::Sender<BusEvent>>,
    pub(super) subscribers: usize,
    pub(super) inbox: VecDeque<Value>,
    /// Its key in the bus's idle index while the slot is idle.
    pub(super) idle: Option<u64>,
    /// Its key in the bus's wakeup queue while a wakeup is pending.
    pub(super) wakeup: Option<u64>,
}

impl SessionSlot {
    pub(super) fn new(generation: u64, run: u64) -> Self {
        Self {
            generation,
            lock: None,
            run,
            seq: 0,
            checkpoint: 0,
            log: VecDeque::new(),
            log_bytes: 0,
            fanout: None,
            subscribers: 0,
            inbox: VecDeque::new(),
            idle: None,
            wakeup: None,
        }
    }

    pub(super) fn held(&self, now: Instant) -> bool {
        self.lock.as_ref().is_some_and(|(_, until)| *until > now)
    }

    /// Nothing needs the slot but a late subscriber: no lock, no queued
    /// input, no subscriber.
    pub(super) fn is_idle(&self, now: Instant) -> bool {
        !self.held(now) && self.inbox.is_empty() && self.subscribers == 0
    }

    /// Starts run `run` with an empty log.
    pub(super) fn begin(&mut self, run: u64) {
        self.run = run;
        self.seq = 0;
        self.checkpoint = 0;
        self.log.clear();
        self.log_bytes = 0;
    }

    /// Marks every event published so far as persisted.
    pub(super) fn checkpoint(&mut self) {
        self.checkpoint = self.seq;
    }

    /// Logs and fans out `payload`, keeping the last `limit` events, and
    /// of those no more than fit in `max_bytes` (the newest always stays).
    pub(super) fn publish(
        &mut self,
        payload: std::sync::Arc<str>,
        limit: usize,
        max_bytes: usize,
    ) -> Cursor {
        self.seq += 1;
        let cursor = Cursor {
            run: self.run,
            seq: self.seq,
        };
        let event = BusEvent { cursor, payload };
        if let Some(fanout) = &self.fanout {
            // No receiver left is not an error: the log keeps the event.
            let _ = fanout.send(event.clone());
        }
        if limit > 0 {
            self.log_bytes = self.log_bytes.saturating_add(event.payload.len());
            self.log.push_back(event);
            while self.log.len() > 1 && (self.log.len() > limit || self.log_bytes > max_bytes) {
                if let Some(old) = self.log.pop_front() {
                    self.log_bytes = self.log_bytes.saturating_sub(old.payload.len());
                }
            }
        } else {
            self.log.clear();
            self.log_bytes = 0;
        }
        cursor
    }

    /// A new subscriber's receiver.
    pub(super) fn subscribe(&mut self) -> broadcast::Receiver<BusEvent> {
        self.subscribers += 1;
        self.fanout
            .get_or_insert_with(|| broadcast::channel(FANOUT_CAPACITY).0)
            .subscribe()
    }

    /// A subscriber left; the fan-out goes with the last one.
    pub(super) fn unsubscribe(&mut self) {
        self.subscribers = self.subscribers.saturating_sub(1);
        if self.subscribers == 0 {
            self.fanout = None;
        }
    }

    /// The retained events after `after`: those after the checkpoint when
    /// `after` is `None` (what precedes it is in the stored messages); all
    /// of them when `after` is of an earlier run or older than the log's
    /// first event (the events in between are gone); none when `after` is
    /// of a later run.
    pub(super) fn after(&self, after: Option<Cursor>) -> Vec<BusEvent> {
        match after {
            None => self
                .log
                .iter()
                .filter(|e| e.cursor.seq > self.checkpoint)
                .cloned()
                .collect(),
            Some(c) if c.run == self.run => {
                let first = self.log.front().map_or(0, |e| e.cursor.seq);
                let skip = (c.seq + 1).saturating_sub(first);
                let skip = usize::try_from(skip).unwrap_or(usize::MAX);
                self.log.iter().skip(skip).cloned().collect()
            }
            Some(c) if c.run > self.run => Vec::new(),
            _ => self.log.iter().cloned().collect(),
        }
    }
}
