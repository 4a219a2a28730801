//! One reply, as one straight path: start it from its input
//! ([`crate::start`]), then run rounds — a reasoning step
//! ([`crate::reasoning`]), then the round's tool calls ([`crate::acting`])
//! — until the model answers (and no middleware asks for another round),
//! the reply parks, is interrupted, fails or reaches `max_iters`; then end
//! it. `REPLY_END` is emitted in one place, [`Run::finish`], so a stream
//! has at most one, always last; a parked reply's stream ends with its
//! `REQUIRE_*` event instead.

use std::sync::Arc;

use oxiscope_message::{
    AgentEvent, ErrorInfo, ExceedMaxItersEvent, HintBlockEvent, ReplyEndEvent, ReplyFinishedReason,
    RichContent, ToolCallState, ToolResultState, stamp,
};
use oxiscope_model::ToolChoice;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::{Inner, ReplyInput};
use crate::emit::Emitter;
use crate::error::AgentError;
use crate::middleware::ReplyEndAction;
use crate::reasoning::PrepHint;
use crate::running::Run;
use crate::start::{Begun, start_event};
use crate::state::{AgentState, pending_calls};

/// The text of the tool result given to calls closed by an interruption.
pub(crate) const INTERRUPTED_RESULT: &str =
    "<system-reminder>The tool call has been interrupted by the user.</system-reminder>";

/// How a reply's loop stopped.
#[derive(Debug)]
pub(crate) enum Ending {
    /// The reply ends with this reason (and error).
    Finished(ReplyFinishedReason, Option<ErrorInfo>),
    /// The reply parked, waiting for an answer from outside.
    Parked,
}

/// What runs once the input was accepted.
enum Go {
    Loop,
    Interrupt,
    Fail(AgentError),
}

/// Runs one reply over the agent's state, sending its events to `tx`.
pub(crate) async fn run(
    inner: Arc<Inner>,
    input: ReplyInput,
    schema: Option<Value>,
    tx: mpsc::Sender<AgentEvent>,
    cancel: CancellationToken,
) {
    let mut guard = inner.state.lock().await;
    let state = &mut *guard;
    let mut em = Emitter::new(tx);
    // `stop_on_reject`: a denial in the user's answer ends the reply once
    // the calls the user did allow have run, instead of asking the model.
    let stop_after_tools = inner.react.stop_on_reject
        && matches!(&input, ReplyInput::Confirm(e) if e.confirm_results.iter().any(|r| !r.confirmed));
    let go = match crate::start::begin(&inner, state, input, schema, &mut em).await {
        Begun::Nothing => return,
        Begun::Refused(reply_id, e) => {
            // Refused before anything changed: a well-formed, failed reply
            // of its own, not recorded.
            let session_id = state.session_id.clone();
            em.send(start_event(&inner, &session_id, &reply_id)).await;
            let info = e.to_error_info();
            let end =
                ReplyEndEvent::new(session_id, reply_id, ReplyFinishedReason::Error, Some(info));
            em.send(end.into()).await;
            return;
        }
        Begun::Run => Go::Loop,
        Begun::Interrupt => Go::Interrupt,
        Begun::Failed(e) => Go::Fail(e),
    };
    let mut run = Run::open(&inner, state, em, cancel).await;
    let outcome = match go {
        Go::Loop => run.drive(state, stop_after_tools).await,
        Go::Interrupt => run.interrupted().await,
        Go::Fail(e) => Err(e),
    };
    let ending = match outcome {
        Ok(ending) => ending,
        Err(e) => {
            let info = e.to_error_info();
            if let Err(close) = run
                .close_pending(ToolResultState::Error, &info.message)
                .await
            {
                tracing::error!(error = %close, "closing tool calls after an error failed");
            }
            Ending::Finished(ReplyFinishedReason::Error, Some(info))
        }
    };
    run.finish(state, ending).await;
    run.close(state);
}

impl Run<'_> {
    /// The loop: decide, reason or act, until the reply ends or parks;
    /// with `stop_after_tools` it ends, completed, once no call is left
    /// to run or waiting.
    async fn drive(
        &mut self,
        state: &mut AgentState,
        stop_after_tools: bool,
    ) -> Result<Ending, AgentError> {
        // Whether the last model call answered without calling tools.
        let mut answered = false;
        loop {
            if self.cancel.is_cancelled() || self.em.is_closed() {
                return self.interrupted().await;
            }
            let (runnable, parked) = {
                let pending = pending_calls(self.reply());
                let runnable = pending
                    .iter()
                    .filter(|c| matches!(c.state, ToolCallState::Pending | ToolCallState::Allowed))
                    .count();
                let parked = pending
                    .iter()
                    .any(|c| matches!(c.state, ToolCallState::Asking | ToolCallState::Submitted));
                (runnable, parked)
            };
            if runnable > 0 {
                crate::acting::act(self, state).await?;
                continue;
            }
            if parked {
                return Ok(Ending::Parked);
            }
            if stop_after_tools {
                return Ok(Ending::Finished(ReplyFinishedReason::Completed, None));
            }
            let output_due = state.reply_context.structured_schema.is_some()
                && state.reply_context.structured_output.is_none();
            if (answered && !output_due) || state.reply_context.structured_output.is_some() {
                let Some(hint) = self.another_round(state) else {
                    return Ok(Ending::Finished(ReplyFinishedReason::Completed, None));
                };
                // The round that would have ended reasons again (so a
                // middleware that always asks still meets `max_iters`).
                self.next_hints.push(hint);
                answered = self.reason(state, None).await?;
                continue;
            }
            let max = self.inner.react.max_iters;
            if state.reply_context.cur_iter >= max {
                let wants_output = state.reply_context.structured_schema.is_some();
                let grace = max.saturating_add(self.inner.react.structured_output_grace_iters);
                if wants_output && state.reply_context.cur_iter < grace {
                    // Force the submission within the grace rounds.
                    let forced = ToolChoice::tool(crate::structured::TOOL_NAME);
                    answered = self.reason(state, Some(forced)).await?;
                    continue;
                }
                return self.exceed_max_iters(state).await;
            }
            answered = self.reason(state, None).await?;
        }
    }

    /// The middlewares' `on_reply_end`: the hint of the first that asks for
    /// another round (never beyond `max_iters`).
    fn another_round(&mut self, state: &mut AgentState) -> Option<PrepHint> {
        let inner = self.inner;
        if inner.middlewares.is_empty() || state.reply_context.cur_iter >= inner.react.max_iters {
            return None;
        }
        let reply = self.prompt.last()?;
        // The middlewares' state goes back into `state` for the hook.
        std::mem::swap(&mut state.middle_context, &mut self.middle);
        let hint = inner
            .middlewares
            .iter()
            .find_map(|m| match m.on_reply_end(reply, state) {
                ReplyEndAction::Continue(text) => Some(PrepHint::from(text)),
                ReplyEndAction::Finish => None,
            });
        std::mem::swap(&mut state.middle_context, &mut self.middle);
        hint
    }

    /// `max_iters` reached: one last call without tools asks for a summary.
    async fn exceed_max_iters(&mut self, state: &mut AgentState) -> Result<Ending, AgentError> {
        let max = self.inner.react.max_iters;
        let hint = HintBlockEvent::new(
            self.reply_id(),
            stamp::new_id(),
            Some(r#"{"label": "System", "sublabel": "Max Iterations Reached"}"#.to_owned()),
            RichContent::Text(format!(
                "<system-reminder>The limit of {max} reasoning-acting rounds is reached. Do not \
                 call tools any more: summarise what was done and found, and give your final \
                 answer as text.</system-reminder>"
            )),
        );
        self.emit(hint.into()).await?;
        if let Err(e) = self.call_model(state, Some(ToolChoice::none())).await {
            if self.cancel.is_cancelled() {
                return self.interrupted().await;
            }
            return Err(e);
        }
        let name = self.inner.name.clone();
        self.emit(ExceedMaxItersEvent::new(self.reply_id(), name).into())
            .await?;
        Ok(Ending::Finished(ReplyFinishedReason::ExceedMaxIters, None))
    }

    /// Ends an interrupted reply: unfinished calls get interrupted results.
    async fn interrupted(&mut self) -> Result<Ending, AgentError> {
        self.close_pending(ToolResultState::Interrupted, INTERRUPTED_RESULT)
            .await?;
        Ok(Ending::Finished(ReplyFinishedReason::Interrupted, None))
    }

    /// The one place a reply ends: emits `REPLY_END` for a finished reply
    /// (nothing for a parked one).
    async fn finish(&mut self, state: &AgentState, ending: Ending) {
        let Ending::Finished(reason, error) = ending else {
            tracing::debug!(reply_id = %state.reply_context.reply_id, "reply parked");
            return;
        };
        tracing::debug!(?reason, reply_id = %state.reply_context.reply_id, "reply finished");
        let end = ReplyEndEvent::new(state.session_id.clone(), self.reply_id(), reason, error);
        if let Err(e) = self.emit(end.into()).await {
            tracing::error!(error = %e, "could not record the end of the reply");
        }
    }
}
