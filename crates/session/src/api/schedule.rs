//! `/schedule/` bodies, in AgentScope's shapes.

use oxiscope_permission::PermissionMode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ChatModelConfig, SessionRecordView};

fn utc() -> String {
    "UTC".to_owned()
}

fn yes() -> bool {
    true
}

/// `POST /schedule/`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CreateScheduleRequest {
    /// Display name.
    pub name: String,
    /// What the schedule is for; also the instruction each fire gives.
    #[serde(default)]
    pub description: String,
    /// Cron expression: 5 fields (minute first), or 6 with seconds first.
    pub cron_expression: String,
    /// IANA time zone the expression is read in (default `UTC`).
    #[serde(default = "utc")]
    pub timezone: String,
    /// The agent to run.
    pub agent_id: String,
    /// The model of the sessions it creates.
    pub chat_model_config: ChatModelConfig,
    /// Whether it fires (default `true`).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Whether fires share one session (default: a new session each fire).
    #[serde(default)]
    pub stateful: bool,
    /// The permission mode of its runs (default `dont_ask`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub permission_mode: Option<PermissionMode>,
}

/// `POST /schedule/` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CreateScheduleResponse {
    /// The new schedule's id.
    pub schedule_id: String,
}

/// `PATCH /schedule/{schedule_id}`: omitted fields keep their values.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct UpdateScheduleRequest {
    /// New display name.
    #[serde(default)]
    pub name: Option<String>,
    /// New description.
    #[serde(default)]
    pub description: Option<String>,
    /// New cron expression (reschedules at once).
    #[serde(default)]
    pub cron_expression: Option<String>,
    /// New time zone (reschedules at once).
    #[serde(default)]
    pub timezone: Option<String>,
    /// `false` pauses it without deleting it.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Whether fires share one session.
    #[serde(default)]
    pub stateful: Option<bool>,
    /// New permission mode.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub permission_mode: Option<PermissionMode>,
}

/// A schedule as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ScheduleView {
    /// The schedule id.
    pub id: String,
    /// Last change.
    pub updated_at: String,
    /// Creation.
    pub created_at: String,
    /// The owner.
    pub user_id: String,
    /// The agent it runs.
    pub agent_id: String,
    /// `ScheduleData`: name, cron, timezone, enabled, stateful, ...
    pub data: Map<String, Value>,
}

/// `GET /schedule/` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ListSchedulesResponse {
    /// The caller's schedules, oldest first.
    pub schedules: Vec<ScheduleView>,
    /// How many.
    pub total: usize,
}

/// `GET /schedule/{schedule_id}/sessions` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ScheduleSessionsResponse {
    /// The sessions the schedule opened, newest first.
    pub sessions: Vec<SessionRecordView>,
    /// How many.
    pub total: usize,
}
