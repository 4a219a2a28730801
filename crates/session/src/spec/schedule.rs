//! [`ScheduleSpec`]: a schedule's stored document, as the engine reads it.

use chrono::{DateTime, Utc};
use oxiscope_permission::PermissionMode;
use serde_json::{Map, Value};

use super::{Parsed, as_map};
use crate::error::SessionResult;
use crate::schedule::Spec;

const SESSION_ID: &str = "session_id";
const LAST_FIRED_AT: &str = "last_fired_at";

/// What a schedule's document says: its agent and rule, its window, when
/// it was armed and last fired, its session, the mode and model its
/// sessions run with. Text fields read as stored (an empty one is empty,
/// not absent).
#[derive(Debug, Clone, Default)]
pub struct ScheduleSpec {
    raw: Map<String, Value>,
    /// `agent_id`.
    pub agent_id: String,
    /// `session_id`: the session of a stateful schedule, once it has one.
    pub session_id: Option<String>,
    /// `name`.
    pub name: Option<String>,
    /// `description`: the instruction each fire queues.
    pub description: Option<String>,
    /// `cron_expression`.
    pub cron_expression: String,
    /// `timezone` (`UTC` when unset).
    pub timezone: String,
    /// `enabled`; only an explicit `false` turns a schedule off.
    pub enabled: Option<bool>,
    /// `stateful`: every fire in one session.
    pub stateful: bool,
    /// `permission_mode`, as stored (for display).
    pub permission_mode_text: Option<String>,
    /// `permission_mode`, when it names a mode.
    pub permission_mode: Option<PermissionMode>,
    /// `started_at`, as stored.
    pub started_at_text: Option<String>,
    /// `ended_at`, as stored.
    pub ended_at_text: Option<String>,
    /// `started_at`, when it is an RFC 3339 instant.
    pub started_at: Option<DateTime<Utc>>,
    /// `ended_at`, when it is an RFC 3339 instant.
    pub ended_at: Option<DateTime<Utc>>,
    /// `armed_at`: when its rule last (re)started counting.
    pub armed_at: Option<DateTime<Utc>>,
    /// `last_fired_at`.
    pub last_fired_at: Option<DateTime<Utc>>,
    /// `source`: who made it (`api`, `agent`).
    pub source: Option<String>,
    /// `source_session_id`: the session whose agent made it.
    pub source_session_id: Option<String>,
}

impl ScheduleSpec {
    /// The view of a stored schedule document.
    #[must_use]
    pub fn parse(data: &Value) -> Self {
        let raw = as_map(data);
        let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
        let instant = |key: &str| {
            raw.get(key)
                .and_then(Value::as_str)
                .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
                .map(|d| d.with_timezone(&Utc))
        };
        Self {
            agent_id: text("agent_id").unwrap_or_default(),
            session_id: text(SESSION_ID),
            name: text("name"),
            description: text("description"),
            cron_expression: text("cron_expression").unwrap_or_default(),
            timezone: text("timezone").unwrap_or_else(|| "UTC".to_owned()),
            enabled: raw.get("enabled").and_then(Value::as_bool),
            stateful: raw.get("stateful").and_then(Value::as_bool) == Some(true),
            permission_mode_text: text("permission_mode"),
            permission_mode: Parsed::of(raw.get("permission_mode")).ok().copied(),
            started_at_text: text("started_at"),
            ended_at_text: text("ended_at"),
            started_at: instant("started_at"),
            ended_at: instant("ended_at"),
            armed_at: instant("armed_at"),
            last_fired_at: instant(LAST_FIRED_AT),
            source: text("source"),
            source_session_id: text("source_session_id"),
            raw,
        }
    }

    /// Whether it is switched off.
    #[must_use]
    pub fn disabled(&self) -> bool {
        self.enabled == Some(false)
    }

    /// Its rule.
    ///
    /// # Errors
    /// A 422 when the stored rule no longer parses.
    pub fn rule(&self) -> SessionResult<Spec> {
        Spec::parse(&self.cron_expression, &self.timezone)
    }

    /// The stored `chat_model_config`, as stored.
    #[must_use]
    pub fn chat_model_value(&self) -> Option<&Value> {
        self.raw.get("chat_model_config")
    }

    /// Records in `data` a fire at `at`.
    pub fn mark_fired(data: &mut Value, at: DateTime<Utc>) {
        if let Value::Object(map) = data {
            map.insert(LAST_FIRED_AT.into(), at.to_rfc3339().into());
        }
    }

    /// Records in `data` the session a stateful schedule fires into.
    pub fn bind_session(data: &mut Value, session_id: &str) {
        if let Value::Object(map) = data {
            map.insert(SESSION_ID.into(), session_id.into());
        }
    }

    /// Forgets the bound session in `data` (the next fire opens one).
    pub fn unbind_session(data: &mut Map<String, Value>) {
        data.remove(SESSION_ID);
    }
}
