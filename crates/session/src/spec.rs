//! Typed views of the stored records the engine reads: an agent's data
//! ([`AgentSpec`]), a session's config ([`SessionSpec`]) and a schedule's
//! document ([`ScheduleSpec`]).
//!
//! Each is parsed once, when the record is read, and keeps the stored JSON
//! it came from: fields the engine does not know (a newer client's, or
//! AgentScope's) go back to the wire and the store untouched, in their
//! order. The key names of the stored documents are spelt here and
//! nowhere else in the engine.

mod agent;
mod schedule;
mod session;

pub use agent::{AgentSpec, Invite, SOURCE_KEY};
pub use schedule::ScheduleSpec;
pub use session::{ModelSlot, SessionSpec, origin_of, schedule_origin};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// A stored sub-document: unset (absent or null), one that parses, or one
/// that does not (with the parser's message).
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed<T> {
    /// Absent or `null`.
    Unset,
    /// Present and well formed.
    Set(T),
    /// Present but not of the expected shape.
    Invalid(String),
}

impl<T> Parsed<T> {
    /// The parsed value, if it parsed.
    pub fn ok(&self) -> Option<&T> {
        match self {
            Self::Set(value) => Some(value),
            _ => None,
        }
    }

    /// The value, `None` when unset, or the parser's message.
    ///
    /// # Errors
    /// The stored document did not parse.
    pub fn get(&self) -> Result<Option<&T>, &str> {
        match self {
            Self::Unset => Ok(None),
            Self::Set(value) => Ok(Some(value)),
            Self::Invalid(message) => Err(message),
        }
    }
}

impl<T: DeserializeOwned> Parsed<T> {
    fn of(value: Option<&Value>) -> Self {
        match value {
            None | Some(Value::Null) => Self::Unset,
            Some(value) => match T::deserialize(value) {
                Ok(parsed) => Self::Set(parsed),
                Err(e) => Self::Invalid(e.to_string()),
            },
        }
    }
}

/// The object at `key`, if there is one.
fn object<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    map.get(key).and_then(Value::as_object)
}

/// The non-empty text at `key`, if there is one.
fn text(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The stored document as an object (anything else reads as empty).
fn as_map(value: &Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
