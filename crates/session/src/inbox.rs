//! What waits in a session's inbox: a typed input and where it came from,
//! stored as `{"origin": ..., "input": ...}` with the input in AgentScope's
//! chat-input shape. Entries written before origins were recorded (the
//! bare chat input) still read, as a user's.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{SessionError, SessionResult};
use crate::input::{ChatInput, parse_input};

/// Who put an input in a session's inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Origin {
    /// The session's user (an answer sent while a run was active).
    User,
    /// The engine: a background tool call's result.
    Hint,
    /// A schedule that fired.
    Schedule,
    /// A team: a leader's instruction or a member's report.
    Team,
    /// An IM channel.
    Channel,
}

/// An input waiting for the session's next run.
#[derive(Debug, Clone)]
pub struct Queued {
    /// Who sent it.
    pub origin: Origin,
    /// What the run is to take.
    pub input: ChatInput,
}

impl Queued {
    /// `input` from `origin`.
    #[must_use]
    pub fn new(origin: Origin, input: ChatInput) -> Self {
        Self { origin, input }
    }

    /// As stored.
    ///
    /// # Errors
    /// [`SessionError::Internal`] when the input cannot be written.
    pub fn to_value(&self) -> SessionResult<Value> {
        Ok(json!({"origin": self.origin, "input": wire(&self.input)?}))
    }

    /// Reads a stored entry: typed, or an input stored bare by an earlier
    /// version (the user's).
    ///
    /// # Errors
    /// The input no longer parses (see [`parse_input`]).
    pub fn from_value(value: Value) -> SessionResult<Self> {
        if let Value::Object(map) = &value
            && map.len() == 2
            && let (Some(origin), Some(input)) = (map.get("origin"), map.get("input"))
            && let Ok(origin) = serde_json::from_value::<Origin>(origin.clone())
        {
            return Ok(Self::new(origin, parse_input(Some(input.clone()))?));
        }
        Ok(Self::new(Origin::User, parse_input(Some(value))?))
    }
}

/// The input in AgentScope's chat-input shape, as `parse_input` reads it.
fn wire(input: &ChatInput) -> SessionResult<Value> {
    let unwritable = |e: serde_json::Error| SessionError::Internal(format!("an inbox input: {e}"));
    Ok(match input {
        ChatInput::Msgs(msgs) => serde_json::to_value(msgs).map_err(unwritable)?,
        ChatInput::Confirm(event) => tagged(
            serde_json::to_value(event).map_err(unwritable)?,
            "USER_CONFIRM_RESULT",
        ),
        ChatInput::External(event) => tagged(
            serde_json::to_value(event).map_err(unwritable)?,
            "EXTERNAL_EXECUTION_RESULT",
        ),
        ChatInput::Continue => Value::Null,
    })
}

/// An event object with its `type` tag (the event structs leave it to the
/// enum they sit in).
fn tagged(mut value: Value, kind: &str) -> Value {
    if let Value::Object(map) = &mut value {
        map.entry("type").or_insert_with(|| Value::from(kind));
    }
    value
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    fn user(text: &str) -> Value {
        json!([{"role": "user", "name": "user", "content": [{"type": "text", "text": text}]}])
    }

    #[test]
    fn every_kind_of_input_round_trips_with_its_origin() {
        let inputs = [
            user("hello"),
            json!({"type": "USER_CONFIRM_RESULT", "reply_id": "r1", "confirm_results": []}),
            json!({"type": "EXTERNAL_EXECUTION_RESULT", "reply_id": "r2", "execution_results": []}),
            Value::Null,
        ];
        for (input, origin) in
            inputs
                .into_iter()
                .zip([Origin::Schedule, Origin::User, Origin::Team, Origin::Hint])
        {
            let queued = Queued::new(origin, parse_input(Some(input.clone())).unwrap());
            let stored = queued.to_value().unwrap();
            assert_eq!(stored["origin"], serde_json::to_value(origin).unwrap());
            let back = Queued::from_value(stored.clone()).unwrap();
            assert_eq!(back.origin, origin);
            assert_eq!(
                back.to_value().unwrap(),
                stored,
                "{input} does not read back as it was"
            );
            assert_eq!(back.input.resume_reply_id(), queued.input.resume_reply_id());
        }
    }

    #[test]
    fn a_bare_input_stored_before_origins_reads_as_the_users() {
        let old = json!({"type": "USER_CONFIRM_RESULT", "reply_id": "r1", "confirm_results": []});
        let queued = Queued::from_value(old).unwrap();
        assert_eq!(queued.origin, Origin::User);
        assert_eq!(queued.input.resume_reply_id(), Some("r1"));
        // A message that merely has those two keys is still a message... or
        // refused, but never read as something else.
        let msgs = Queued::from_value(user("hi")).unwrap();
        assert!(matches!(msgs.input, ChatInput::Msgs(ref m) if m.len() == 1));
        assert!(Queued::from_value(json!({"origin": "user", "input": 7})).is_err());
    }
}
