//! Starting a reply from its input: a new reply, the resumption of the
//! parked one, or its interruption. The input is checked first
//! ([`check`]), so a refused input changes nothing.

use oxiscope_message::{
    AgentEvent, ContentBlock, Id, Msg, ReplyFinishedReason, ReplyStartEvent, Role, ToolCallState,
    ToolResultBlock, ToolResultState, stamp,
};
use serde_json::Value;

use crate::agent::{Inner, ReplyInput};
use crate::emit::Emitter;
use crate::error::AgentError;
use crate::reply::INTERRUPTED_RESULT;
use crate::state::{AgentState, Awaiting, ReplyContext, pending_calls};

/// What the input started.
#[derive(Debug)]
pub(crate) enum Begun {
    /// No reply: an interrupt with nothing (or another reply) parked.
    Nothing,
    /// Refused before anything changed: the reply id to report and why.
    Refused(String, AgentError),
    /// `REPLY_START` is out; the reply's loop runs.
    Run,
    /// `REPLY_START` is out; the parked reply is interrupted.
    Interrupt,
    /// `REPLY_START` is out, and applying the input failed: the reply ends
    /// with this error.
    Failed(AgentError),
}

/// Checks `input` against the state without changing anything: what
/// [`begin`] would refuse. `Ok(false)`: the input starts no reply (an
/// interrupt with nothing of that id parked).
///
/// # Errors
/// [`AgentError::InvalidInput`]
/// for a malformed message or an answer naming a call that is not waiting,
/// [`AgentError::NothingParked`] or [`AgentError::ReplyMismatch`] for a
/// resume that does not fit the parked reply.
pub(crate) fn check(state: &AgentState, input: &ReplyInput) -> Result<bool, AgentError> {
    match input {
        ReplyInput::Msgs(msgs) => {
            for m in msgs {
                m.validate()
                    .map_err(|e| AgentError::InvalidInput(e.to_string()))?;
            }
            Ok(true)
        }
        ReplyInput::Continue => Ok(true),
        ReplyInput::Confirm(event) => {
            check_parked(
                state,
                Awaiting::Permission,
                &event.reply_id,
                "a confirmation",
            )?;
            crate::hitl::check_confirm(state, event)?;
            Ok(true)
        }
        ReplyInput::External(event) => {
            check_parked(
                state,
                Awaiting::ExternalResult,
                &event.reply_id,
                "external results",
            )?;
            crate::hitl::check_external(state, event)?;
            Ok(true)
        }
        ReplyInput::Interrupt(event) => {
            Ok(state.is_parked() && event.reply_id == state.reply_context.reply_id)
        }
    }
}

impl AgentState {
    /// Checks `input` against this state the way the agent does before a
    /// reply starts, changing nothing: a service checks a stored state with
    /// it before building an agent. `Ok(false)`: the input starts no reply
    /// (an interrupt while that reply is not parked).
    ///
    /// # Errors
    /// [`AgentError::InvalidInput`] for a malformed message or an answer
    /// naming a call that is not waiting; [`AgentError::NothingParked`]
    /// for a resume with nothing parked for it; [`AgentError::ReplyMismatch`]
    /// for a resume naming another reply.
    pub fn check_input(&self, input: &ReplyInput) -> Result<bool, AgentError> {
        check(self, input)
    }
}

/// Checks the input, then applies it: a new reply, or the resumption of
/// the parked one; `REPLY_START` is sent once the input was accepted.
pub(crate) async fn begin(
    inner: &Inner,
    state: &mut AgentState,
    input: ReplyInput,
    schema: Option<Value>,
    em: &mut Emitter,
) -> Begun {
    match check(state, &input) {
        Ok(true) => {}
        Ok(false) => return Begun::Nothing,
        Err(e) => {
            // The refusal answers the reply the input names (a new id for
            // messages).
            let reply_id = match &input {
                ReplyInput::Confirm(event) => event.reply_id.clone(),
                ReplyInput::External(event) => event.reply_id.clone(),
                ReplyInput::Interrupt(event) => event.reply_id.clone(),
                ReplyInput::Msgs(_) | ReplyInput::Continue => stamp::new_id(),
            };
            return Begun::Refused(reply_id, e);
        }
    }
    let applied = match input {
        ReplyInput::Msgs(msgs) => {
            close_parked_silently(state);
            state.context.extend(msgs);
            em.send(new_reply(inner, state, schema)).await;
            Ok(())
        }
        ReplyInput::Continue => {
            if state.is_parked() {
                send_start(inner, state, em).await;
            } else {
                em.send(new_reply(inner, state, schema)).await;
            }
            Ok(())
        }
        ReplyInput::Confirm(event) => {
            send_start(inner, state, em).await;
            crate::hitl::apply_confirm(state, &event, em).await
        }
        ReplyInput::External(event) => {
            send_start(inner, state, em).await;
            crate::hitl::apply_external(state, &event, em).await
        }
        ReplyInput::Interrupt(_) => {
            send_start(inner, state, em).await;
            return Begun::Interrupt;
        }
    };
    match applied {
        Ok(()) => Begun::Run,
        Err(e) => Begun::Failed(e),
    }
}

/// The `REPLY_START` of the state's reply.
pub(crate) fn start_event(inner: &Inner, session_id: &str, reply_id: &str) -> AgentEvent {
    ReplyStartEvent::new(
        session_id.to_owned(),
        reply_id.to_owned(),
        inner.name.clone(),
        Role::Assistant,
    )
    .into()
}

async fn send_start(inner: &Inner, state: &AgentState, em: &mut Emitter) {
    let event = start_event(inner, &state.session_id, &state.reply_context.reply_id);
    em.send(event).await;
}

fn check_parked(
    state: &AgentState,
    wanted: Awaiting,
    reply_id: &str,
    what: &'static str,
) -> Result<(), AgentError> {
    if state.awaiting() != Some(wanted) {
        return Err(AgentError::NothingParked(what));
    }
    if reply_id != state.reply_context.reply_id {
        return Err(AgentError::ReplyMismatch {
            expected: state.reply_context.reply_id.clone(),
            got: reply_id.to_owned(),
        });
    }
    Ok(())
}

/// Opens a new reply in the state; returns its `REPLY_START` (the message
/// takes the event's time, as [`new_reply_msg`] does).
fn new_reply(inner: &Inner, state: &mut AgentState, schema: Option<Value>) -> AgentEvent {
    let reply_id = stamp::new_id();
    state.reply_context = ReplyContext {
        reply_id: reply_id.clone(),
        cur_iter: 0,
        structured_schema: schema,
        structured_output: None,
    };
    let event = start_event(inner, &state.session_id, &reply_id);
    if let AgentEvent::ReplyStart(start) = &event {
        state.context.push(new_reply_msg(start));
    }
    event
}

/// The empty reply message a `REPLY_START` opens, as the agent creates it
/// (its time is the event's); apply the reply's events to it with
/// [`apply_event`](crate::apply_event).
#[must_use]
pub fn new_reply_msg(start: &ReplyStartEvent) -> Msg {
    let mut msg = Msg::reply(start.name.clone(), start.reply_id.clone());
    msg.created_at.clone_from(&start.created_at);
    msg
}

/// A new message arrived while a reply was parked: the parked calls are
/// closed as interrupted so the context stays valid for every provider.
fn close_parked_silently(state: &mut AgentState) {
    if !state.is_parked() {
        return;
    }
    let Some(index) = state.reply_index() else {
        return;
    };
    let msg = &mut state.context[index];
    let pending: Vec<(Id, String)> = pending_calls(msg)
        .iter()
        .map(|c| (c.id.clone(), c.name.clone()))
        .collect();
    for (id, name) in pending {
        msg.content
            .retain(|b| !matches!(b, ContentBlock::ToolResult(r) if r.id == id));
        for b in &mut msg.content {
            if let ContentBlock::ToolCall(c) = b
                && c.id == id
            {
                c.state = ToolCallState::Finished;
            }
        }
        let result =
            ToolResultBlock::new(id, name, INTERRUPTED_RESULT, ToolResultState::Interrupted);
        msg.content.push(result.into());
    }
    msg.finished_reason = Some(ReplyFinishedReason::Interrupted);
    msg.finished_at = Some(oxiscope_message::Stamp::now());
}
