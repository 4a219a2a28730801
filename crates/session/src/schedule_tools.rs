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
use oxiscope_message::PermissionBehavior;
use oxiscope_permission::PermissionMode;
use oxiscope_storage::{ScheduleRecord, SessionRecord};
use oxiscope_tool::{FunctionTool, Tool, ToolFlags};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::schedule::{self, Provenance, Spec, view};
use crate::Engine;
use crate::api::{ChatModelConfig, CreateScheduleRequest};
use crate::error::SessionError;
use crate::spec::ScheduleSpec;

/// Who calls: the session an agent runs in.
#[derive(Debug)]
struct Caller {
    state: Engine,
    user_id: String,
    agent_id: String,
    session_id: String,
    /// The session's model, inherited by the schedules it creates.
    model: Option<ChatModelConfig>,
    /// The session's permission mode: the most its schedules may have.
    mode: PermissionMode,
}

/// Create a recurring scheduled task for yourself: at each time the cron
/// expression names, you are started in a session with the schedule's
/// description as your instruction. The cron expression has 5 fields
/// (minute hour day-of-month month day-of-week), or 6 with seconds first,
/// read in `timezone`: find out the user's time zone first. For a one-off
/// task, give the cron expression of that one moment and an `ended_at`
/// just after it. The description is all you will know when the task
/// runs: put the goal, the expected result, constraints and file paths in
/// it.
#[derive(Debug, Deserialize, JsonSchema)]
struct CreateArgs {
    /// Display name of the schedule.
    name: String,
    /// What to do at each run, with everything needed to do it.
    #[serde(default)]
    description: String,
    /// Cron expression, e.g. `0 9 * * 1-5`.
    cron_expression: String,
    /// IANA time zone the expression is read in, e.g. `Europe/Paris`
    /// (default UTC).
    #[serde(default)]
    timezone: Option<String>,
    /// Whether it fires from now on (default true).
    #[serde(default)]
    enabled: Option<bool>,
    /// ISO-8601 time before which it does not fire (default: now).
    #[serde(default)]
    started_at: Option<String>,
    /// ISO-8601 time after which it no longer fires (default: never).
    #[serde(default)]
    ended_at: Option<String>,
    /// Whether runs share one session (default: a new session each run).
    #[serde(default)]
    stateful: bool,
    /// Permission mode of the runs, where nobody is there to confirm:
    /// `default`, `accept_edits`, `explore`, `dont_ask` (the default) or
    /// `bypass` (only from a session in bypass mode, if the operator allows
    /// it). A session in `explore` mode creates `explore` schedules only.
    #[serde(default)]
    permission_mode: Option<String>,
}

/// List your user's scheduled tasks: id, name, cron expression and time
/// zone, next run, whether each is enabled and stateful.
#[derive(Debug, Deserialize, JsonSchema)]
struct ListArgs {}

/// Show every detail of one scheduled task, by its schedule id.
#[derive(Debug, Deserialize, JsonSchema)]
struct ViewArgs {
    /// The schedule's id.
    schedule_id: String,
}

/// Delete a scheduled task for good, by its schedule id: it never runs
/// again, and the sessions it opened are deleted (a running one is
/// stopped).
#[derive(Debug, Deserialize, JsonSchema)]
struct DeleteArgs {
    /// The schedule's id.
    schedule_id: String,
}

/// The schedule tools of `session`, as tools of its agent.
pub fn schedule_tools(
    state: &Engine,
    session: &SessionRecord,
    model: Option<ChatModelConfig>,
    mode: PermissionMode,
) -> ScheduleToolsMiddleware {
    let caller = Arc::new(Caller {
        state: state.clone(),
        user_id: session.user_id.clone(),
        agent_id: session.agent_id.clone(),
        session_id: session.id.clone(),
        model,
        mode,
    });
    // Always allowed, as in AgentScope: they act for the session's own
    // user only, under the operator's schedule limit.
    let allowed = |tool: FunctionTool, read_only: bool| -> Arc<dyn Tool> {
        Arc::new(
            tool.with_permission(PermissionBehavior::Allow)
                .with_flags(ToolFlags {
                    concurrency_safe: read_only,
                    read_only,
                    ..ToolFlags::default()
                }),
        )
    };
    let c = Arc::clone(&caller);
    let create_tool = FunctionTool::new("ScheduleCreate", move |args: CreateArgs| {
        let c = Arc::clone(&c);
        // Detached, as the delete: an interrupt does not cut it halfway.
        async move {
            super::lease::detached(async move { create(&c, args).await })
                .await
                .and_then(|created| created)
                .map_err(|e| failed("ScheduleCreate", &e))
        }
    });
    let c = Arc::clone(&caller);
    let list_tool = FunctionTool::new("ScheduleList", move |_: ListArgs| {
        let c = Arc::clone(&c);
        async move { list(&c).await.map_err(|e| failed("ScheduleList", &e)) }
    });
    let c = Arc::clone(&caller);
    let view_tool = FunctionTool::new("ScheduleView", move |args: ViewArgs| {
        let c = Arc::clone(&c);
        async move {
            schedule::find(&c.state, &c.user_id, args.schedule_id.trim())
                .await
                .map(|r| describe(&r, true))
                .map_err(|e| failed("ScheduleView", &e))
        }
    });
    let c = caller;
    let delete_tool = FunctionTool::new("ScheduleDelete", move |args: DeleteArgs| {
        let c = Arc::clone(&c);
        // Detached: deleting a schedule deletes its sessions, which may
        // dissolve a team and stop this very session's run; the delete
        // still goes to its end.
        async move {
            let id = args.schedule_id.trim().to_owned();
            let task = {
                let id = id.clone();
                async move { schedule::delete(&c.state, &c.user_id, &id).await }
            };
            super::lease::detached(task)
                .await
                .and_then(|deleted| deleted)
                .map(|()| format!("Schedule {id} deleted."))
                .map_err(|e| failed("ScheduleDelete", &e))
        }
    });
    ScheduleToolsMiddleware {
        tools: vec![
            allowed(create_tool, false),
            allowed(list_tool, true),
            allowed(view_tool, true),
            allowed(delete_tool, false),
        ],
    }
}

/// Adds the schedule tools to every reasoning step of a session.
#[derive(Debug)]
pub struct ScheduleToolsMiddleware {
    tools: Vec<Arc<dyn Tool>>,
}

impl Middleware for ScheduleToolsMiddleware {
    fn list_tools(&self, tools: &mut ToolList, _state: &AgentState) {
        tools.add_missing(&self.tools);
    }
}

/// The error result of `tool`.
fn failed(tool: &str, e: &SessionError) -> String {
    format!("{tool}: {}", message(e))
}

/// A tool error's text: what the model can act on.
fn message(e: &SessionError) -> String {
    match e {
        SessionError::Fields(details) => details
            .iter()
            .filter_map(|d| d.get("msg").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

/// An ISO-8601 time of argument `key`: with an offset, or naive and read
/// in `tz`.
fn time_arg(raw: Option<&str>, key: &str, tz: &str) -> Result<Option<DateTime<Utc>>, SessionError> {
    let Some(text) = raw.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let bad = || {
        SessionError::Invalid(format!(
            "{key} must be an ISO-8601 date and time, got {text:?}"
        ))
    };
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

async fn create(caller: &Caller, args: CreateArgs) -> Result<String, SessionError> {
    let model = caller.model.clone().ok_or_else(|| {
        SessionError::Invalid("this session has no model config for the schedule to use".into())
    })?;
    let name = args.name.trim();
    if name.is_empty() {
        return Err(SessionError::Invalid("the name must not be empty".into()));
    }
    let tz = args
        .timezone
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or("UTC")
        .to_owned();
    let mode = match args.permission_mode.as_deref().map(str::trim) {
        // A read-only session's schedules are read-only too.
        None | Some("") if caller.mode == PermissionMode::Explore => PermissionMode::Explore,
        None | Some("") => PermissionMode::DontAsk,
        Some(m) => serde_json::from_value(Value::from(m))
            .map_err(|_| SessionError::Invalid(format!("unknown permission_mode {m:?}")))?,
    };
    if !crate::schedule_mode_within(caller.mode, mode) {
        return Err(SessionError::Forbidden(format!(
            "this session runs in {} mode; a schedule it creates cannot run in {} mode",
            caller.mode.as_str(),
            mode.as_str()
        )));
    }
    let provenance = Provenance {
        source_session_id: Some(caller.session_id.clone()),
        started_at: time_arg(args.started_at.as_deref(), "started_at", &tz)?,
        ended_at: time_arg(args.ended_at.as_deref(), "ended_at", &tz)?,
    };
    let body = CreateScheduleRequest {
        name: name.to_owned(),
        description: args.description,
        cron_expression: args.cron_expression,
        timezone: tz,
        agent_id: caller.agent_id.clone(),
        chat_model_config: model,
        enabled: args.enabled.unwrap_or(true),
        stateful: args.stateful,
        permission_mode: Some(mode),
    };
    let id =
        schedule::create_from(&caller.state, &caller.user_id, body, Utc::now(), provenance).await?;
    let record = schedule::find(&caller.state, &caller.user_id, &id).await?;
    Ok(format!("Schedule created.\n{}", describe(&record, false)))
}

async fn list(caller: &Caller) -> Result<String, SessionError> {
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
    let s = ScheduleSpec::parse(&record.data);
    let get = |v: &Option<String>| v.clone().unwrap_or_default();
    let next = Spec::parse(&s.cron_expression, &s.timezone)
        .ok()
        .and_then(|s| s.next_after(Utc::now()))
        .map_or_else(|| "never".to_owned(), |t| t.to_rfc3339());
    let next = if s.enabled == Some(true) {
        next
    } else {
        "(disabled)".to_owned()
    };
    let mut out = format!(
        "- {} (id {})\n  cron: {} (time zone {})\n  next run: {next}\n  enabled: {}, stateful: {}, agent: {}\n",
        get(&s.name),
        shown.id,
        s.cron_expression,
        s.timezone,
        s.enabled == Some(true),
        s.stateful,
        shown.agent_id,
    );
    if full {
        let ended = s.ended_at_text.as_deref().unwrap_or("(never)");
        let source_session = get(&s.source_session_id);
        let description = get(&s.description);
        out.push_str(&format!(
            "  description: {}\n  started at: {}\n  ended at: {ended}\n  permission mode: {}\n  source: {}{}\n  created at: {}, updated at: {}\n",
            if description.is_empty() { "(none)" } else { &description },
            get(&s.started_at_text),
            get(&s.permission_mode_text),
            get(&s.source),
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
        let at = |v: &str, tz: &str| time_arg(Some(v), "t", tz);
        assert_eq!(
            at("2026-12-01T09:00:00+01:00", "UTC")
                .unwrap()
                .unwrap()
                .to_rfc3339(),
            "2026-12-01T08:00:00+00:00"
        );
        assert_eq!(
            at("2026-12-01T09:00:00", "Asia/Shanghai")
                .unwrap()
                .unwrap()
                .to_rfc3339(),
            "2026-12-01T01:00:00+00:00"
        );
        assert!(at("", "UTC").unwrap().is_none());
        assert!(time_arg(None, "t", "UTC").unwrap().is_none());
        for bad in ["tomorrow", "2026-13-01T00:00:00", "2026-12-01 09:30"] {
            assert!(at(bad, "UTC").is_err(), "{bad}");
        }
    }

    #[test]
    fn validation_errors_read_as_their_messages() {
        let e = SessionError::Fields(vec![
            serde_json::json!({"msg": "Invalid cron expression \"x\""}),
        ]);
        assert_eq!(message(&e), "Invalid cron expression \"x\"");
    }
}
