//! Ids and timestamps as AgentScope writes them.
//!
//! Ids are `uuid4().hex` (32 lowercase hex digits, no dashes); timestamps are
//! naive local time in ISO 8601 with microseconds, the fraction omitted when
//! it is zero (Python's `datetime.isoformat()`).
//!
//! Everything that needs a fresh id or "now" takes a [`Stamper`], so tests
//! and replays can make both deterministic.

use chrono::{Local, NaiveDateTime, Timelike};

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

/// A fresh id: 32 lowercase hex digits.
#[must_use]
pub fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
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
    let micros = t.nanosecond() / 1_000 % 1_000_000;
    if micros == 0 {
        t.format("%Y-%m-%dT%H:%M:%S").to_string()
    } else {
        format!("{}.{micros:06}", t.format("%Y-%m-%dT%H:%M:%S"))
    }
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
