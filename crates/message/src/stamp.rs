//! Ids and timestamps as AgentScope writes them.
//!
//! Ids are `uuid4().hex` (32 lowercase hex digits, no dashes); timestamps are
//! naive local time in ISO 8601 with microseconds, the fraction omitted when
//! it is zero (Python's `datetime.isoformat()`).
//!
//! Everything that needs a fresh id or "now" takes a [`Stamper`], so tests
//! and replays can make both deterministic.
//!
//! Messages, blocks and events hold their times as a [`Stamp`]: the instant
//! in 8 bytes when the text is in that canonical form (which is what both
//! AgentScope and Oxiscope write), the text itself otherwise, so any string
//! read is written back unchanged.

use std::fmt;

use chrono::{Datelike, Local, NaiveDateTime, Timelike};

use crate::id::Id;

/// A source of fresh ids and of the current time.
pub trait Stamper {
    /// A new unique id.
    fn new_id(&self) -> Id;
    /// The current time.
    fn now(&self) -> Stamp;
}

/// The real clock and random v4 UUIDs.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemStamper;

impl Stamper for SystemStamper {
    fn new_id(&self) -> Id {
        Id::random()
    }

    fn now(&self) -> Stamp {
        Stamp::now()
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
    fn new_id(&self) -> Id {
        Id::new(&self.id)
    }

    fn now(&self) -> Stamp {
        Stamp::from(self.now.as_str())
    }
}

/// A fresh id: 32 lowercase hex digits (a random version-4 UUID).
///
/// Random bytes are drawn from the operating system in batches, so an id
/// costs no system call on the hot path (every streamed event has one).
#[must_use]
pub fn new_id() -> String {
    Id::random().into()
}

/// Sixteen random bytes from the batched pool.
pub(crate) fn random_bytes() -> [u8; 16] {
    RANDOM.with(|pool| pool.borrow_mut().take16())
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
    if !(0..=9999).contains(&t.year()) {
        // No four-digit year: chrono writes it (microseconds, as above).
        let fields = if (t.nanosecond() / 1_000).is_multiple_of(1_000_000) {
            "%Y-%m-%dT%H:%M:%S"
        } else {
            "%Y-%m-%dT%H:%M:%S%.6f"
        };
        return t.format(fields).to_string();
    }
    let mut buf = [0u8; STAMP_LEN];
    Fields::of(t).write(&mut buf).to_owned()
}

/// The longest canonical timestamp, `YYYY-MM-DDTHH:MM:SS.ffffff`.
const STAMP_LEN: usize = 26;

/// A naive date and time split into its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fields {
    year: u32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    micros: u32,
}

impl Fields {
    fn of(t: &NaiveDateTime) -> Self {
        Self {
            year: u32::try_from(t.year()).unwrap_or(0),
            month: t.month(),
            day: t.day(),
            hour: t.hour(),
            minute: t.minute(),
            second: t.second(),
            micros: t.nanosecond() / 1_000 % 1_000_000,
        }
    }

    /// The fields packed into one number (year 14 bits, month 4, day 5,
    /// hour 5, minute 6, second 6, microseconds 20, high to low), or `None`
    /// for a date or time that does not exist or a year past 9999.
    ///
    /// Packed fields rather than a count of microseconds: writing them back
    /// out needs no calendar arithmetic, and every saved block has two.
    fn pack(self) -> Option<u64> {
        let leap = self.year.is_multiple_of(4)
            && (!self.year.is_multiple_of(100) || self.year.is_multiple_of(400));
        let month_days = match self.month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        let valid = self.year <= 9999
            && (1..=month_days).contains(&self.day)
            && self.hour <= 23
            && self.minute <= 59
            && self.second <= 59
            && self.micros <= 999_999;
        valid.then(|| {
            [
                (self.year, 14),
                (self.month, 4),
                (self.day, 5),
                (self.hour, 5),
                (self.minute, 6),
                (self.second, 6),
                (self.micros, 20),
            ]
            .iter()
            .fold(0u64, |acc, &(value, bits)| (acc << bits) | u64::from(value))
        })
    }

    fn unpack(mut packed: u64) -> Self {
        let mut take = |bits: u32| {
            let value = packed & ((1 << bits) - 1);
            packed >>= bits;
            // At most 20 bits.
            u32::try_from(value).unwrap_or(0)
        };
        let micros = take(20);
        let second = take(6);
        let minute = take(6);
        let hour = take(5);
        let day = take(5);
        let month = take(4);
        let year = take(14);
        Self {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        }
    }

    fn naive(self) -> Option<NaiveDateTime> {
        let year = i32::try_from(self.year).ok()?;
        chrono::NaiveDate::from_ymd_opt(year, self.month, self.day)?.and_hms_micro_opt(
            self.hour,
            self.minute,
            self.second,
            self.micros,
        )
    }

    /// Writes the canonical form into `buf` and returns it.
    fn write(self, buf: &mut [u8; STAMP_LEN]) -> &str {
        const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
            2021222324252627282930313233343536373839\
            4041424344454647484950515253545556575859\
            6061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899";
        let pair = |buf: &mut [u8; STAMP_LEN], at: usize, value: u32| {
            let i = usize::try_from(value % 100).unwrap_or(0) * 2;
            buf[at..at + 2].copy_from_slice(&PAIRS[i..i + 2]);
        };
        pair(buf, 0, self.year / 100);
        pair(buf, 2, self.year);
        buf[4] = b'-';
        pair(buf, 5, self.month);
        buf[7] = b'-';
        pair(buf, 8, self.day);
        buf[10] = b'T';
        pair(buf, 11, self.hour);
        buf[13] = b':';
        pair(buf, 14, self.minute);
        buf[16] = b':';
        pair(buf, 17, self.second);
        let len = if self.micros == 0 {
            19
        } else {
            buf[19] = b'.';
            pair(buf, 20, self.micros / 10_000);
            pair(buf, 22, self.micros / 100);
            pair(buf, 24, self.micros);
            STAMP_LEN
        };
        // Only ASCII digits and separators were written.
        std::str::from_utf8(&buf[..len]).unwrap_or("")
    }

    /// Parses the canonical form, `YYYY-MM-DDTHH:MM:SS[.ffffff]` with a
    /// non-zero fraction when present (Python leaves a zero one out).
    fn parse(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        if !(b.len() == 19 || b.len() == STAMP_LEN) {
            return None;
        }
        let num = |range: std::ops::Range<usize>| -> Option<u32> {
            b[range].iter().try_fold(0u32, |acc, &c| {
                c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
            })
        };
        let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
        if seps.iter().any(|&(i, c)| b[i] != c) {
            return None;
        }
        let micros = if b.len() == STAMP_LEN {
            if b[19] != b'.' {
                return None;
            }
            match num(20..26)? {
                0 => return None,
                m => m,
            }
        } else {
            0
        };
        Some(Self {
            year: num(0..4)?,
            month: num(5..7)?,
            day: num(8..10)?,
            hour: num(11..13)?,
            minute: num(14..16)?,
            second: num(17..19)?,
            micros,
        })
    }
}

/// A timestamp as messages, blocks and events carry it.
///
/// It reads and writes the string form AgentScope uses (naive local time,
/// [`format_timestamp`]); a string in that form is held as the instant (8
/// bytes, no allocation), any other string (an offset, a placeholder such as
/// `"<now>"`) is held as written. Either way it serialises back to exactly
/// the string it was read from, and two stamps are equal when their strings
/// are.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Stamp(StampRepr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum StampRepr {
    /// The canonical form's fields, packed ([`Fields::pack`]).
    Naive(u64),
    /// Any other text, kept verbatim. Boxed twice on purpose: a thin
    /// pointer keeps the stamp at 16 bytes for the common case.
    #[allow(clippy::box_collection)]
    Text(Box<String>),
}

impl Stamp {
    /// The current local time.
    #[must_use]
    pub fn now() -> Self {
        Self::from(Local::now().naive_local())
    }

    /// The instant, when the stamp is in the canonical naive form.
    #[must_use]
    pub fn naive(&self) -> Option<NaiveDateTime> {
        match &self.0 {
            StampRepr::Naive(packed) => Fields::unpack(*packed).naive(),
            StampRepr::Text(_) => None,
        }
    }

    /// Calls `f` with the stamp's string form, without allocating.
    pub fn with_str<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        match &self.0 {
            StampRepr::Naive(packed) => {
                let mut buf = [0u8; STAMP_LEN];
                f(Fields::unpack(*packed).write(&mut buf))
            }
            StampRepr::Text(s) => f(s),
        }
    }
}

impl Default for Stamp {
    /// The current local time.
    fn default() -> Self {
        Self::now()
    }
}

impl From<NaiveDateTime> for Stamp {
    fn from(t: NaiveDateTime) -> Self {
        // Years outside 0..=9999 have no four-digit form: kept as text.
        if let Some(packed) = (0..=9999)
            .contains(&t.year())
            .then(|| Fields::of(&t).pack())
            .flatten()
        {
            Self(StampRepr::Naive(packed))
        } else {
            Self(StampRepr::Text(Box::new(format_timestamp(&t))))
        }
    }
}

impl From<&str> for Stamp {
    fn from(s: &str) -> Self {
        match Fields::parse(s).and_then(Fields::pack) {
            Some(packed) => Self(StampRepr::Naive(packed)),
            None => Self(StampRepr::Text(Box::new(s.to_owned()))),
        }
    }
}

impl From<String> for Stamp {
    fn from(s: String) -> Self {
        match Fields::parse(&s).and_then(Fields::pack) {
            Some(packed) => Self(StampRepr::Naive(packed)),
            None => Self(StampRepr::Text(Box::new(s))),
        }
    }
}

impl From<&String> for Stamp {
    fn from(s: &String) -> Self {
        Self::from(s.as_str())
    }
}

impl From<&Stamp> for String {
    fn from(stamp: &Stamp) -> Self {
        stamp.with_str(str::to_owned)
    }
}

impl From<Stamp> for String {
    fn from(stamp: Stamp) -> Self {
        match stamp.0 {
            StampRepr::Text(s) => *s,
            StampRepr::Naive(_) => Self::from(&stamp),
        }
    }
}

impl fmt::Display for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_str(|s| f.write_str(s))
    }
}

impl fmt::Debug for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_str(|s| fmt::Debug::fmt(s, f))
    }
}

crate::strlike::str_like!(Stamp, "a timestamp string");

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
    fn a_stamp_writes_back_the_string_it_read() {
        assert_eq!(size_of::<Stamp>(), 16);
        assert_eq!(size_of::<Option<Stamp>>(), 16);
        for text in [
            "2026-11-30T00:17:12.973041",
            "2026-11-30T00:17:12",
            "2026-11-30T00:17:12.000041",
            "0001-01-01T00:00:00",
            "9999-12-31T23:59:59.999999",
            "1969-07-20T20:17:40.5",
            "2026-11-30T00:17:12.000000",
            "2026-11-30T00:17:12+01:00",
            "2026-11-30 00:17:12",
            "2026-02-30T00:00:00",
            "2026-11-30T24:00:00",
            "2026-11-30T00:00:60",
            "<now>",
            "",
            "２026-11-30T00:17:12",
        ] {
            let stamp = Stamp::from(text);
            assert_eq!(stamp.to_string(), text);
            assert_eq!(stamp, text);
            let json = serde_json::to_string(&stamp).unwrap();
            assert_eq!(json, serde_json::to_string(text).unwrap());
            let back: Stamp = serde_json::from_str(&json).unwrap();
            assert_eq!(back, stamp);
            assert_eq!(String::from(back), text);
        }
        assert!(matches!(
            Stamp::from("2026-11-30T00:17:12.973041").0,
            StampRepr::Naive(_)
        ));
        assert!(matches!(
            Stamp::from("2026-11-30T00:17:12").0,
            StampRepr::Naive(_)
        ));
        assert!(matches!(
            Stamp::from("2026-11-30T00:17:12.000000").0,
            StampRepr::Text(_)
        ));
        assert!(matches!(
            Stamp::from("1969-07-20T20:17:40.5").0,
            StampRepr::Text(_)
        ));
    }

    #[test]
    fn a_stamp_from_the_clock_is_canonical_and_ordered_as_text() {
        let day = NaiveDate::from_ymd_opt(1960, 1, 2).unwrap();
        let t = day.and_hms_micro_opt(3, 4, 5, 6).unwrap();
        let stamp = Stamp::from(t);
        assert_eq!(stamp, "1960-01-02T03:04:05.000006");
        assert_eq!(stamp.naive(), Some(t));
        assert_eq!(Stamp::from("<now>").naive(), None);
        let now = Stamp::now();
        assert!(now.naive().is_some());
        assert_eq!(Stamp::from(now.to_string()), now);
    }

    #[test]
    fn stamps_agree_with_chrono_across_the_range() {
        let first = NaiveDate::from_ymd_opt(0, 1, 1)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap();
        let last = NaiveDate::from_ymd_opt(9999, 12, 31)
            .unwrap()
            .and_hms_micro_opt(23, 59, 59, 999_999)
            .unwrap();
        let (lo, hi) = (
            first.and_utc().timestamp_micros(),
            last.and_utc().timestamp_micros(),
        );
        // Every day boundary of a few leap cycles, then a pseudo-random walk.
        let mut samples: Vec<i64> = (-800..800).map(|d| d * 86_400_000_000 - 1).collect();
        samples.extend([lo, hi, 0, -1]);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let span = u64::try_from(hi - lo).unwrap();
            samples.push(lo + i64::try_from(x % span).unwrap());
        }
        for micros in samples {
            let t = chrono::DateTime::from_timestamp_micros(micros)
                .unwrap()
                .naive_utc();
            let fields = Fields::of(&t);
            assert_eq!(Fields::unpack(fields.pack().unwrap()), fields, "{t}");
            let stamp = Stamp::from(t);
            let expected = if t.nanosecond() == 0 {
                t.format("%Y-%m-%dT%H:%M:%S").to_string()
            } else {
                t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
            };
            assert_eq!(stamp.to_string(), expected);
            assert_eq!(format_timestamp(&t), expected);
            assert_eq!(Stamp::from(expected).naive(), Some(t));
        }
        for bad in [
            "2023-02-29T00:00:00",
            "1900-02-29T00:00:00",
            "2026-13-01T00:00:00",
            "2026-00-10T00:00:00",
            "2026-04-31T00:00:00",
        ] {
            assert!(matches!(Stamp::from(bad).0, StampRepr::Text(_)), "{bad}");
        }
        assert!(matches!(
            Stamp::from("2000-02-29T00:00:00").0,
            StampRepr::Naive(_)
        ));
    }

    #[test]
    fn years_without_four_digits_are_written_in_full() {
        let far = NaiveDate::from_ymd_opt(12_345, 1, 2)
            .unwrap()
            .and_hms_micro_opt(3, 4, 5, 6)
            .unwrap();
        assert_eq!(format_timestamp(&far), "+12345-01-02T03:04:05.000006");
        assert_eq!(Stamp::from(far).to_string(), "+12345-01-02T03:04:05.000006");
        let before = NaiveDate::from_ymd_opt(-1, 1, 2)
            .unwrap()
            .and_hms_opt(3, 4, 5)
            .unwrap();
        assert_eq!(format_timestamp(&before), "-0001-01-02T03:04:05");
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
