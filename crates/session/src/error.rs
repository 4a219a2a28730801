//! [`SessionError`]: what the engine refuses or fails with, as data. The
//! service maps it to HTTP in one place; other doors (channels, realtime
//! voice) map it their own way.

use serde_json::{Value, json};

/// An engine operation was refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The request is well-formed but cannot be served as asked.
    #[error("{0}")]
    Invalid(String),
    /// A capability token (a download link) is unknown, forged or expired.
    #[error("{0}")]
    Unauthorized(String),
    /// The operator's policy, or a per-user quota, does not allow what was
    /// asked; the message names the setting.
    #[error("{0}")]
    Forbidden(String),
    /// No such record for this user (another user's records are not
    /// found either).
    #[error("{0}")]
    NotFound(String),
    /// The session's (or record's) state does not allow it now: a run is
    /// active, nothing is parked, the reply does not answer what is
    /// parked, a name is taken.
    #[error("{0}")]
    Conflict(String),
    /// A limit is reached: the session's inbox is full, the user's tokens
    /// or concurrent runs are spent.
    #[error("{0}")]
    Limit(String),
    /// Fields of the input are invalid: FastAPI's `{type, loc, msg,
    /// input}` items, each naming its field by `loc`.
    #[error("validation failed: {0:?}")]
    Fields(Vec<Value>),
    /// The input is understood but unusable as a whole (a skill folder that
    /// is no skill, a path of the wrong kind).
    #[error("{0}")]
    Unprocessable(String),
    /// An upload or a file is over its size limit.
    #[error("{0}")]
    TooLarge(String),
    /// An upload's type is not one the engine reads.
    #[error("{0}")]
    Unsupported(String),
    /// The caller's upload did not arrive in time.
    #[error("{0}")]
    Timeout(String),
    /// The engine cannot serve it now (a time limit passed while it worked);
    /// trying again later may succeed.
    #[error("{0}")]
    Unavailable(String),
    /// A service the engine depends on (a hub) failed or limited its rate.
    #[error("{location}: {reason}")]
    Upstream {
        /// What was asked of it.
        location: String,
        /// Why it failed.
        reason: String,
        /// Whether it refused for its rate limit.
        rate_limited: bool,
    },
    /// Anything else: the store, a workspace, a broken record. The detail
    /// is for the operator's log, not the caller.
    #[error("internal: {0}")]
    Internal(String),
}

/// The engine's result.
pub type Result<T, E = SessionError> = std::result::Result<T, E>;

/// The engine's result, by the name its modules use.
pub type SessionResult<T> = Result<T>;

impl SessionError {
    /// A one-item [`SessionError::Fields`] at `loc` (FastAPI's `{type, loc,
    /// msg}` with a `null` input).
    #[must_use]
    pub fn invalid(loc: &[&str], msg: impl Into<String>, kind: &str) -> Self {
        Self::Fields(vec![
            json!({"type": kind, "loc": loc, "msg": msg.into(), "input": null}),
        ])
    }

    /// The messages of a [`SessionError::Fields`] joined, or the error's
    /// text: what a model or a person should read.
    #[must_use]
    pub fn message(&self) -> String {
        match self {
            Self::Fields(items) => items
                .iter()
                .filter_map(|d| d.get("msg").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("; "),
            other => other.to_string(),
        }
    }
}

impl From<oxiscope_storage::Error> for SessionError {
    fn from(e: oxiscope_storage::Error) -> Self {
        match e {
            oxiscope_storage::Error::NotFound { kind, id } => {
                Self::NotFound(format!("{} {id} not found", capitalise(kind)))
            }
            other => Self::Internal(other.to_string()),
        }
    }
}

/// A serde shape error as a validation item: missing fields get
/// `type: missing` at their location, other errors `value_error`.
pub fn shape_error(loc: &[&str], e: &serde_json::Error, input: &Value) -> SessionError {
    let text = e.to_string();
    let (kind, field, msg) = match missing_field(&text) {
        Some(f) => ("missing", Some(f.to_owned()), "Field required".to_owned()),
        None => ("value_error", None, strip_position(&text)),
    };
    let mut loc: Vec<Value> = loc.iter().map(|s| Value::from(*s)).collect();
    loc.extend(field.map(Value::from));
    SessionError::Fields(vec![
        json!({"type": kind, "loc": loc, "msg": msg, "input": input}),
    ])
}

/// The field of serde's "missing field `x`" message.
pub fn missing_field(text: &str) -> Option<&str> {
    let rest = text.split("missing field `").nth(1)?;
    rest.split('`').next()
}

/// serde_json's message without its " at line 1 column 5" suffix.
fn strip_position(text: &str) -> String {
    text.split(" at line ").next().unwrap_or(text).to_owned()
}

/// `agent` → `Agent`.
pub(crate) fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}
