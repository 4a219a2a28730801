//! Chat runs: take the session's lock, run the reply in the background,
//! publish every event, persist messages and state inside the lock, then
//! serve queued inputs.

use futures_util::StreamExt;
use oxiscope_agent::{Agent, Awaiting, ReplyInput};
use oxiscope_message::{
    AgentEvent, ErrorInfo, ErrorType, ReplyEndEvent, ReplyFinishedReason, UserInterruptEvent,
};
use oxiscope_storage::{AgentRecord, RunLease, SessionRecord};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::build::build_agent;
use super::input::{ChatInput, parse_input};
use super::sessions::agent_state;
use crate::error::{ApiError, ApiResult};
use crate::pyjson::to_python_json;
use crate::state::{ActiveRun, AppState};

/// What to start a run with.
#[derive(Debug)]
pub(crate) enum RunRequest {
    /// A `POST /chat/` input, and its JSON for queueing.
    Chat(Box<ChatInput>, Option<Value>),
    /// Close the parked reply.
    Interrupt,
}

/// Starts a run of `session` in the background.
///
/// # Errors
/// 409 when a run is active and the input is new messages (a resume is
/// queued instead) or nothing is parked for a resume; 400 when a resume
/// names another reply or the model cannot be built.
pub(crate) async fn start_run(
    state: &AppState,
    agent: &AgentRecord,
    session: SessionRecord,
    request: RunRequest,
) -> ApiResult<()> {
    let ttl = state.config().lock_ttl;
    let Some(lease) = state.bus().try_lock(&session.id, ttl).await? else {
        return match request {
            RunRequest::Chat(input, raw) if input.resume_reply_id().is_some() => {
                state
                    .bus()
                    .push_inbox(&session.id, raw.unwrap_or(Value::Null))
                    .await?;
                Ok(())
            }
            _ => Err(ApiError::Conflict(
                "A chat run is already active for this session.".to_owned(),
            )),
        };
    };
    match prepare(state, agent, &session, request).await {
        Ok((runner, input)) => {
            spawn(state, lease, runner, session.revision, input);
            Ok(())
        }
        Err(e) => {
            state.bus().unlock(&lease).await?;
            Err(e)
        }
    }
}

/// Checks the input against the stored state and builds the agent.
async fn prepare(
    state: &AppState,
    agent: &AgentRecord,
    session: &SessionRecord,
    request: RunRequest,
) -> ApiResult<(Agent, ReplyInput)> {
    let current = agent_state(session)?;
    let input = match request {
        RunRequest::Interrupt => {
            if !current.is_parked() {
                return Err(ApiError::Conflict("Nothing to interrupt.".to_owned()));
            }
            ReplyInput::from(UserInterruptEvent::new(
                current.reply_context.reply_id.clone(),
            ))
        }
        RunRequest::Chat(input, _) => {
            check_resume(&current, &input)?;
            match *input {
                ChatInput::Msgs(m) => ReplyInput::Msgs(m),
                ChatInput::Confirm(e) => e.into(),
                ChatInput::External(e) => e.into(),
                ChatInput::Continue => ReplyInput::Continue,
            }
        }
    };
    let runner = build_agent(state, agent, session, current).await?;
    Ok((runner, input))
}

/// A resume must target the parked reply, parked for that kind of input.
fn check_resume(current: &oxiscope_agent::AgentState, input: &ChatInput) -> ApiResult<()> {
    let (wanted, what) = match input {
        ChatInput::Confirm(_) => (Awaiting::Permission, "a confirmation"),
        ChatInput::External(_) => (Awaiting::ExternalResult, "external execution results"),
        ChatInput::Msgs(_) | ChatInput::Continue => return Ok(()),
    };
    if current.awaiting() != Some(wanted) {
        return Err(ApiError::Conflict(format!(
            "No reply in this session is awaiting {what}."
        )));
    }
    let parked = &current.reply_context.reply_id;
    match input.resume_reply_id() {
        Some(id) if id != parked => Err(ApiError::BadRequest(format!(
            "The input's reply_id {id} does not match the awaiting reply {parked}."
        ))),
        _ => Ok(()),
    }
}

fn spawn(state: &AppState, lease: RunLease, agent: Agent, revision: i64, input: ReplyInput) {
    let cancel = state.shutdown_token().child_token();
    let mut runs = state.runs();
    let task = tokio::spawn(drive(
        state.clone(),
        lease.clone(),
        agent,
        revision,
        input,
        cancel.clone(),
    ));
    runs.insert(
        lease.session_id,
        ActiveRun {
            cancel,
            task: Some(task),
        },
    );
}

/// The background task: runs, then serves queued inputs, then lets go.
async fn drive(
    state: AppState,
    lease: RunLease,
    agent: Agent,
    mut revision: i64,
    first: ReplyInput,
    cancel: CancellationToken,
) {
    let session_id = lease.session_id.clone();
    let renewing = CancellationToken::new();
    tokio::spawn(keep_lease(state.clone(), lease.clone(), renewing.clone()));
    let mut next = Some(first);
    while let Some(input) = next.take() {
        let mut ended = false;
        let outcome = run_once(
            &state,
            &session_id,
            &agent,
            &mut revision,
            input,
            &cancel,
            &mut ended,
        )
        .await;
        if let Err(e) = outcome {
            tracing::error!(session_id, error = %e, "chat run failed");
            if !ended {
                publish_failure(&state, &session_id, &agent, &e).await;
            }
        }
        if cancel.is_cancelled() {
            break;
        }
        next = next_queued(&state, &session_id).await;
    }
    renewing.cancel();
    state.runs().remove(&session_id);
    if let Err(e) = state.bus().unlock(&lease).await {
        tracing::error!(session_id, error = %e, "releasing the run lock failed");
    }
}

/// The next queued input that still parses.
async fn next_queued(state: &AppState, session_id: &str) -> Option<ReplyInput> {
    loop {
        let raw = match state.bus().pop_inbox(session_id).await {
            Ok(Some(raw)) => raw,
            Ok(None) => return None,
            Err(e) => {
                tracing::error!(session_id, error = %e, "reading the inbox failed");
                return None;
            }
        };
        match parse_input(Some(raw)) {
            Ok(ChatInput::Confirm(e)) => return Some(e.into()),
            Ok(ChatInput::External(e)) => return Some(e.into()),
            Ok(ChatInput::Msgs(m)) => return Some(ReplyInput::Msgs(m)),
            Ok(ChatInput::Continue) => return Some(ReplyInput::Continue),
            Err(e) => tracing::warn!(session_id, error = %e, "dropping a malformed queued input"),
        }
    }
}

/// Renews the lease every third of its lifetime until `done`.
async fn keep_lease(state: AppState, lease: RunLease, done: CancellationToken) {
    let ttl = state.config().lock_ttl;
    loop {
        tokio::select! {
            () = done.cancelled() => return,
            () = tokio::time::sleep(ttl / 3) => {}
        }
        match state.bus().renew(&lease, ttl).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::error!(session_id = lease.session_id, "the run lock was lost");
                return;
            }
            Err(e) => tracing::warn!(session_id = lease.session_id, error = %e, "renewing failed"),
        }
    }
}

/// Ends the stream of a run that failed outside the agent (storage, bus)
/// with an error `REPLY_END`, so subscribers are not left waiting.
async fn publish_failure(state: &AppState, session_id: &str, agent: &Agent, message: &str) {
    let reply_id = agent.state().await.reply_context.reply_id;
    let end = ReplyEndEvent::new(
        session_id.to_owned(),
        reply_id,
        ReplyFinishedReason::Error,
        Some(ErrorInfo::new(ErrorType::Internal, message)),
    );
    let event = AgentEvent::from(end);
    match to_python_json(&event) {
        Ok(payload) => {
            if let Err(e) = state.bus().publish(session_id, payload.into()).await {
                tracing::error!(session_id, error = %e, "publishing the failure failed");
            }
        }
        Err(e) => tracing::error!(session_id, error = %e, "serialising the failure failed"),
    }
}

/// One reply: new messages are stored with the state before the model is
/// called (a crash keeps them), events are published as they come, the
/// reply message and state are committed at the end. `ended` turns true
/// once the reply's last event is published.
async fn run_once(
    state: &AppState,
    session_id: &str,
    agent: &Agent,
    revision: &mut i64,
    input: ReplyInput,
    cancel: &CancellationToken,
    ended: &mut bool,
) -> Result<(), String> {
    let bus = state.bus();
    bus.begin_run(session_id).await.map_err(|e| e.to_string())?;
    let mut pending: Vec<Value> = Vec::new();
    let input = match input {
        ReplyInput::Msgs(msgs) if !agent.state().await.is_parked() => {
            let json = to_values(&msgs)?;
            agent.observe(msgs).await.map_err(|e| e.to_string())?;
            commit(state, session_id, agent, revision, &json).await?;
            ReplyInput::Continue
        }
        ReplyInput::Msgs(msgs) => {
            pending = to_values(&msgs)?;
            ReplyInput::Msgs(msgs)
        }
        other => other,
    };
    let mut stream = agent.reply_stream_with(input, None, cancel.child_token());
    while let Some(event) = stream.next().await {
        let last = matches!(
            event,
            AgentEvent::ReplyEnd(_)
                | AgentEvent::RequireUserConfirm(_)
                | AgentEvent::RequireExternalExecution(_)
        );
        let payload = to_python_json(&event).map_err(|e| e.to_string())?;
        bus.publish(session_id, payload.into())
            .await
            .map_err(|e| e.to_string())?;
        *ended |= last;
    }
    if let Some(reply) = agent.state().await.reply_msg() {
        pending.push(serde_json::to_value(reply).map_err(|e| e.to_string())?);
    }
    commit(state, session_id, agent, revision, &pending).await
}

fn to_values<T: serde::Serialize>(items: &[T]) -> Result<Vec<Value>, String> {
    items
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())
}

/// Writes the agent's state and `msgs` if nobody wrote since `revision`.
async fn commit(
    state: &AppState,
    session_id: &str,
    agent: &Agent,
    revision: &mut i64,
    msgs: &[Value],
) -> Result<(), String> {
    let snapshot = serde_json::to_value(agent.state().await).map_err(|e| e.to_string())?;
    *revision = state
        .storage()
        .commit_reply(session_id, *revision, &snapshot, msgs)
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Interrupts the session: cancels its running reply, or closes the reply
/// parked on a confirmation or external result. A no-op when idle.
///
/// # Errors
/// As [`start_run`], for closing a parked reply.
pub(crate) async fn interrupt(
    state: &AppState,
    agent: &AgentRecord,
    session: SessionRecord,
) -> ApiResult<()> {
    if let Some(run) = state.runs().get(&session.id) {
        run.cancel.cancel();
        return Ok(());
    }
    if !agent_state(&session)?.is_parked() {
        return Ok(());
    }
    match start_run(state, agent, session, RunRequest::Interrupt).await {
        // A run started meanwhile (it supersedes the parked reply).
        Err(ApiError::Conflict(_)) => Ok(()),
        other => other,
    }
}
