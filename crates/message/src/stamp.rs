//! Ids and timestamps as AgentScope writes them.
//!
//! Ids are `uuid4().hex` (32 lowercase hex digits, no dashes); timestamps are
//! naive local time in ISO 8601 with microseconds, the fraction omitted when
//! it is zero (Python's `datetime.isoformat()`).
//!
//! Everything that needs a fresh id or "now" takes a [`Stamper`], so tests
//! and replays can make both deterministic.

use chrono::{Datelike, Local, NaiveDateTime, Timelike};

/// A source of fresh ids and of the current time.
pub trait Stamper {
    /// A new unique id.
    fn new_id(&self) -> String;
    /// The current time, formatted like [`format_timestamp`].
    fn now(&self) -> String;
}

/// The real clock and random v4 UUIDs.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemStamper;

impl Stamper for SystemStamper {
    fn new_id(&self) -> String {
        new_id()
    }

    fn now(&self) -> String {
        now()
    }
}

/// A stamper that always returns the same id and time, for replays and
/// golden tests (`"<new-id>"` / `"<now>"` in the reference vectors).
#[derive(Debug, Clone, Default)]
pub struct FixedStamper {
    /// The id every call returns.
    pub id: String,
    /// The timestamp every call returns.
    pub now: String,
}

impl FixedStamper {
    /// A stamper that returns `id` and `now` for every call.
    pub fn new(id: impl Into<String>, now: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            now: now.into(),
        }
    }
}

impl Stamper for FixedStamper {
    fn new_id(&self) -> String {
        self.id.clone()
    }

    fn now(&self) -> String {
        self.now.clone()
    }
}

/// A fresh id: 32 lowercase hex digits (a random version-4 UUID).
///
/// Random bytes are drawn from the operating system in batches, so an id
/// costs no system call on the hot path (every streamed event has one).
#[must_use]
pub fn new_id() -> String {
    let bytes = RANDOM.with(|pool| pool.borrow_mut().take16());
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .simple()
        .to_string()
}

struct RandomPool {
    buf: [u8; 4096],
    used: usize,
}

impl RandomPool {
    fn take16(&mut self) -> [u8; 16] {
        if self.used + 16 > self.buf.len() {
            if getrandom::fill(&mut self.buf).is_err() {
                // No OS randomness (never seen on supported systems): fall
                // back to the uuid crate's own source.
                return *uuid::Uuid::new_v4().as_bytes();
            }
            self.used = 0;
        }
        let mut out = [0u8; 16];
        out.copy_from_slice(&self.buf[self.used..self.used + 16]);
        // Never hand out the same bytes twice.
        self.buf[self.used..self.used + 16].fill(0);
        self.used += 16;
        out
    }
}

thread_local! {
    static RANDOM: std::cell::RefCell<RandomPool> =
        const { std::cell::RefCell::new(RandomPool { buf: [0; 4096], used: 4096 }) };
}

/// The current local time, formatted like [`format_timestamp`].
#[must_use]
pub fn now() -> String {
    format_timestamp(&Local::now().naive_local())
}

/// Formats a naive timestamp as Python's `isoformat()` does:
/// `2026-11-30T00:17:12.973041`, or `2026-11-30T00:17:12` at a whole second.
#[must_use]
pub fn format_timestamp(t: &NaiveDateTime) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(26);
    let micros = t.nanosecond() / 1_000 % 1_000_000;
    // Written field by field: much cheaper than parsing a format string on
    // every event.
    let _ = write!(
        out,
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    if micros != 0 {
        let _ = write!(out, ".{micros:06}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    #[test]
    fn ids_are_32_lowercase_hex_digits() {
        let id = new_id();
        assert_eq!(id.len(), 32);
        assert!(
            id.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(id, new_id());
        assert_eq!(&id[12..13], "4", "a version-4 UUID: {id}");
        let many: std::collections::HashSet<String> = (0..10_000).map(|_| new_id()).collect();
        assert_eq!(many.len(), 10_000);
    }

    #[test]
    fn timestamps_omit_a_zero_fraction_like_python() {
        let day = NaiveDate::from_ymd_opt(2026, 11, 30).unwrap();
        let whole = day.and_hms_opt(0, 17, 12).unwrap();
        assert_eq!(format_timestamp(&whole), "2026-11-30T00:17:12");
        let frac = day.and_hms_micro_opt(0, 17, 12, 973_041).unwrap();
        assert_eq!(format_timestamp(&frac), "2026-11-30T00:17:12.973041");
        let small = day.and_hms_micro_opt(0, 17, 12, 41).unwrap();
        assert_eq!(format_timestamp(&small), "2026-11-30T00:17:12.000041");
    }
}
