//! Positions in a session's event log.

use std::fmt;
use std::str::FromStr;

/// A position in a session's event log: the run number and the event's
/// place in that run, written `"<run>-<seq>"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cursor {
    /// The run: grows with every [`crate::MessageBus::begin_run`].
    pub run: u64,
    /// 1-based place of the event in its run.
    pub seq: u64,
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.run, self.seq)
    }
}

/// A string that is not `"<run>-<seq>"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid event cursor {0:?}: expected \"<run>-<seq>\"")]
pub struct InvalidCursor(pub String);

impl FromStr for Cursor {
    type Err = InvalidCursor;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || InvalidCursor(s.to_owned());
        let (run, seq) = s.split_once('-').ok_or_else(bad)?;
        Ok(Self {
            run: run.parse().map_err(|_| bad())?,
            seq: seq.parse().map_err(|_| bad())?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_round_trips_and_orders_by_run_then_seq() {
        let c: Cursor = "3-12".parse().unwrap();
        assert_eq!(c, Cursor { run: 3, seq: 12 });
        assert_eq!(c.to_string(), "3-12");
        assert!(Cursor { run: 2, seq: 99 } < c);
        assert!("x".parse::<Cursor>().is_err());
        assert!("1-".parse::<Cursor>().is_err());
    }
}
