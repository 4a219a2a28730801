//! Chat runs: take the session's lock, run the reply in the background,
//! publish every event, persist messages and state inside the lock, then
//! serve queued inputs.
//!
//! No queued input is left behind: a run lets go with
//! [`MessageBus::release`](oxiscope_storage::MessageBus::release), which
//! refuses while the inbox holds input, and whoever queues an input tries
//! the lock afterwards and serves the inbox itself if the run has just let
//! go.

use std::sync::Arc;

use futures_util::StreamExt;
use oxiscope_agent::otel::SpanContext;
use oxiscope_agent::{Agent, AgentError, ReplyInput};
use oxiscope_message::{
    AgentEvent, ErrorInfo, ErrorType, ReplyEndEvent, ReplyFinishedReason, ReplyOutcome,
    UserInterruptEvent,
};
use oxiscope_model::DynChatModel;
use oxiscope_storage::{AgentRecord, Release, RunLease, SessionRecord};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::build::build_agent;
use super::input::{ChatInput, next_queued};
use super::journal::{self, Journal};
use super::naming::{self, Namer};
use super::run_slots::{self, RunSlot};
use super::sessions::agent_state;
use super::takeover::OpenRunInfo;
use super::usage::RunTally;
use crate::error::{SessionError, SessionResult};
use crate::inbox::{Origin, Queued};
use crate::to_python_json;
use crate::{ActiveRun, Engine};

#[path = "run_lease.rs"]
mod lease_keeping;
use lease_keeping::{keep_lease, still_holds};

#[path = "run_reply.rs"]
mod reply;
use reply::{commit, run_once};

#[path = "run_error.rs"]
mod run_error;
use run_error::RunError;

/// What to start a run with.
#[derive(Debug)]
pub enum RunRequest {
    /// A user's input and the request's span (the run's spans hang under
    /// it when tracing is on).
    Chat(Box<ChatInput>, Option<SpanContext>),
    /// Close the parked reply.
    Interrupt,
}

/// What submitting an input did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Submitted {
    /// A run started in the background.
    Started,
    /// A run is active: the input waits in the session's inbox and the
    /// active run (or the next) takes it.
    Queued,
}

/// Starts a run of `session` in the background, from the session as stored
/// once the lock is taken (a run may have ended just before).
///
/// # Errors
/// 409 when a run is active and the input is new messages (a resume is
/// queued instead) or nothing is parked for a resume; 429 when a resume
/// finds the session's inbox full, or when the user has
/// `max_concurrent_runs_per_user` chats running; 400 when a resume names
/// another reply or the model cannot be built; 404 when the session is
/// gone.
pub async fn start_run(
    state: &Engine,
    agent: &AgentRecord,
    session: SessionRecord,
    request: RunRequest,
) -> SessionResult<Submitted> {
    let ttl = state.config().lock_ttl;
    let Some(lease) = state.bus().try_lock(&session.id, ttl).await? else {
        return match request {
            RunRequest::Chat(input, _) if input.resume_reply_id().is_some() => {
                queue(state, agent, &session, &Queued::new(Origin::User, *input))
                    .await
                    .map(|()| Submitted::Queued)
            }
            _ => Err(SessionError::Conflict(
                "A chat run is already active for this session.".to_owned(),
            )),
        };
    };
    // A chat takes one of the user's run slots; closing a parked reply
    // needs none (the user can always stop what runs).
    let slot = match &request {
        RunRequest::Chat(..) => match run_slots::take_for_chat(state, &session.user_id).await {
            Ok(slot) => Ok(Some(slot)),
            Err(e) => Err(e),
        },
        RunRequest::Interrupt => Ok(None),
    };
    let prepared = match (slot, reload(state, &session).await) {
        (Ok(slot), Ok(fresh)) => prepare(state, agent, &fresh, request)
            .await
            .map(|(runner, input)| (runner, input, fresh.revision, slot)),
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    match prepared {
        Ok((runner, input, revision, slot)) => {
            spawn(state, lease, runner, revision, Some(input), slot);
            Ok(Submitted::Started)
        }
        Err(e) => {
            // Inputs may have been queued while this one was checked.
            hand_over(state, agent, &session, lease).await;
            Err(e)
        }
    }
}

/// Queues a resume for the active run, then serves the inbox itself if
/// that run let go in the meantime (it found the inbox empty before the
/// push).
pub async fn queue(
    state: &Engine,
    agent: &AgentRecord,
    session: &SessionRecord,
    item: &Queued,
) -> SessionResult<()> {
    push_inbox(state, session, item).await?;
    wake(state, agent, session).await
}

/// Puts `item` in the session's inbox without waking the session.
///
/// # Errors
/// 429 when the inbox is full.
pub async fn push_inbox(
    state: &Engine,
    session: &SessionRecord,
    item: &Queued,
) -> SessionResult<()> {
    let limit = state.config().inbox_limit;
    if state
        .bus()
        .push_inbox(&session.id, item.to_value()?, limit)
        .await?
    {
        Ok(())
    } else {
        Err(SessionError::Limit(format!(
            "The session's inbox is full: at most {limit} inputs can wait for the active run."
        )))
    }
}

/// Serves the session's inbox in the background unless a run holds the
/// session (that run serves it before letting go).
///
/// # Errors
/// The bus's failure.
pub async fn wake(
    state: &Engine,
    agent: &AgentRecord,
    session: &SessionRecord,
) -> SessionResult<()> {
    if let Some(lease) = state
        .bus()
        .try_lock(&session.id, state.config().lock_ttl)
        .await?
    {
        // Building the agent (its MCP servers may take long to start) runs
        // apart, so a caller (a schedule's tick, a team tool, a chat that
        // queued a resume) never waits on another session's build.
        let (state, agent, session) = (state.clone(), agent.clone(), session.clone());
        tokio::spawn(async move { serve_inbox(&state, &agent, &session, lease).await });
    }
    Ok(())
}

/// Lets go of `lease`, unless inputs are queued: then serves them under it.
pub(super) async fn hand_over(
    state: &Engine,
    agent: &AgentRecord,
    session: &SessionRecord,
    lease: RunLease,
) {
    match state.bus().release(&lease).await {
        Ok(Release::InboxPending) => serve_inbox(state, agent, session, lease).await,
        Ok(Release::Released | Release::NotHeld) => {}
        Err(e) => {
            tracing::error!(session_id = session.id, error = %e, "releasing the run lock failed");
        }
    }
}

/// Holding `lease`, runs the session's queued inputs in the background.
/// When the agent cannot be built, the lock is let go and the inputs wait
/// for the next run.
async fn serve_inbox(
    state: &Engine,
    agent: &AgentRecord,
    session: &SessionRecord,
    lease: RunLease,
) {
    let built = async {
        let fresh = reload(state, session).await?;
        let built = build_agent(state, agent, &fresh, agent_state(&fresh)?, None).await?;
        Ok::<_, SessionError>((Runner::new(&fresh, built), fresh.revision))
    }
    .await;
    match built {
        Ok((runner, revision)) => {
            // Queued inputs are not refused: they take a slot when one is
            // free, and count against the user's chats while they run.
            let slot = run_slots::try_take(state, &session.user_id)
                .await
                .unwrap_or_else(|e| {
                    tracing::warn!(session_id = session.id, error = %e, "cannot take a run slot");
                    None
                });
            spawn(state, lease, runner, revision, None, slot);
        }
        Err(e) => {
            tracing::warn!(session_id = session.id, error = %e, "cannot serve queued inputs");
            if let Err(e) = state.bus().unlock(&lease).await {
                tracing::error!(session_id = session.id, error = %e, "releasing the run lock failed");
            }
        }
    }
}

/// The session as stored now.
async fn reload(state: &Engine, session: &SessionRecord) -> SessionResult<SessionRecord> {
    state
        .storage()
        .get_session(&session.user_id, &session.id)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("Session {} not found", session.id)))
}

/// Checks the input against the stored state and builds the agent.
async fn prepare(
    state: &Engine,
    agent: &AgentRecord,
    session: &SessionRecord,
    request: RunRequest,
) -> SessionResult<(Runner, ReplyInput)> {
    let current = agent_state(session)?;
    let mut trace = None;
    let input = match request {
        RunRequest::Interrupt => ReplyInput::from(UserInterruptEvent::new(
            current.reply_context.reply_id.clone(),
        )),
        RunRequest::Chat(input, span) => {
            trace = span;
            ReplyInput::from(*input)
        }
    };
    // The agent's own check of a resume (nothing is changed by it).
    match current.check_input(&input) {
        Ok(true) => {}
        Ok(false) => return Err(SessionError::Conflict("Nothing to interrupt.".to_owned())),
        Err(e @ AgentError::NothingParked(_)) => return Err(SessionError::Conflict(e.to_string())),
        Err(e) => return Err(SessionError::Invalid(e.to_string())),
    }
    let built = build_agent(state, agent, session, current, trace).await?;
    Ok((Runner::new(session, built), input))
}

/// A session's agent, and what renaming the session needs while its name
/// is still automatic.
struct Runner {
    agent: Agent,
    namer: Option<Namer>,
    /// The session's owner, whose usage the runs add to.
    user_id: String,
}

impl Runner {
    fn new(session: &SessionRecord, (agent, model): (Agent, Arc<dyn DynChatModel>)) -> Self {
        let namer = crate::spec::SessionSpec::of(session)
            .naming_auto()
            .then(|| Namer {
                user_id: session.user_id.clone(),
                model,
            });
        Self {
            agent,
            namer,
            user_id: session.user_id.clone(),
        }
    }
}

/// Runs `first` (if any), then the queued inputs, under `lease`.
fn spawn(
    state: &Engine,
    lease: RunLease,
    runner: Runner,
    revision: i64,
    first: Option<ReplyInput>,
    slot: Option<RunSlot>,
) {
    let cancel = state.shutdown_token().child_token();
    let mut runs = state.runs();
    let task = tokio::spawn(drive(
        state.clone(),
        lease.clone(),
        runner,
        revision,
        first,
        cancel.clone(),
        slot,
    ));
    runs.insert(
        lease.session_id,
        ActiveRun {
            cancel,
            task: Some(task),
        },
    );
}

/// The background task: runs, then serves queued inputs until the inbox
/// is empty at release, then lets go. Interrupted, it lets go at once; the
/// queued inputs wait for the next run.
async fn drive(
    state: Engine,
    lease: RunLease,
    mut runner: Runner,
    mut revision: i64,
    mut next: Option<ReplyInput>,
    cancel: CancellationToken,
    // Held until the run lets go of the session.
    _slot: Option<RunSlot>,
) {
    let session_id = lease.session_id.clone();
    loop {
        let renewing = CancellationToken::new();
        tokio::spawn(keep_lease(
            state.clone(),
            lease.clone(),
            renewing.clone(),
            cancel.clone(),
        ));
        // Renewal stops with this task however it ends: a run task that
        // panicked or was aborted must not hold the session's lock for
        // ever (another replica takes the run over once it expires).
        let renewing = renewing.drop_guard();
        serve(
            &state,
            &lease,
            &mut runner,
            &mut revision,
            next.take(),
            &cancel,
        )
        .await;
        drop(renewing);
        let released = if cancel.is_cancelled() {
            state.bus().unlock(&lease).await.map(|_| Release::Released)
        } else {
            state.bus().release(&lease).await
        };
        match released {
            // An input was queued after the inbox was last found empty.
            Ok(Release::InboxPending) => {}
            Ok(Release::Released | Release::NotHeld) => break,
            Err(e) => {
                tracing::error!(session_id, error = %e, "releasing the run lock failed");
                break;
            }
        }
    }
    // A run that started since the release has its own entry.
    let mut runs = state.runs();
    let this = tokio::task::try_id();
    let ours = runs
        .get(&session_id)
        .is_some_and(|run| run.task.as_ref().is_none_or(|task| Some(task.id()) == this));
    if ours {
        runs.remove(&session_id);
    }
}

/// Runs `first` (if any), then queued inputs until the inbox is empty or
/// the run is interrupted.
async fn serve(
    state: &Engine,
    lease: &RunLease,
    runner: &mut Runner,
    revision: &mut i64,
    first: Option<ReplyInput>,
    cancel: &CancellationToken,
) {
    let session_id = lease.session_id.as_str();
    let mut next = first;
    loop {
        let input = match next.take() {
            Some(input) => input,
            None => match next_queued(state, session_id).await {
                Some(input) => input,
                None => return,
            },
        };
        if let ReplyInput::Msgs(msgs) = &input
            && super::deferred::hint_only(msgs)
        {
            // A hint for a parked reply waits in its state for the resumed
            // reply instead of closing it.
            if runner.agent.state().await.is_parked() {
                super::deferred::defer(&runner.agent, msgs).await;
                if let Err(e) = commit(state, session_id, &runner.agent, revision, &[]).await {
                    tracing::error!(session_id, error = %e, "keeping a hint for the parked reply failed");
                    return;
                }
                continue;
            }
            // Replies started by hints alone (team messages, background
            // results) are bounded: by the user's token quota, and in
            // number between two user inputs, so agents messaging each
            // other cannot run for ever.
            if let Err(why) =
                super::deferred::admit_hint_run(state, &runner.user_id, &runner.agent).await
            {
                // Kept for the next reply the user starts, not lost.
                tracing::warn!(
                    session_id,
                    "a hint starts no reply ({why}); kept for the next one"
                );
                super::deferred::defer(&runner.agent, msgs).await;
                if let Err(e) = commit(state, session_id, &runner.agent, revision, &[]).await {
                    tracing::error!(session_id, error = %e, "keeping a hint for the next reply failed");
                    return;
                }
                continue;
            }
        } else if let ReplyInput::Msgs(_) = &input {
            super::deferred::user_turn(&runner.agent).await;
        }
        let mut tally = RunTally::start(state, &runner.user_id, session_id);
        // The failure is reported as text from here on (log, stream).
        let outcome = run_once(
            state, session_id, runner, revision, input, cancel, &mut tally,
        )
        .await
        .map_err(|e| e.to_string());
        let agent = &runner.agent;
        let ended = tally.ended;
        tally.finish(state, outcome.is_err()).await;
        match outcome {
            Ok(true) => name_session(state, session_id, runner).await,
            // A team member's turn that did not complete: its leader is told.
            Ok(false) => {
                super::team::turn_not_completed(state, &runner.user_id, session_id, agent, None)
                    .await;
            }
            Err(e) => {
                tracing::error!(session_id, error = %e, "chat run failed");
                if !still_holds(state, lease).await {
                    // Another replica took the session over (its commit
                    // fenced ours off) and ends the reply, or will.
                    tracing::warn!(
                        session_id,
                        "the run lost its lock; the reply is left to the replica that takes it over"
                    );
                    return;
                }
                if !ended {
                    publish_failure(state, session_id, agent, &e).await;
                }
                let failure = Some(e.clone());
                super::team::turn_not_completed(state, &runner.user_id, session_id, agent, failure)
                    .await;
            }
        }
        // The reply's last event is out: nobody needs to end it any more.
        if let Err(e) = state.bus().close_run(session_id).await {
            tracing::warn!(session_id, error = %e, "closing the open-run record failed");
        }
        journal::clear(state, session_id).await;
        if cancel.is_cancelled() {
            return;
        }
    }
}

/// After a completed reply, names the session in the background from its
/// opening message, once, if its name is still automatic; a conversation
/// that opens without text waits for a later reply.
async fn name_session(state: &Engine, session_id: &str, runner: &mut Runner) {
    if runner.namer.is_none() {
        return;
    }
    let Some(opening) = naming::opening_text(&runner.agent.state().await) else {
        return;
    };
    if let Some(namer) = runner.namer.take() {
        tokio::spawn(naming::rename(
            state.clone(),
            namer,
            session_id.to_owned(),
            opening,
        ));
    }
}

/// Ends the stream of a run that failed outside the agent (storage, bus)
/// with an error `REPLY_END`, so subscribers are not left waiting.
async fn publish_failure(state: &Engine, session_id: &str, agent: &Agent, message: &str) {
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
            let limit = state.config().replay_limit;
            if let Err(e) = state.bus().publish(session_id, payload.into(), limit).await {
                tracing::error!(session_id, error = %e, "publishing the failure failed");
            }
        }
        Err(e) => tracing::error!(session_id, error = %e, "serialising the failure failed"),
    }
}

/// Forgets a deleted session: interrupts its run in this process and drops
/// everything the bus keeps for it (replay log, inbox, wakeup, lock). A
/// run that publishes while it stops leaves a replay log the bus drops
/// once idle.
///
/// # Errors
/// The bus's failure.
pub async fn forget_session(state: &Engine, session_id: &str) -> SessionResult<()> {
    if let Some(run) = state.runs().get(session_id) {
        run.cancel.cancel();
    }
    super::offload::cancel_session(state, session_id);
    state.bus().forget_session(session_id).await?;
    journal::clear(state, session_id).await;
    Ok(())
}

/// Interrupts the session: cancels its running reply, or closes the reply
/// parked on a confirmation or external result. A no-op when idle.
///
/// # Errors
/// As [`start_run`], for closing a parked reply.
pub async fn interrupt(
    state: &Engine,
    agent: &AgentRecord,
    session: SessionRecord,
) -> SessionResult<()> {
    // Its background tool calls stop too (each is delivered as
    // interrupted).
    super::offload::cancel_session(state, &session.id);
    if let Some(run) = state.runs().get(&session.id) {
        run.cancel.cancel();
        return Ok(());
    }
    if !agent_state(&session)?.is_parked() {
        return Ok(());
    }
    match start_run(state, agent, session, RunRequest::Interrupt).await {
        // A run started meanwhile (it supersedes the parked reply).
        Err(SessionError::Conflict(_)) => Ok(()),
        other => other.map(drop),
    }
}
