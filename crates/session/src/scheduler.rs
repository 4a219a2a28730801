//! The scheduler: every tick, each enabled schedule whose latest occurrence
//! is due is claimed and fired.
//!
//! - **Once across replicas.** Every replica ticks; an occurrence is taken
//!   under the schedule's bus lease (`schedule:<id>`), and only when the
//!   stored schedule has not recorded it as fired yet. The claim records
//!   it (`last_fired_at`) before the fire, so a fire is at most once.
//! - **A fire** opens (stateless) or reuses (stateful) a session whose
//!   config carries `origin: {type: "schedule", schedule_id}`, and queues
//!   the schedule's instruction in the session's inbox (which posts its
//!   wakeup), like any queued input: it runs at once when the session is
//!   idle, after the active run otherwise.
//! - **Missed fires.** While no replica runs, occurrences pass unfired. On
//!   the next tick a schedule whose latest occurrence is newer than its
//!   last fire fires **once**, for that latest occurrence only: a server
//!   down for a day runs an hourly schedule once, not 24 times.
//! - **Rescheduling.** Changing the rule (or re-enabling) re-arms the
//!   schedule at the change: occurrences before it never fire, so the next
//!   fire is the new rule's first occurrence after the change.
//!
//! - **Reading.** Each schedule stores when it may next be due
//!   (`next_check_at`, recomputed on every write); a tick reads only the
//!   schedules at or past theirs, so a tick costs what is due, not every
//!   schedule of every user. Every [`SCHEDULER_SWEEP`] a tick reads them
//!   all, which covers schedules an older replica changed without the
//!   column.
//!
//! Time comes from a [`Clock`], so tests move it by hand.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use oxiscope_agent::AgentState;
use oxiscope_permission::PermissionMode;
use oxiscope_storage::{AgentRecord, ScheduleRecord, SessionRecord, new_id, now};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::schedule::{edit_locked, next_check_after, recheck};
use super::{check_quota, queue};
use crate::Engine;
use crate::error::{SessionError, SessionResult};
use crate::inbox::{Origin, Queued};
use crate::spec::{ModelSlot, ScheduleSpec, SessionSpec, schedule_origin};

/// How often the scheduler looks for due schedules.
pub const SCHEDULER_TICK: Duration = Duration::from_millis(500);

/// How often a tick reads every schedule rather than only those whose
/// stored check time has come: a schedule changed by a replica of a
/// version before check times still fires (within this much).
pub const SCHEDULER_SWEEP: Duration = Duration::from_secs(30);

/// Where the scheduler reads the time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// Starts the scheduler on the system clock; it stops with the server's
/// shutdown token.
pub fn spawn_scheduler(state: Engine) -> JoinHandle<()> {
    spawn_scheduler_with(state, Arc::new(SystemClock), SCHEDULER_TICK)
}

/// Starts the scheduler on `clock`, looking every `every`; it stops with
/// the server's shutdown token.
pub fn spawn_scheduler_with(
    state: Engine,
    clock: Arc<dyn Clock>,
    every: Duration,
) -> JoinHandle<()> {
    let last_sweep = Arc::new(std::sync::Mutex::new(None::<DateTime<Utc>>));
    super::spawn_periodic(state, every, move |state| {
        let now = clock.now();
        let sweep = match last_sweep.lock() {
            Ok(mut last) => {
                let sweep = last.is_none_or(|l| {
                    now - l >= chrono::Duration::from_std(SCHEDULER_SWEEP).unwrap_or_default()
                });
                if sweep {
                    *last = Some(now);
                }
                sweep
            }
            Err(_) => true,
        };
        async move {
            let outcome = if sweep {
                tick_all(&state, now).await
            } else {
                tick(&state, now).await
            };
            if let Err(e) = outcome {
                tracing::warn!(error = %e, "the scheduler's tick failed");
            }
        }
    })
}

/// The occurrence a schedule owes at `now`: its latest occurrence, when
/// the schedule is enabled, that occurrence is later than both its arming
/// and its last fire, and it lies in the schedule's window (`started_at`,
/// `ended_at`, when they are RFC 3339 instants; an API-made schedule's
/// `started_at` is a display time and its arming bounds it instead).
pub fn due(data: &Value, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let schedule = ScheduleSpec::parse(data);
    if schedule.disabled() {
        return None;
    }
    let occurrence = schedule.rule().ok()?.latest_until(now)?;
    if schedule.started_at.is_some_and(|start| occurrence < start)
        || schedule.ended_at.is_some_and(|end| occurrence > end)
    {
        return None;
    }
    let floor = [schedule.armed_at, schedule.last_fired_at]
        .into_iter()
        .flatten()
        .max();
    match floor {
        Some(floor) if occurrence <= floor => None,
        _ => Some(occurrence),
    }
}

/// Claims and fires every due schedule once, reading only the schedules
/// whose stored check time has come; returns how many this replica
/// claimed.
///
/// # Errors
/// The storage's failure to list the schedules; a failure on one schedule
/// is logged and the tick goes on.
pub async fn tick(state: &Engine, now: DateTime<Utc>) -> SessionResult<usize> {
    let candidates = state
        .storage()
        .list_due_schedules(&oxiscope_storage::check_time(now))
        .await?;
    fire_due(state, now, candidates).await
}

/// [`tick`] over every schedule, whatever its check time says.
///
/// # Errors
/// As [`tick`].
pub async fn tick_all(state: &Engine, now: DateTime<Utc>) -> SessionResult<usize> {
    let all = state.storage().list_all_schedules().await?;
    fire_due(state, now, all).await
}

async fn fire_due(
    state: &Engine,
    now: DateTime<Utc>,
    candidates: Vec<ScheduleRecord>,
) -> SessionResult<usize> {
    let mut claimed = 0;
    let now_text = oxiscope_storage::check_time(now);
    for record in candidates {
        let Some(at) = due(&record.data, now) else {
            // Read although not due: move its check time on (a sweep also
            // fills in ones an older replica left empty).
            let passed = record.next_check_at.as_ref().is_none_or(|c| *c <= now_text);
            if passed
                && next_check_after(&record.data, now) != record.next_check_at
                && let Err(e) = recheck(state, &record, now).await
            {
                tracing::warn!(schedule_id = record.id, error = %e, "rechecking a schedule failed");
            }
            continue;
        };
        match claim(state, &record, at).await {
            Ok(Some(fresh)) => {
                claimed += 1;
                if let Err(e) = fire(state, fresh, at).await {
                    tracing::warn!(schedule_id = record.id, error = %e, "a scheduled fire failed");
                }
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(schedule_id = record.id, error = %e, "claiming a schedule failed");
            }
        }
    }
    Ok(claimed)
}

/// Takes occurrence `at` for this replica: under the schedule's lease,
/// re-reads it and records the occurrence as fired unless another replica
/// already did. `None`: another replica holds or fired it, or it is gone.
///
/// # Errors
/// The bus's or the storage's failure.
pub async fn claim(
    state: &Engine,
    record: &ScheduleRecord,
    at: DateTime<Utc>,
) -> SessionResult<Option<ScheduleRecord>> {
    edit_locked(state, &record.user_id, &record.id, false, |fresh| {
        if due(&fresh.data, at) != Some(at) {
            return Ok(false);
        }
        ScheduleSpec::mark_fired(&mut fresh.data, at);
        Ok(true)
    })
    .await
}

/// Fires a claimed occurrence: queues the schedule's instruction in its
/// session (opened now unless a stateful schedule has one).
async fn fire(state: &Engine, record: ScheduleRecord, at: DateTime<Utc>) -> SessionResult<()> {
    let user = record.user_id.clone();
    let schedule = ScheduleSpec::parse(&record.data);
    let agent_id = &schedule.agent_id;
    let storage = state.storage();
    let agent = storage
        .get_agent(&user, agent_id)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("Agent {agent_id} not found")))?;
    check_quota(state, &user).await?;
    let stateful = schedule.stateful;
    let existing = match schedule.session_id.as_deref().filter(|_| stateful) {
        Some(id) => storage.get_session(&user, id).await?,
        None => None,
    };
    let session = match existing {
        Some(session) => session,
        None => {
            let session = new_session(state, &record, &agent)?;
            super::sessions::check_session_cap(state, &user).await?;
            storage.create_session(&session).await?;
            if stateful {
                let session_id = session.id.clone();
                edit_locked(state, &user, &record.id, true, |fresh| {
                    ScheduleSpec::bind_session(&mut fresh.data, &session_id);
                    Ok(true)
                })
                .await?;
            }
            session
        }
    };
    tracing::info!(schedule_id = record.id, session_id = session.id, %at, "schedule fired");
    let input = crate::parse_input(Some(instruction(&record, at)))?;
    queue(
        state,
        &agent,
        &session,
        &Queued::new(Origin::Schedule, input),
    )
    .await
}

/// A session for a schedule's fire, in a workspace of its own (sessions of
/// one agent may not share a workspace).
fn new_session(
    state: &Engine,
    record: &ScheduleRecord,
    agent: &AgentRecord,
) -> SessionResult<SessionRecord> {
    let id = new_id();
    let schedule = ScheduleSpec::parse(&record.data);
    let name = schedule.name.as_deref().unwrap_or("schedule");
    let mut config = SessionSpec::new(&id, Some(name.to_owned()), String::new);
    if let Some(model) = schedule.chat_model_value() {
        config.set_model_value(ModelSlot::Chat, model.clone());
    }
    config.set_origin(schedule_origin(&record.id));
    let mode = schedule.permission_mode.unwrap_or(PermissionMode::DontAsk);
    let mut agent_state = AgentState {
        session_id: id.clone(),
        ..AgentState::default()
    };
    agent_state.permission_context.mode = state.config().policy.effective_mode(mode);
    let stamp = now();
    Ok(SessionRecord {
        id: id.clone(),
        user_id: record.user_id.clone(),
        agent_id: agent.id.clone(),
        workspace_id: id,
        created_at: stamp.clone(),
        updated_at: stamp,
        config: config.to_value(),
        state: serde_json::to_value(&agent_state)
            .map_err(|e| SessionError::Internal(e.to_string()))?,
        revision: 0,
    })
}

/// The user message a fire queues: the schedule's description (its name
/// when it has none), marked as a scheduled trigger in the text and in its
/// metadata (`schedule_id`, `scheduled_at`). AgentScope injects a hint
/// block; user messages here hold text, so the trigger is a text block.
pub fn instruction(record: &ScheduleRecord, at: DateTime<Utc>) -> Value {
    let schedule = ScheduleSpec::parse(&record.data);
    let name = schedule.name.as_deref().unwrap_or("schedule");
    let task = schedule
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .unwrap_or(name);
    let due = at.to_rfc3339();
    let text = format!("[Scheduled task \"{name}\", due {due}] {task}");
    json!({
        "name": "user",
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "metadata": {"schedule_id": record.id, "scheduled_at": due},
    })
}

#[cfg(test)]
#[path = "scheduler_tests.rs"]
mod tests;
