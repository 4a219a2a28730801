//! Schedules: the cron + time-zone rule, the stored document and the
//! `/schedule/` operations. The scheduler that fires them is
//! [`super::scheduler`].
//!
//! The stored document is AgentScope's `ScheduleData` plus the fields the
//! scheduler keeps (hidden from answers): `agent_id`, `armed_at` (when the
//! rule last changed: occurrences before it never fire), `last_fired_at`
//! (the latest occurrence fired) and, for stateful schedules,
//! `session_id` (the one session every fire reuses).

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds};
use oxiscope_permission::PermissionMode;
use oxiscope_storage::{ScheduleRecord, SessionRecord, new_id, now};
use serde_json::{Value, json};

use super::{forget_session, lease};
use crate::Engine;
use crate::api::{CreateScheduleRequest, ScheduleView, UpdateScheduleRequest};
use crate::error::{SessionError, SessionResult};
use crate::spec::ScheduleSpec;

/// Document fields the scheduler keeps; answers leave them out.
const HIDDEN: [&str; 4] = ["agent_id", "armed_at", "last_fired_at", "session_id"];

/// A parsed schedule rule: a cron expression read in an IANA time zone.
#[derive(Debug, Clone)]
pub struct Spec {
    cron: Cron,
    tz: Tz,
}

impl Spec {
    /// Parses `cron` (5 fields, or 6 with seconds first) and `tz`.
    ///
    /// # Errors
    /// A 422 naming the bad field.
    pub fn parse(cron: &str, tz: &str) -> SessionResult<Self> {
        let parsed = CronParser::builder()
            .seconds(Seconds::Optional)
            .build()
            .parse(cron.trim())
            .map_err(|e| {
                SessionError::invalid(
                    &["body", "cron_expression"],
                    format!("Invalid cron expression {cron:?}: {e}"),
                    "value_error",
                )
            })?;
        let zone: Tz = tz.trim().parse().map_err(|_| {
            SessionError::invalid(
                &["body", "timezone"],
                format!("Unknown IANA timezone {tz:?}"),
                "value_error",
            )
        })?;
        let spec = Self {
            cron: parsed,
            tz: zone,
        };
        if spec.next_after(Utc::now()).is_none() {
            return Err(SessionError::invalid(
                &["body", "cron_expression"],
                format!("The cron expression {cron:?} never fires"),
                "value_error",
            ));
        }
        Ok(spec)
    }

    /// The first occurrence strictly after `t`.
    pub fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.cron
            .find_next_occurrence(&t.with_timezone(&self.tz), false)
            .ok()
            .map(|d| d.with_timezone(&Utc))
    }

    /// The latest occurrence at or before `t`.
    /// The shortest gap between the next occurrences after `t` (a sample
    /// of 32), `None` for a rule that fires at most once more.
    pub fn shortest_gap(&self, t: DateTime<Utc>) -> Option<chrono::Duration> {
        let mut at = self.next_after(t)?;
        let mut shortest: Option<chrono::Duration> = None;
        for _ in 0..32 {
            let Some(next) = self.next_after(at) else {
                break;
            };
            let gap = next - at;
            shortest = Some(shortest.map_or(gap, |s| s.min(gap)));
            at = next;
        }
        shortest
    }

    /// Refuses (422 at `cron_expression`) a rule that fires more often
    /// than every `min_secs` seconds.
    pub fn check_interval(&self, min_secs: u64, t: DateTime<Utc>) -> SessionResult<()> {
        let min = chrono::Duration::seconds(i64::try_from(min_secs).unwrap_or(i64::MAX));
        match self.shortest_gap(t) {
            Some(gap) if gap < min => Err(SessionError::invalid(
                &["body", "cron_expression"],
                format!(
                    "The schedule fires every {} s; this server allows one fire every {min_secs} s \
                     at most (min_schedule_interval_secs).",
                    gap.num_seconds()
                ),
                "value_error",
            )),
            _ => Ok(()),
        }
    }

    /// The latest occurrence at or before `t`.
    pub fn latest_until(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.cron
            .find_previous_occurrence(&t.with_timezone(&self.tz), true)
            .ok()
            .map(|d| d.with_timezone(&Utc))
    }
}

/// The `next_check_at` of a schedule document: the first time it may be
/// due ([`crate::scheduler::due`]), never later. That is its
/// first occurrence after both its arming and its last fire, and not
/// before its window opens; far in the future for a disabled schedule, a
/// rule that no longer parses or fires, or a first occurrence past the
/// window; `None` (looked at on every tick) when nothing bounds it from
/// below.
pub fn next_check(data: &Value) -> Option<String> {
    next_check_from(data, None)
}

/// [`next_check`] of a schedule that was not due at `now` (nothing is
/// owed up to then): its first occurrence after `now` as well.
pub fn next_check_after(data: &Value, now: DateTime<Utc>) -> Option<String> {
    next_check_from(data, Some(now))
}

fn next_check_from(data: &Value, not_before: Option<DateTime<Utc>>) -> Option<String> {
    const NEVER: &str = "9999-12-31T23:59:59.999999Z";
    let schedule = ScheduleSpec::parse(data);
    if schedule.disabled() {
        return Some(NEVER.to_owned());
    }
    let Ok(spec) = schedule.rule() else {
        return Some(NEVER.to_owned());
    };
    // An occurrence at the window's opening counts: start just before it.
    let opening = schedule
        .started_at
        .map(|t| t - chrono::Duration::seconds(1));
    let from = [
        schedule.armed_at,
        schedule.last_fired_at,
        opening,
        not_before,
    ]
    .into_iter()
    .flatten()
    .max()?;
    Some(match spec.next_after(from) {
        Some(next) if schedule.ended_at.is_none_or(|end| next <= end) => {
            oxiscope_storage::check_time(next)
        }
        _ => NEVER.to_owned(),
    })
}

/// The rule of a stored schedule.
///
/// # Errors
/// A 422 when the stored rule no longer parses.
pub fn spec_of(data: &Value) -> SessionResult<Spec> {
    ScheduleSpec::parse(data).rule()
}

/// The schedule as the API shows it.
pub fn view(record: &ScheduleRecord) -> ScheduleView {
    let mut data = record.data.as_object().cloned().unwrap_or_default();
    let agent_id = ScheduleSpec::parse(&record.data).agent_id;
    for key in HIDDEN {
        data.remove(key);
    }
    ScheduleView {
        id: record.id.clone(),
        updated_at: record.updated_at.clone(),
        created_at: record.created_at.clone(),
        user_id: record.user_id.clone(),
        agent_id,
        data,
    }
}

fn mode_value(mode: PermissionMode) -> SessionResult<Value> {
    serde_json::to_value(mode).map_err(|e| SessionError::Internal(e.to_string()))
}

/// Validates and stores a new schedule; its first fire is the first
/// occurrence after `at`.
///
/// # Errors
/// 422 for a bad cron or time zone (nothing stored); 404 for an unknown
/// agent or credential; 403 for a permission mode the policy forbids.
pub async fn create(
    state: &Engine,
    user: &str,
    body: CreateScheduleRequest,
    at: DateTime<Utc>,
) -> SessionResult<String> {
    create_from(state, user, body, at, Provenance::default()).await
}

/// Where a schedule comes from and when it may fire, beyond
/// [`CreateScheduleRequest`]: an agent's `ScheduleCreate` sets them.
#[derive(Debug, Default)]
pub struct Provenance {
    /// The session whose agent created it (`None`: the API).
    pub source_session_id: Option<String>,
    /// No fire before this instant.
    pub started_at: Option<DateTime<Utc>>,
    /// No fire after this instant.
    pub ended_at: Option<DateTime<Utc>>,
}

/// [`create`], with the schedule's provenance and firing window.
///
/// # Errors
/// As [`create`]; 403 when the user has as many schedules as the policy's
/// `max_schedules_per_user`; 422 for a window that ends before it starts.
pub async fn create_from(
    state: &Engine,
    user: &str,
    body: CreateScheduleRequest,
    at: DateTime<Utc>,
    provenance: Provenance,
) -> SessionResult<String> {
    Spec::parse(&body.cron_expression, &body.timezone)?
        .check_interval(state.config().policy.min_schedule_interval_secs, at)?;
    if let (Some(start), Some(end)) = (provenance.started_at, provenance.ended_at)
        && end <= start
    {
        return Err(SessionError::invalid(
            &["body", "ended_at"],
            "ended_at must be later than started_at".to_owned(),
            "value_error",
        ));
    }
    // Counted and stored under the user's lease, so concurrent creates
    // cannot pass the cap together.
    lease::under(
        state,
        &format!("schedules-of:{user}"),
        BUSY,
        create_counted(state, user, body, at, provenance),
    )
    .await
}

/// [`create_from`], holding the user's schedule lease.
async fn create_counted(
    state: &Engine,
    user: &str,
    body: CreateScheduleRequest,
    at: DateTime<Utc>,
    provenance: Provenance,
) -> SessionResult<String> {
    let storage = state.storage();
    let most = state.config().policy.max_schedules_per_user;
    if storage.list_schedules(user).await?.len() >= most {
        return Err(SessionError::Forbidden(format!(
            "A user may keep at most {most} schedules (max_schedules_per_user); delete one first."
        )));
    }
    storage
        .get_agent(user, &body.agent_id)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("Agent {} not found", body.agent_id)))?;
    let credential = &body.chat_model_config.credential_id;
    storage
        .get_credential(user, credential)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("Credential {credential} not found")))?;
    let mode = body.permission_mode.unwrap_or(PermissionMode::DontAsk);
    state.config().policy.check_mode(mode)?;
    let data = json!({
        "name": body.name,
        "description": body.description,
        "enabled": body.enabled,
        "timezone": body.timezone.trim(),
        "cron_expression": body.cron_expression.trim(),
        "started_at": provenance.started_at.map_or_else(now, |t| t.to_rfc3339()),
        "ended_at": provenance.ended_at.map(|t| t.to_rfc3339()),
        "chat_model_config": body.chat_model_config,
        "stateful": body.stateful,
        "permission_mode": mode_value(mode)?,
        "source": if provenance.source_session_id.is_some() { "AGENT" } else { "USER" },
        "source_session_id": provenance.source_session_id.unwrap_or_default(),
        "agent_id": body.agent_id,
        "armed_at": at.to_rfc3339(),
    });
    let stamp = now();
    let record = ScheduleRecord {
        id: new_id(),
        user_id: user.to_owned(),
        created_at: stamp.clone(),
        updated_at: stamp,
        next_check_at: next_check(&data),
        data,
    };
    storage.create_schedule(&record).await?;
    Ok(record.id)
}

/// The caller's schedule `id`, or 404.
///
/// # Errors
/// 404 when the caller has no such schedule.
pub async fn find(state: &Engine, user: &str, id: &str) -> SessionResult<ScheduleRecord> {
    state
        .storage()
        .get_schedule(user, id)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("Schedule {id} not found")))
}

/// Applies a partial update; a changed rule (or re-enabling) re-arms the
/// schedule at `at`, so its next fire is the new rule's first occurrence
/// after the change.
///
/// # Errors
/// 404 when the caller has no such schedule; 422 when the result has a
/// bad cron or time zone (nothing stored).
pub async fn update(
    state: &Engine,
    user: &str,
    id: &str,
    body: UpdateScheduleRequest,
    at: DateTime<Utc>,
) -> SessionResult<ScheduleRecord> {
    find(state, user, id).await?;
    let edit = |record: &mut ScheduleRecord| -> SessionResult<bool> {
        let mut data = record.data.as_object().cloned().unwrap_or_default();
        let rearm =
            body.cron_expression.is_some() || body.timezone.is_some() || body.enabled == Some(true);
        let mut set = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                data.insert(key.to_owned(), value);
            }
        };
        set("name", body.name.map(Value::from));
        set("description", body.description.map(Value::from));
        set(
            "cron_expression",
            body.cron_expression.map(|c| c.trim().into()),
        );
        set("timezone", body.timezone.map(|t| t.trim().into()));
        set("enabled", body.enabled.map(Value::from));
        set("stateful", body.stateful.map(Value::from));
        if let Some(mode) = body.permission_mode {
            state.config().policy.check_mode(mode)?;
            // A stateful schedule's session keeps the mode it was opened
            // with: a new mode takes a new session, from the next fire.
            if ScheduleSpec::parse(&record.data).permission_mode != Some(mode) {
                ScheduleSpec::unbind_session(&mut data);
            }
            data.insert("permission_mode".into(), mode_value(mode)?);
        }
        if rearm {
            data.insert("armed_at".into(), at.to_rfc3339().into());
        }
        let data = Value::Object(data);
        spec_of(&data)?.check_interval(state.config().policy.min_schedule_interval_secs, at)?;
        record.data = data;
        record.updated_at = now();
        Ok(true)
    };
    edit_locked(state, user, id, true, edit)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("Schedule {id} not found")))
}

/// Moves the check time of schedule `record`, found not due at `now`
/// although its check time had come (its last occurrence in the window
/// passed unfired, or the window opens mid-second), past `now`, so ticks
/// stop reading it. Under the schedule's lease; skipped when another
/// replica holds it.
///
/// # Errors
/// The bus's or the storage's failure.
pub async fn recheck(
    state: &Engine,
    record: &ScheduleRecord,
    now: DateTime<Utc>,
) -> SessionResult<()> {
    let key = format!("schedule:{}", record.id);
    let Some(held) = lease::take(state, &key, false, BUSY).await? else {
        return Ok(());
    };
    let outcome = async {
        let storage = state.storage();
        let Some(mut fresh) = storage.get_schedule(&record.user_id, &record.id).await? else {
            return Ok(());
        };
        let check = next_check_after(&fresh.data, now);
        if crate::scheduler::due(&fresh.data, now).is_none() && check != fresh.next_check_at {
            fresh.next_check_at = check;
            storage.update_schedule(&fresh).await?;
        }
        Ok(())
    }
    .await;
    held.release().await;
    outcome
}

/// The 409 when a schedule's lease stays held.
const BUSY: &str = "The schedules are busy; try again.";

/// Read-modify-write of a stored schedule under its bus lease
/// (`schedule:<id>`), which the scheduler's claims take too, so an edit
/// and a claim never overwrite each other. `edit` returns whether to
/// write. `None`: the schedule is gone, `edit` wrote nothing, or (when
/// not `wait`ing) another replica holds the lease.
///
/// # Errors
/// `edit`'s error (nothing written); 409 when the lease stays held for
/// seconds; the bus's or the storage's failure.
pub async fn edit_locked(
    state: &Engine,
    user: &str,
    id: &str,
    wait: bool,
    edit: impl FnOnce(&mut ScheduleRecord) -> SessionResult<bool>,
) -> SessionResult<Option<ScheduleRecord>> {
    let Some(held) = lease::take(state, &format!("schedule:{id}"), wait, BUSY).await? else {
        return Ok(None);
    };
    let outcome = async {
        let Some(mut record) = state.storage().get_schedule(user, id).await? else {
            return Ok(None);
        };
        if !edit(&mut record)? {
            return Ok(None);
        }
        record.next_check_at = next_check(&record.data);
        state.storage().update_schedule(&record).await?;
        Ok(Some(record))
    }
    .await;
    held.release().await;
    outcome
}

/// The sessions schedule `id` opened, newest first.
///
/// # Errors
/// The storage's failure.
pub async fn sessions_of(
    state: &Engine,
    record: &ScheduleRecord,
) -> SessionResult<Vec<SessionRecord>> {
    let agent_id = ScheduleSpec::parse(&record.data).agent_id;
    let mut sessions: Vec<SessionRecord> = state
        .storage()
        .list_sessions(&record.user_id, &agent_id)
        .await?
        .into_iter()
        .filter(|s| crate::spec::SessionSpec::of(s).schedule_id() == Some(record.id.as_str()))
        .collect();
    sessions.sort_by(|a, b| b.created_at.cmp(&a.created_at));
    Ok(sessions)
}

/// Deletes the schedule and the sessions it opened (their runs are
/// interrupted).
///
/// # Errors
/// 404 when the caller has no such schedule.
pub async fn delete(state: &Engine, user: &str, id: &str) -> SessionResult<()> {
    let record = find(state, user, id).await?;
    if !state.storage().delete_schedule(user, id).await? {
        return Err(SessionError::NotFound(format!("Schedule {id} not found")));
    }
    for session in sessions_of(state, &record).await? {
        // A team the session leads or belongs to lets go of it first.
        super::team::session_deleting(state, user, &session.id).await?;
        state.storage().delete_session(user, &session.id).await?;
        forget_session(state, &session.id).await?;
    }
    Ok(())
}
