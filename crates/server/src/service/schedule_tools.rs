//! The schedule tools a service agent gets: `ScheduleCreate`,
//! `ScheduleList`, `ScheduleView` and `ScheduleDelete`, AgentScope's four,
//! over the same service code as the `/schedule/` routes (validation,
//! the policy's `max_schedules_per_user`, owner scoping).
//!
//! A schedule an agent creates runs that agent, with the model of the
//! session that created it, and records the session as its
//! `source_session_id` (`source: "AGENT"`). Every failure is an error
//! result the model reads.

use std::sync::Arc;

use chrono::{DateTime, NaiveDateTime, Utc};
use oxiscope_agent::{AgentState, Middleware, ToolList};
use oxiscope_permission::{PermissionContext, PermissionDecision, PermissionMode};
use oxiscope_storage::{ScheduleRecord, SessionRecord};
use oxiscope_tool::{Tool, ToolCallContext, ToolChunk, ToolFlags, ToolStream};
use serde_json::{Value, json};

use super::schedule::{self, Provenance, Spec, field, view};
use crate::api::{ChatModelConfig, CreateScheduleRequest};
use crate::error::ApiError;
use crate::state::AppState;

/// Which schedule tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Create,
    List,
    View,
    Delete,
}

/// Who calls: the session an agent runs in.
#[derive(Debug)]
struct Caller {
    state: AppState,
    user_id: String,
    agent_id: String,
    session_id: String,
    /// The session's model, inherited by the schedules it creates.
    model: Option<ChatModelConfig>,
}

/// One schedule tool bound to its caller.
#[derive(Debug)]
struct ScheduleTool {
    kind: Kind,
    caller: Arc<Caller>,
    schema: Value,
}

/// Adds the schedule tools to every reasoning step of a session.
#[derive(Debug)]
pub(crate) struct ScheduleToolsMiddleware {
    tools: Vec<Arc<dyn Tool>>,
}

impl Middleware for ScheduleToolsMiddleware {
    fn list_tools(&self, tools: &mut ToolList, _state: &AgentState) {
        for tool in &self.tools {
            if !tools.contains(tool.name()) {
                tools.add(Arc::clone(tool));
            }
        }
    }
}

/// The schedule tools of `session`.
pub(crate) fn schedule_tools(state: &AppState, session: &SessionRecord) -> ScheduleToolsMiddleware {
    let caller = Arc::new(Caller {
        state: state.clone(),
        user_id: session.user_id.clone(),
        agent_id: session.agent_id.clone(),
        session_id: session.id.clone(),
        model: session
            .config
            .get("chat_model_config")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok()),
    });
    let tools = [Kind::Create, Kind::List, Kind::View, Kind::Delete]
        .into_iter()
        .map(|kind| {
            Arc::new(ScheduleTool {
                kind,
                caller: Arc::clone(&caller),
                schema: schema(kind),
            }) as Arc<dyn Tool>
        })
        .collect();
    ScheduleToolsMiddleware { tools }
}

impl Tool for ScheduleTool {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Create => "ScheduleCreate",
            Kind::List => "ScheduleList",
            Kind::View => "ScheduleView",
            Kind::Delete => "ScheduleDelete",
        }
    }

    fn description(&self) -> &str {
        match self.kind {
            Kind::Create => CREATE,
            Kind::List => {
                "List your user's scheduled tasks: id, name, cron expression and time zone, \
                 next run, whether each is enabled and stateful."
            }
            Kind::View => "Show every detail of one scheduled task, by its schedule id.",
            Kind::Delete => {
                "Delete a scheduled task for good, by its schedule id: it never runs again, and \
                 the sessions it opened are deleted (a running one is stopped)."
            }
        }
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn flags(&self) -> ToolFlags {
        let read_only = matches!(self.kind, Kind::List | Kind::View);
        ToolFlags {
            concurrency_safe: read_only,
            read_only,
            ..ToolFlags::default()
        }
    }

    /// Always allowed, as in AgentScope: the tools act for the session's
    /// own user only, under the operator's schedule limit.
    fn check_permissions(
        &self,
        _input: &Value,
        _context: &PermissionContext,
    ) -> PermissionDecision {
        PermissionDecision::allow(format!("{} acts on the user's own schedules", self.name()))
    }

    fn call(&self, input: Value, _ctx: ToolCallContext) -> ToolStream {
        let kind = self.kind;
        let caller = Arc::clone(&self.caller);
        let name = self.name().to_owned();
        Box::pin(futures_util::stream::once(async move {
            let outcome = match kind {
                Kind::Create => create(&caller, &input).await,
                Kind::List => list(&caller).await,
                Kind::View => match id_arg(&input) {
                    Ok(id) => schedule::find(&caller.state, &caller.user_id, id)
                        .await
                        .map(|r| describe(&r, true)),
                    Err(e) => Err(e),
                },
                Kind::Delete => match id_arg(&input) {
                    Ok(id) => schedule::delete(&caller.state, &caller.user_id, id)
                        .await
                        .map(|()| format!("Schedule {id} deleted.")),
                    Err(e) => Err(e),
                },
            };
            match outcome {
                Ok(text) => ToolChunk::text(text),
                Err(e) => ToolChunk::error(format!("{name}: {}", message(&e))),
            }
        }))
    }
}

const CREATE: &str = "Create a recurring scheduled task for yourself: at each time the cron \
expression names, you are started in a session with the schedule's description as your \
instruction.\n\
- The cron expression has 5 fields (minute hour day-of-month month day-of-week), or 6 with \
seconds first; it is read in `timezone` (an IANA name such as `Europe/Paris`, default UTC). \
Find out the user's time zone first.\n\
- For a one-off task, give the cron expression of that one moment and an `ended_at` just \
after it.\n\
- The description is all you will know when the task runs: put the goal, the expected \
result, constraints and file paths in it.";

fn schema(kind: Kind) -> Value {
    let id = json!({
        "type": "object",
        "properties": {"schedule_id": {"type": "string", "description": "The schedule's id."}},
        "required": ["schedule_id"],
    });
    match kind {
        Kind::Create => json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Display name of the schedule."},
                "description": {"type": "string", "default": "", "description": "What to do at each run, with everything needed to do it."},
                "cron_expression": {"type": "string", "description": "Cron expression, e.g. '0 9 * * 1-5'."},
                "timezone": {"type": "string", "default": "UTC", "description": "IANA time zone the expression is read in."},
                "enabled": {"type": "boolean", "default": true, "description": "Whether it fires from now on."},
                "started_at": {"type": "string", "description": "ISO-8601 time before which it does not fire (default: now)."},
                "ended_at": {"type": "string", "description": "ISO-8601 time after which it no longer fires (default: never)."},
                "stateful": {"type": "boolean", "default": false, "description": "Whether runs share one session (default: a new session each run)."},
                "permission_mode": {"type": "string", "default": "dont_ask", "description": "Permission mode of the runs (nobody is there to confirm): default, accept_edits, plan, dont_ask, bypass (if the operator allows it)."},
            },
            "required": ["name", "cron_expression"],
        }),
        Kind::List => json!({"type": "object", "properties": {}}),
        Kind::View | Kind::Delete => id,
    }
}

/// A tool error's text: what the model can act on.
fn message(e: &ApiError) -> String {
    match e {
        ApiError::Validation(details) => details
            .iter()
            .filter_map(|d| d.get("msg").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

fn id_arg(input: &Value) -> Result<&str, ApiError> {
    match input.get("schedule_id").and_then(Value::as_str) {
        Some(id) if !id.trim().is_empty() => Ok(id.trim()),
        _ => Err(ApiError::BadRequest(
            "the argument \"schedule_id\" must be a non-empty string".into(),
        )),
    }
}

/// An ISO-8601 time: with an offset, or naive and read in `tz`.
fn time_arg(input: &Value, key: &str, tz: &str) -> Result<Option<DateTime<Utc>>, ApiError> {
    let Some(raw) = input.get(key).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let bad = || {
        ApiError::BadRequest(format!(
            "{key} must be an ISO-8601 date and time, got {raw}"
        ))
    };
    let text = raw.as_str().ok_or_else(bad)?.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(Some(t.with_timezone(&Utc)));
    }
    let naive = [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ]
    .iter()
    .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
    .ok_or_else(bad)?;
    let zone: chrono_tz::Tz = tz.parse().map_err(|_| bad())?;
    naive
        .and_local_timezone(zone)
        .earliest()
        .map(|t| Some(t.with_timezone(&Utc)))
        .ok_or_else(bad)
}

async fn create(caller: &Caller, input: &Value) -> Result<String, ApiError> {
    let model = caller.model.clone().ok_or_else(|| {
        ApiError::BadRequest("this session has no model config for the schedule to use".into())
    })?;
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::trim);
    let name = text("name").filter(|n| !n.is_empty()).ok_or_else(|| {
        ApiError::BadRequest("the argument \"name\" must be a non-empty string".into())
    })?;
    let cron = text("cron_expression").unwrap_or_default();
    let tz = text("timezone").filter(|t| !t.is_empty()).unwrap_or("UTC");
    let flag =
        |key: &str, default: bool| input.get(key).and_then(Value::as_bool).unwrap_or(default);
    let mode = match text("permission_mode") {
        None | Some("") => PermissionMode::DontAsk,
        Some(m) => serde_json::from_value(json!(m))
            .map_err(|_| ApiError::BadRequest(format!("unknown permission_mode {m:?}")))?,
    };
    let body = CreateScheduleRequest {
        name: name.to_owned(),
        description: text("description").unwrap_or_default().to_owned(),
        cron_expression: cron.to_owned(),
        timezone: tz.to_owned(),
        agent_id: caller.agent_id.clone(),
        chat_model_config: model,
        enabled: flag("enabled", true),
        stateful: flag("stateful", false),
        permission_mode: Some(mode),
    };
    let provenance = Provenance {
        source_session_id: Some(caller.session_id.clone()),
        started_at: time_arg(input, "started_at", tz)?,
        ended_at: time_arg(input, "ended_at", tz)?,
    };
    let id =
        schedule::create_from(&caller.state, &caller.user_id, body, Utc::now(), provenance).await?;
    let record = schedule::find(&caller.state, &caller.user_id, &id).await?;
    Ok(format!("Schedule created.\n{}", describe(&record, false)))
}

async fn list(caller: &Caller) -> Result<String, ApiError> {
    let mut records = caller
        .state
        .storage()
        .list_schedules(&caller.user_id)
        .await?;
    if records.is_empty() {
        return Ok("No scheduled tasks.".into());
    }
    records.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    let mut out = format!("{} scheduled task(s):\n", records.len());
    for r in &records {
        out.push('\n');
        out.push_str(&describe(r, false));
    }
    Ok(out)
}

/// A schedule as the model reads it; `full` adds the description and
/// provenance.
fn describe(record: &ScheduleRecord, full: bool) -> String {
    let shown = view(record);
    let data = &record.data;
    let get = |key: &str| field(data, key).unwrap_or_default();
    let flag = |key: &str| data.get(key).and_then(Value::as_bool).unwrap_or(false);
    let next = Spec::parse(get("cron_expression"), get("timezone"))
        .ok()
        .and_then(|s| s.next_after(Utc::now()))
        .map_or_else(|| "never".to_owned(), |t| t.to_rfc3339());
    let next = if flag("enabled") {
        next
    } else {
        "(disabled)".to_owned()
    };
    let mut out = format!(
        "- {} (id {})\n  cron: {} (time zone {})\n  next run: {next}\n  enabled: {}, stateful: {}, agent: {}\n",
        get("name"),
        shown.id,
        get("cron_expression"),
        get("timezone"),
        flag("enabled"),
        flag("stateful"),
        shown.agent_id,
    );
    if full {
        let ended = data
            .get("ended_at")
            .and_then(Value::as_str)
            .unwrap_or("(never)");
        let source_session = get("source_session_id");
        out.push_str(&format!(
            "  description: {}\n  started at: {}\n  ended at: {ended}\n  permission mode: {}\n  source: {}{}\n  created at: {}, updated at: {}\n",
            if get("description").is_empty() { "(none)" } else { get("description") },
            get("started_at"),
            get("permission_mode"),
            get("source"),
            if source_session.is_empty() { String::new() } else { format!(" (session {source_session})") },
            shown.created_at,
            shown.updated_at,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn times_are_read_with_an_offset_or_in_the_schedules_zone() {
        let at = |v: Value, tz: &str| time_arg(&json!({ "t": v }), "t", tz);
        assert_eq!(
            at(json!("2026-12-01T09:00:00+01:00"), "UTC")
                .unwrap()
                .unwrap()
                .to_rfc3339(),
            "2026-12-01T08:00:00+00:00"
        );
        assert_eq!(
            at(json!("2026-12-01T09:00:00"), "Asia/Shanghai")
                .unwrap()
                .unwrap()
                .to_rfc3339(),
            "2026-12-01T01:00:00+00:00"
        );
        assert!(at(json!("2026-12-01 09:30"), "UTC").is_err());
        assert!(at(json!(null), "UTC").unwrap().is_none());
        for bad in [json!("tomorrow"), json!(42), json!("2026-13-01T00:00:00")] {
            assert!(at(bad, "UTC").is_err());
        }
        assert!(time_arg(&json!({}), "t", "UTC").unwrap().is_none());
    }

    #[test]
    fn validation_errors_read_as_their_messages() {
        let e = ApiError::Validation(vec![json!({"msg": "Invalid cron expression \"x\""})]);
        assert_eq!(message(&e), "Invalid cron expression \"x\"");
    }
}
