//! `deprecated_at` on the wire: a naive ISO 8601 date-time.
//!
//! Written the way Python's `datetime.isoformat()` writes it
//! (`2026-07-24T00:00:00`, microseconds only when non-zero); read from that
//! form, with a space instead of `T`, or as a bare date (midnight).

use chrono::{NaiveDate, NaiveDateTime, Timelike};
use serde::de::{self, Deserializer, Unexpected};
use serde::{Deserialize, Serializer};

/// Formats `value` like Python's `isoformat()`.
pub(crate) fn format(value: &NaiveDateTime) -> String {
    if value.nanosecond() == 0 {
        value.format("%Y-%m-%dT%H:%M:%S").to_string()
    } else {
        value.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
    }
}

/// Parses the accepted forms; `None` for anything else.
pub(crate) fn parse(text: &str) -> Option<NaiveDateTime> {
    [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ]
    .iter()
    .find_map(|pattern| NaiveDateTime::parse_from_str(text, pattern).ok())
    .or_else(|| {
        NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
    })
}

pub(crate) fn serialize<S: Serializer>(
    value: &Option<NaiveDateTime>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => serializer.serialize_str(&format(value)),
        None => serializer.serialize_none(),
    }
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<NaiveDateTime>, D::Error> {
    let Some(text) = Option::<String>::deserialize(deserializer)? else {
        return Ok(None);
    };
    parse(&text).map(Some).ok_or_else(|| {
        de::Error::invalid_value(
            Unexpected::Str(&text),
            &"an ISO 8601 date-time without offset",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_python_isoformat() {
        let midnight = parse("2026-07-24").unwrap();
        assert_eq!(format(&midnight), "2026-07-24T00:00:00");
        let precise = parse("2026-11-30T00:17:12.973041").unwrap();
        assert_eq!(format(&precise), "2026-11-30T00:17:12.973041");
        assert_eq!(parse("2026-07-24 08:30:00"), parse("2026-07-24T08:30:00"));
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        assert_eq!(parse("next tuesday"), None);
        assert_eq!(parse("2026-13-01"), None);
    }
}
