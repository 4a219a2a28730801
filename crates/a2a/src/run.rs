//! One reply: send the input, translate the answer, end the reply, update
//! the state.

use std::sync::Arc;

use futures_util::StreamExt;
use oxiscope_message::{
    AgentEvent, Msg, ReplyEndEvent, ReplyFinishedReason, ReplyStartEvent, Role, stamp,
};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::Inner;
use crate::client::PayloadStream;
use crate::error::{Error, Result};
use crate::parts::to_parts;
use crate::state::A2AAgentState;
use crate::translate::{Ending, Ids, Translator};
use crate::wire::{Message, TaskState};

/// Sends events to the consumer and applies them to the reply message.
struct Emitter {
    tx: mpsc::Sender<AgentEvent>,
    msg: Msg,
    append_error: Option<String>,
}

impl Emitter {
    async fn emit(&mut self, event: AgentEvent) {
        if let Err(e) = self.msg.append_event(&event)
            && self.append_error.is_none()
        {
            self.append_error = Some(e.to_string());
        }
        // A consumer that went away has cancelled the reply; the rest of the
        // reply only settles the state.
        let _ = self.tx.send(event).await;
    }

    async fn emit_all(&mut self, events: Vec<AgentEvent>) {
        for event in events {
            self.emit(event).await;
        }
    }
}

/// How the exchange with the remote agent stopped.
enum Stop {
    /// The response stream ended.
    Ended,
    /// The reply was interrupted.
    Interrupted,
}

/// Runs one reply; see [`A2AReplyStream`](crate::A2AReplyStream).
///
/// An `Err` input is not sent: the reply ends at once with that error.
pub(crate) async fn run(
    inner: Arc<Inner>,
    input: Result<Vec<Msg>>,
    cancel: CancellationToken,
    tx: mpsc::Sender<AgentEvent>,
) -> Result<Msg> {
    let mut state = inner.state.lock().await;
    let reply_id = stamp::new_id();
    let mut out = Emitter {
        tx,
        msg: Msg::reply(inner.name.clone(), reply_id.clone()),
        append_error: None,
    };
    let start = ReplyStartEvent::new(
        state.session_id.clone(),
        reply_id.clone(),
        inner.name.clone(),
        Role::Assistant,
    );
    out.emit(start.into()).await;

    let mut tr = Translator::new(reply_id.clone(), ids_of(&state));
    let stop = match input {
        Ok(input) => exchange(&inner, &mut state, input, &cancel, &mut tr, &mut out).await,
        Err(e) => Err(e),
    };
    let mut events = Vec::new();
    tr.finish(&mut events);
    out.emit_all(events).await;

    let ids = tr.ids().clone();
    let (reason, result) = settle(stop, tr.ending(), &ids, tr.status_text());
    let keep_task = match (&result, reason) {
        (Ok(()), ReplyFinishedReason::Completed) => {
            ids.task_state.is_some_and(TaskState::awaits_user)
        }
        // A stream cut mid-task, or an interrupt whose cancel the remote side
        // did not confirm: keep the task, the next reply checks on it.
        _ => ids.task_state.is_some_and(|s| !s.is_terminal()),
    };
    state.context_id.clone_from(&ids.context_id);
    if keep_task {
        state.track(ids.task_id.clone(), ids.task_state);
    } else {
        state.track(None, None);
    }

    let result = match (result, out.append_error.take()) {
        (Ok(()), Some(e)) => Err(Error::Internal(format!("inconsistent events: {e}"))),
        (r, _) => r,
    };
    let mut end = ReplyEndEvent::new(
        state.session_id.clone(),
        reply_id,
        if result.is_err() {
            ReplyFinishedReason::Error
        } else {
            reason
        },
        result.as_ref().err().map(Error::to_info),
    );
    let metadata = a2a_metadata(&state);
    drop(state);
    end.metadata = metadata.clone();
    out.emit(end.into()).await;
    out.msg.metadata.extend(metadata);
    result.map(|()| out.msg)
}

fn ids_of(state: &A2AAgentState) -> Ids {
    Ids {
        context_id: state.context_id.clone(),
        task_id: state.task_id.clone(),
        task_state: state.task_state,
    }
}

fn a2a_metadata(state: &A2AAgentState) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(
        "a2a".to_owned(),
        json!({
            "context_id": state.context_id,
            "task_id": state.task_id,
            "task_state": state.task_state,
        }),
    );
    meta
}

/// The finished reason and outcome of an exchange.
fn settle(
    stop: Result<Stop>,
    ending: Ending,
    ids: &Ids,
    status_text: Option<&str>,
) -> (ReplyFinishedReason, Result<()>) {
    let completed = (ReplyFinishedReason::Completed, Ok(()));
    match stop {
        Err(e) => (ReplyFinishedReason::Error, Err(e)),
        Ok(Stop::Interrupted) => (ReplyFinishedReason::Interrupted, Ok(())),
        Ok(Stop::Ended) => match ending {
            Ending::Nothing => (
                ReplyFinishedReason::Error,
                Err(Error::Protocol(
                    "the response ended without any payload".to_owned(),
                )),
            ),
            Ending::Message => completed,
            Ending::Status(s) => match s {
                TaskState::Completed | TaskState::InputRequired | TaskState::AuthRequired => {
                    completed
                }
                TaskState::Canceled => (ReplyFinishedReason::Interrupted, Ok(())),
                TaskState::Failed | TaskState::Rejected => (
                    ReplyFinishedReason::Error,
                    Err(Error::TaskFailed {
                        task_id: ids.task_id.clone(),
                        state: s,
                        message: status_text.map(str::to_owned),
                    }),
                ),
                TaskState::Unspecified
                | TaskState::Submitted
                | TaskState::Working
                | TaskState::Unknown => (
                    ReplyFinishedReason::Error,
                    Err(Error::StreamCut {
                        task_id: ids.task_id.clone(),
                        state: s,
                    }),
                ),
            },
        },
    }
}

/// Sends the input and translates the answer until it ends or the reply is
/// interrupted.
async fn exchange(
    inner: &Inner,
    state: &mut A2AAgentState,
    input: Vec<Msg>,
    cancel: &CancellationToken,
    tr: &mut Translator,
    out: &mut Emitter,
) -> Result<Stop> {
    let observed = inner.take_observed();
    let observed_count = observed.len();
    let mut msgs = observed;
    msgs.extend(input);
    let parts = match to_parts(&msgs) {
        Ok(p) => p,
        Err(e) => {
            inner.restore_observed(msgs.into_iter().take(observed_count).collect());
            return Err(e);
        }
    };
    let restore =
        |msgs: Vec<Msg>| inner.restore_observed(msgs.into_iter().take(observed_count).collect());

    if let Err(e) = check_kept_task(inner, state, cancel).await {
        restore(msgs);
        return Err(e);
    }
    tr.set_ids(ids_of(state));
    let mut message = Message {
        message_id: stamp::new_id(),
        context_id: state.context_id.clone().unwrap_or_default(),
        task_id: state.task_id.clone().unwrap_or_default(),
        role: "ROLE_USER".to_owned(),
        parts,
        metadata: None,
    };
    let opened = tokio::select! {
        biased;
        () = cancel.cancelled() => {
            restore(msgs);
            return Ok(Stop::Interrupted);
        }
        opened = open(inner, &message) => opened,
    };
    let mut payloads = match opened {
        // A kept task the remote side forgot: start a new one.
        Err(Error::Rpc { code, .. })
            if code == Error::TASK_NOT_FOUND && !message.task_id.is_empty() =>
        {
            state.track(None, None);
            tr.set_ids(ids_of(state));
            message.task_id.clear();
            match open(inner, &message).await {
                Ok(p) => p,
                Err(e) => {
                    restore(msgs);
                    return Err(e);
                }
            }
        }
        Err(e) => {
            restore(msgs);
            return Err(e);
        }
        Ok(p) => p,
    };
    drop(msgs);

    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                interrupt(inner, tr).await;
                return Ok(Stop::Interrupted);
            }
            next = payloads.next() => next,
        };
        let Some(payload) = next else {
            return Ok(Stop::Ended);
        };
        let mut events = Vec::new();
        let applied = tr.apply(payload?, &mut events);
        out.emit_all(events).await;
        applied?;
    }
}

/// Opens the response: streamed when the card says so, else one payload.
async fn open(inner: &Inner, message: &Message) -> Result<PayloadStream> {
    if inner.card.streams() {
        inner.rpc.stream(message).await
    } else {
        let payload = inner.rpc.send(message).await?;
        Ok(futures_util::stream::once(async move { Ok(payload) }).boxed())
    }
}

/// Before continuing a task whose last known state is not "waiting for the
/// user", asks the remote side where it stands: a finished or forgotten
/// task is dropped (the message starts a new one), a running one is an
/// error (the message would run it a second time).
async fn check_kept_task(
    inner: &Inner,
    state: &mut A2AAgentState,
    cancel: &CancellationToken,
) -> Result<()> {
    let Some(task_id) = state.task_id.clone() else {
        return Ok(());
    };
    if state.task_state.is_some_and(TaskState::awaits_user) {
        return Ok(());
    }
    let fetched = tokio::select! {
        biased;
        () = cancel.cancelled() => return Ok(()),
        fetched = inner.rpc.get_task(&task_id) => fetched,
    };
    match fetched {
        Ok(task) => {
            let s = task.status.state;
            if s.is_terminal() {
                state.track(None, None);
            } else if s.awaits_user() {
                state.track(Some(task_id), Some(s));
            } else {
                state.track(Some(task_id.clone()), Some(s));
                return Err(Error::TaskStillRunning { task_id, state: s });
            }
            Ok(())
        }
        Err(Error::Rpc { code, .. }) if code == Error::TASK_NOT_FOUND => {
            state.track(None, None);
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Cancels the running remote task (best effort, bounded by the cancel
/// timeout) and records the state the remote side reports.
async fn interrupt(inner: &Inner, tr: &mut Translator) {
    let ids = tr.ids().clone();
    let Some(task_id) = ids.task_id.clone() else {
        return;
    };
    if ids.task_state.is_some_and(TaskState::is_terminal) {
        return;
    }
    let cancelled =
        tokio::time::timeout(inner.cancel_timeout, inner.rpc.cancel_task(&task_id)).await;
    if let Ok(Ok(task)) = cancelled {
        tr.set_ids(Ids {
            task_state: Some(task.status.state),
            ..ids
        });
    }
}
