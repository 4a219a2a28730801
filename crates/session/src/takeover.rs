//! Taking over runs whose runner died (its process was killed, its
//! machine lost): no turn is left hanging.
//!
//! A run records its reply in the bus's open-run registry when the reply
//! starts ([`MessageBus::open_run`](oxiscope_storage::MessageBus::open_run))
//! and removes the record once the reply's last event (its `REPLY_END`, or
//! the request that parks it) is published. While the run lives it holds
//! the session's lock and renews it; a record whose session is not locked
//! therefore belongs to a runner that died.
//!
//! Every replica sweeps the registry every
//! [`takeover_interval`](crate::EngineConfig::takeover_interval). For an
//! orphaned run it takes the lock, fences the stored state (bumps the
//! revision, so a runner that only lost its lease cannot commit over it),
//! publishes one error `REPLY_END` on the session's log (so subscribers on
//! every replica finish, and a client resuming with its cursor gets exactly
//! the events it missed), removes the record, and hands the lock over: the
//! session's queued inputs are served now, or the session takes the next
//! chat. The stored state stays at the dead run's last commit.
//!
//! Tool calls the dead run journaled as started and not finished (see
//! `journal`) are *in doubt*: they are named in the `REPLY_END` message,
//! and a note naming them is added to the session's context (and stored
//! messages), so the model reads it next turn instead of silently running
//! them again. The note is left out while a reply is parked (a resumed
//! reply that died waits for its answer again; the message still names
//! the calls).

use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_message::{AgentEvent, ErrorInfo, ErrorType, Msg, ReplyEndEvent, ReplyFinishedReason};
use oxiscope_storage::{Cursor, Error as StorageError, RunLease, SessionRecord, ToolCallRecord};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::run::hand_over;
use super::sessions::agent_state;
use crate::Engine;
use crate::error::{SessionError, SessionResult};
use crate::to_python_json;

/// What the message of a taken-over reply's `REPLY_END` says.
pub const STOPPED_MESSAGE: &str = "The server running this reply stopped before the reply \
                                   finished; the reply can be retried.";

/// What a run records about its open reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenRunInfo {
    /// The session's owner.
    pub user_id: String,
    /// The reply being produced.
    pub reply_id: String,
}

impl OpenRunInfo {
    /// The open run of `user_id` writing the reply `reply_id`.
    #[must_use]
    pub fn new(user_id: &str, reply_id: &str) -> Self {
        Self {
            user_id: user_id.to_owned(),
            reply_id: reply_id.to_owned(),
        }
    }

    /// As stored in the session's record.
    #[must_use]
    pub fn to_value(&self) -> Value {
        json!({"user_id": self.user_id, "reply_id": self.reply_id})
    }

    /// Reads a record back; `None` for one this version did not write.
    fn from_value(value: &Value) -> Option<Self> {
        Some(Self {
            user_id: value.get("user_id")?.as_str()?.to_owned(),
            reply_id: value.get("reply_id")?.as_str()?.to_owned(),
        })
    }
}

/// Sweeps the open-run registry every `takeover_interval` until the
/// server shuts down.
pub fn spawn_sweeper(state: Engine) -> JoinHandle<()> {
    let every = state.config().takeover_interval;
    super::spawn_periodic(state, every, |state| async move {
        if let Err(e) = sweep(&state).await {
            tracing::warn!(error = %e, "sweeping for orphaned runs failed");
        }
    })
}

/// How many orphaned runs one sweep of one replica tries to end.
const TAKEOVERS_PER_SWEEP: usize = 100;

/// Ends orphaned runs (at most `TAKEOVERS_PER_SWEEP` a sweep); returns
/// how many this replica ended.
///
/// # Errors
/// The bus's failure to list the open runs; a failure on one run is
/// logged and the sweep goes on.
pub async fn sweep(state: &Engine) -> SessionResult<usize> {
    let mut ended = 0;
    let mut tried = 0;
    for (session_id, _) in state.bus().open_runs().await? {
        if state.bus().is_locked(&session_id).await? {
            continue;
        }
        // A bounded batch per sweep: after a mass failure the rest wait
        // for the next sweep (or another replica) instead of one replica
        // working through thousands in one go.
        tried += 1;
        if tried > TAKEOVERS_PER_SWEEP {
            break;
        }
        match take_over(state, &session_id).await {
            Ok(true) => ended += 1,
            Ok(false) => {}
            Err(e) => tracing::error!(session_id, error = %e, "taking over a run failed"),
        }
    }
    Ok(ended)
}

/// Takes the session's lock and ends its orphaned reply; `false` when
/// another replica (or the runner itself) got there first.
async fn take_over(state: &Engine, session_id: &str) -> SessionResult<bool> {
    let bus = state.bus();
    let Some(lease) = bus.try_lock(session_id, state.config().lock_ttl).await? else {
        return Ok(false);
    };
    // Read again under the lock: the run may have ended before letting go.
    let record = match bus.open_run_info(session_id).await {
        Ok(record) => record,
        Err(e) => {
            release(state, session_id, &lease).await;
            return Err(e.into());
        }
    };
    let Some(info) = record.as_ref().and_then(OpenRunInfo::from_value) else {
        if record.is_some() {
            tracing::warn!(session_id, "dropping an unreadable open-run record");
            bus.close_run(session_id).await?;
        }
        release(state, session_id, &lease).await;
        return Ok(false);
    };
    if ended_already(state, session_id, &info.reply_id).await {
        // The runner died between publishing the reply's last event and
        // removing its record: nothing to end.
        bus.close_run(session_id).await?;
        super::journal::clear(state, session_id).await;
        let session = state.storage().get_session(&info.user_id, session_id).await;
        match session {
            Ok(session) => pass_on(state, session_id, session, lease).await?,
            Err(e) => {
                release(state, session_id, &lease).await;
                return Err(e.into());
            }
        }
        return Ok(false);
    }
    tracing::warn!(
        session_id,
        reply_id = info.reply_id,
        "the server running this reply stopped; ending it here"
    );
    let in_doubt = match in_doubt(state, session_id, &info.reply_id).await {
        Ok(calls) => calls,
        Err(e) => {
            release(state, session_id, &lease).await;
            return Err(e);
        }
    };
    let session = match fence(state, session_id, &info.user_id, &in_doubt).await {
        Ok(Some(session)) => Some(session),
        Ok(None) => {
            // The session is gone, or the record names someone who does
            // not own it: nothing is written to that session's log.
            tracing::warn!(
                session_id,
                "dropping the open-run record of a session its user does not have"
            );
            let closed = bus.close_run(session_id).await;
            release(state, session_id, &lease).await;
            closed?;
            return Ok(false);
        }
        Err(e) => {
            release(state, session_id, &lease).await;
            return Err(e);
        }
    };
    let message = end_message(&in_doubt);
    let published = publish_end(state, session_id, &info.reply_id, &message).await;
    if let Err(e) = published {
        release(state, session_id, &lease).await;
        return Err(e);
    }
    bus.close_run(session_id).await?;
    // A parked reply keeps its journal: a confirmation of a call in doubt
    // is then refused (see `journal::guard_confirm`); the next reply's end
    // clears it.
    let parked = session
        .as_ref()
        .and_then(|s| agent_state(s).ok())
        .is_some_and(|s| s.is_parked());
    if !parked {
        super::journal::clear(state, session_id).await;
    }
    pass_on(state, session_id, session, lease).await?;
    Ok(true)
}

/// Lets go of the lock taken for a takeover, serving the session's queued
/// inputs first (as a run that ends does).
async fn pass_on(
    state: &Engine,
    session_id: &str,
    session: Option<SessionRecord>,
    lease: RunLease,
) -> SessionResult<()> {
    let agent = match &session {
        Some(session) => {
            let agent = state
                .storage()
                .get_agent(&session.user_id, &session.agent_id)
                .await;
            match agent {
                Ok(agent) => agent,
                Err(e) => {
                    release(state, session_id, &lease).await;
                    return Err(e.into());
                }
            }
        }
        None => None,
    };
    match (agent, session) {
        (Some(agent), Some(session)) => hand_over(state, &agent, &session, lease).await,
        _ => release(state, session_id, &lease).await,
    }
    Ok(())
}

/// Whether the session's log already ends with the last event of
/// `reply_id` (its `REPLY_END`, or the request that parks it).
async fn ended_already(state: &Engine, session_id: &str, reply_id: &str) -> bool {
    let Ok(Some(last)) = state.bus().last_cursor(session_id).await else {
        return false;
    };
    let before = Cursor {
        run: last.run,
        seq: last.seq.saturating_sub(1),
    };
    let Ok(mut events) = state.bus().subscribe(session_id, Some(before)).await else {
        return false;
    };
    let first = tokio::time::timeout(Duration::from_secs(1), events.next()).await;
    let Ok(Some(event)) = first else {
        return false;
    };
    if event.cursor != last {
        return false;
    }
    let Ok(payload) = serde_json::from_str::<Value>(&event.payload) else {
        return false;
    };
    let terminal = matches!(
        payload.get("type").and_then(Value::as_str),
        Some("REPLY_END" | "REQUIRE_USER_CONFIRM" | "REQUIRE_EXTERNAL_EXECUTION")
    );
    terminal && payload.get("reply_id").and_then(Value::as_str) == Some(reply_id)
}

/// The reply's journaled tool calls that started and never finished.
async fn in_doubt(
    state: &Engine,
    session_id: &str,
    reply_id: &str,
) -> SessionResult<Vec<ToolCallRecord>> {
    let calls = state.storage().list_tool_calls(session_id).await?;
    Ok(calls
        .into_iter()
        .filter(|call| call.reply_id == reply_id && call.in_doubt())
        .collect())
}

/// `Bash (call_1), Write (call_2)`.
fn call_list(calls: &[ToolCallRecord]) -> String {
    calls
        .iter()
        .map(|call| format!("{} ({})", call.tool_name, call.call_id))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `REPLY_END` message: the reply can be retried, and which tool calls
/// may or may not have run.
fn end_message(in_doubt: &[ToolCallRecord]) -> String {
    if in_doubt.is_empty() {
        return STOPPED_MESSAGE.to_owned();
    }
    format!(
        "{STOPPED_MESSAGE} These tool calls had started and may or may not have run \
         (check before running them again): {}.",
        call_list(in_doubt)
    )
}

/// The note the model reads next turn about calls in doubt.
fn doubt_note(in_doubt: &[ToolCallRecord]) -> String {
    format!(
        "[Note from the service] The previous reply was cut off because the server running it \
         stopped. These tool calls had started and may or may not have run, so their effects \
         are unknown: {}. Check their effects before running them again.",
        call_list(in_doubt)
    )
}

/// The stored state, with the note about calls in doubt added to the
/// context when there are any and no reply is parked (a parked reply's
/// context waits for its answer); the note as a stored message too.
fn noted(
    session: &SessionRecord,
    in_doubt: &[ToolCallRecord],
) -> SessionResult<(Value, Vec<Value>)> {
    if in_doubt.is_empty() {
        return Ok((session.state.clone(), Vec::new()));
    }
    let mut agent_state = agent_state(session)?;
    if agent_state.is_parked() {
        return Ok((session.state.clone(), Vec::new()));
    }
    let note = Msg::user("system", doubt_note(in_doubt))
        .map_err(|e| SessionError::Internal(format!("building the in-doubt note: {e}")))?;
    let stored = serde_json::to_value(&note)
        .map_err(|e| SessionError::Internal(format!("serialising the in-doubt note: {e}")))?;
    agent_state.context.push(note);
    let snapshot = serde_json::to_value(&agent_state)
        .map_err(|e| SessionError::Internal(format!("serialising the state: {e}")))?;
    Ok((snapshot, vec![stored]))
}

/// Writes the stored state back (with the in-doubt note, if any), bumping
/// its revision, so a runner that lost its lease but still runs cannot
/// commit after the takeover. `None` when the session is gone.
async fn fence(
    state: &Engine,
    session_id: &str,
    user_id: &str,
    in_doubt: &[ToolCallRecord],
) -> SessionResult<Option<SessionRecord>> {
    for _ in 0..3 {
        let Some(mut session) = state.storage().get_session(user_id, session_id).await? else {
            return Ok(None);
        };
        let (snapshot, msgs) = noted(&session, in_doubt)?;
        match state
            .storage()
            .commit_reply(session_id, session.revision, &snapshot, &msgs)
            .await
        {
            Ok(revision) => {
                session.revision = revision;
                session.state = snapshot;
                return Ok(Some(session));
            }
            Err(StorageError::StaleRevision { .. }) => {}
            Err(StorageError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
    Err(SessionError::Conflict(format!(
        "session {session_id} kept changing during its takeover"
    )))
}

/// Publishes the error `REPLY_END` of the taken-over reply, after a
/// checkpoint (what the dead run streamed was not stored; a subscriber
/// without a cursor gets just the end, as after any reply).
async fn publish_end(
    state: &Engine,
    session_id: &str,
    reply_id: &str,
    message: &str,
) -> SessionResult<()> {
    let end = ReplyEndEvent::new(
        session_id.to_owned(),
        reply_id.to_owned(),
        ReplyFinishedReason::Error,
        Some(ErrorInfo::new(ErrorType::Internal, message)),
    );
    let payload = to_python_json(&AgentEvent::from(end))
        .map_err(|e| SessionError::Internal(format!("serialising a reply end: {e}")))?;
    state.bus().checkpoint(session_id).await?;
    state
        .bus()
        .publish(session_id, payload.into(), state.config().replay_limit)
        .await?;
    Ok(())
}

/// Lets go of a lease taken for a takeover that did not happen.
async fn release(state: &Engine, session_id: &str, lease: &RunLease) {
    if let Err(e) = state.bus().unlock(lease).await {
        tracing::error!(session_id, error = %e, "releasing the run lock failed");
    }
}

#[cfg(test)]
#[path = "takeover_tests.rs"]
mod tests;
