//! The reasoning-acting loop of one reply.

use std::sync::Arc;

use oxiscope_message::{
    AgentEvent, ContentBlock, ErrorInfo, ExceedMaxItersEvent, HintBlockEvent, ModelCallStartEvent,
    Msg, ReplyEndEvent, ReplyFinishedReason, ReplyStartEvent, RichContent, Role, ToolCallState,
    ToolResultBlock, ToolResultEndEvent, ToolResultStartEvent, ToolResultState,
    ToolResultTextDeltaEvent, stamp,
};
use std::borrow::Cow;

use oxiscope_model::{ChatResponse, ModelError, ToolChoice};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::{Inner, ReplyInput};
use crate::context::compress::summary_msg;
use crate::context::tokens::TokenLedger;
use crate::context::{CompressOutcome, CompressRequest};
use crate::emit::Emitter;
use crate::error::{AgentError, ContextError};
use crate::gate::{Decision, EndGate};
use crate::inject::{ContextUsage, Facts};
use crate::middleware::{EventStream, ModelCall, ModelNext, ReplyEndAction};
use crate::middleware::{ReasoningCall, ReasoningCore, ReasoningNext, ReasoningPrep};
use crate::reasoning::{Slot, record, translate, was_interrupted};
use crate::state::{AgentState, Awaiting, ReplyContext, pending_calls};
use crate::tool_list::ToolList;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;

/// The text of the tool result given to calls closed by an interruption.
pub(crate) const INTERRUPTED_RESULT: &str =
    "<system-reminder>The tool call has been interrupted by the user.</system-reminder>";

/// The source of hints a middleware adds to continue a reply.
const MIDDLEWARE_HINT_SOURCE: &str = r#"{"label": "System", "sublabel": "Middleware"}"#;

/// How a reply's loop stopped.
#[derive(Debug)]
pub(crate) enum Ending {
    /// The reply ended with this reason.
    Finished(ReplyFinishedReason),
    /// The reply parked, waiting for an answer from outside.
    Parked,
}

/// The working data of one running reply.
pub(crate) struct Run<'a> {
    pub(crate) inner: &'a Inner,
    pub(crate) em: Emitter,
    pub(crate) cancel: CancellationToken,
    /// The model's view: system prompt, summary, then the context; the
    /// reply message is the last element while the reply runs.
    pub(crate) prompt: Vec<Msg>,
    /// How many leading `prompt` messages are not part of the context.
    pub(crate) preamble: usize,
    /// Whether the last model call answered without calling tools.
    pub(crate) answered: bool,
    /// Token counts of the context (locked for the whole reply).
    pub(crate) ledger: tokio::sync::MutexGuard<'a, TokenLedger>,
    /// Tool results already held against `tool_result_limit`.
    pub(crate) checked: std::collections::HashSet<String>,
    /// The newest failing call a tool-failure hint was given for.
    pub(crate) hinted_failure: Option<String>,
    /// Set when `on_reply` middleware may swallow the end of the reply.
    pub(crate) gate: Option<Arc<EndGate>>,
    /// The middlewares' state (the state's `middle_context`, kept here
    /// while the reply runs so every recorded event can update it).
    pub(crate) middle: serde_json::Map<String, Value>,
    /// The tools offered (and the middlewares' tools run) now.
    pub(crate) tools: ToolList,
}

/// Runs one reply over the agent's state, sending its events to `tx`.
pub(crate) async fn run(
    inner: Arc<Inner>,
    input: ReplyInput,
    schema: Option<Value>,
    tx: mpsc::Sender<AgentEvent>,
    cancel: CancellationToken,
    gate: Option<Arc<EndGate>>,
) {
    let mut guard = inner.state.lock().await;
    let state = &mut *guard;
    let mut em = Emitter::new(tx);
    let session_id = state.session_id.clone();

    // 1. Turn the input into a running reply (or answer it at once).
    match begin(&inner, state, input, schema, &mut em).await {
        Ok(Some(Start)) => {}
        Ok(None) => return,
        Err(refused) => {
            let (reply_id, e) = *refused;
            // Refused before anything changed: a well-formed, failed reply.
            em.send(
                ReplyStartEvent::new(
                    session_id.clone(),
                    reply_id.clone(),
                    inner.name.clone(),
                    Role::Assistant,
                )
                .into(),
            )
            .await;
            let end = ReplyEndEvent::new(
                session_id,
                reply_id,
                ReplyFinishedReason::Error,
                Some(e.to_error_info()),
            );
            em.send(end.into()).await;
            return;
        }
    };

    // 2. Work on the context as the model's prompt, without copying it.
    let mut run = Run {
        inner: &inner,
        em,
        cancel,
        prompt: Vec::with_capacity(state.context.len() + 2),
        preamble: 0,
        answered: false,
        ledger: inner.ledger.lock().await,
        checked: std::collections::HashSet::new(),
        hinted_failure: None,
        gate,
        middle: std::mem::take(&mut state.middle_context),
        tools: ToolList::default(),
    };
    // A resumed reply runs the parked calls before any reasoning step.
    run.refresh_tools(state);
    run.prompt.push(inner.system_msg());
    if let Some(summary) = summary_msg(&state.summary) {
        run.prompt.push(summary);
    }
    run.preamble = run.prompt.len();
    run.prompt.append(&mut state.context);

    let outcome = run.drive(state).await;
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
            run.end(state, ReplyFinishedReason::Error, Some(info)).await;
            Ending::Finished(ReplyFinishedReason::Error)
        }
    };
    if let Ending::Finished(reason) = &ending {
        tracing::debug!(?reason, reply_id = %state.reply_context.reply_id, "reply finished");
    }
    state.context = run.prompt.split_off(run.preamble);
    state.middle_context = std::mem::take(&mut run.middle);
}

/// An input refused before anything changed: the reply id to report and why.
type Refused = Box<(String, AgentError)>;

/// A reply is ready to run.
pub(crate) struct Start;

/// Applies the input: a new reply, or the resumption of the parked one.
/// `Ok(None)` means there is nothing to run (an interrupt on an idle agent,
/// or an interrupt that closed the parked reply).
async fn begin(
    inner: &Inner,
    state: &mut AgentState,
    input: ReplyInput,
    schema: Option<Value>,
    em: &mut Emitter,
) -> Result<Option<Start>, Refused> {
    let session_id = state.session_id.clone();
    let start_event = |reply_id: &str| -> AgentEvent {
        ReplyStartEvent::new(
            session_id.clone(),
            reply_id.to_owned(),
            inner.name.clone(),
            Role::Assistant,
        )
        .into()
    };
    match input {
        ReplyInput::Msgs(msgs) => {
            for m in &msgs {
                m.validate().map_err(|e| {
                    Box::new((stamp::new_id(), AgentError::InvalidInput(e.to_string())))
                })?;
            }
            close_parked_silently(state);
            state.context.extend(msgs);
            new_reply(inner, state, schema);
            em.send(start_event(&state.reply_context.reply_id)).await;
            Ok(Some(Start))
        }
        ReplyInput::Continue => {
            if state.is_parked() {
                em.send(start_event(&state.reply_context.reply_id)).await;
                return Ok(Some(Start));
            }
            new_reply(inner, state, schema);
            em.send(start_event(&state.reply_context.reply_id)).await;
            Ok(Some(Start))
        }
        ReplyInput::Confirm(event) => {
            check_parked(
                state,
                Awaiting::Permission,
                &event.reply_id,
                "a confirmation",
            )?;
            em.send(start_event(&event.reply_id)).await;
            crate::hitl::apply_confirm(state, &event, em)
                .await
                .map_err(|e| Box::new((event.reply_id.clone(), e)))?;
            Ok(Some(Start))
        }
        ReplyInput::External(event) => {
            check_parked(
                state,
                Awaiting::ExternalResult,
                &event.reply_id,
                "external results",
            )?;
            em.send(start_event(&event.reply_id)).await;
            crate::hitl::apply_external(state, &event, em)
                .await
                .map_err(|e| Box::new((event.reply_id.clone(), e)))?;
            Ok(Some(Start))
        }
        ReplyInput::Interrupt(event) => {
            if !state.is_parked() || event.reply_id != state.reply_context.reply_id {
                return Ok(None);
            }
            em.send(start_event(&event.reply_id)).await;
            crate::hitl::interrupt_parked(state, em)
                .await
                .map_err(|e| Box::new((event.reply_id.clone(), e)))?;
            Ok(None)
        }
    }
}

fn check_parked(
    state: &AgentState,
    wanted: Awaiting,
    reply_id: &str,
    what: &'static str,
) -> Result<(), Refused> {
    if state.awaiting() != Some(wanted) {
        return Err(Box::new((
            reply_id.to_owned(),
            AgentError::NothingParked(what),
        )));
    }
    if reply_id != state.reply_context.reply_id {
        return Err(Box::new((
            reply_id.to_owned(),
            AgentError::ReplyMismatch {
                expected: state.reply_context.reply_id.clone(),
                got: reply_id.to_owned(),
            },
        )));
    }
    Ok(())
}

fn new_reply(inner: &Inner, state: &mut AgentState, schema: Option<Value>) {
    let reply_id = stamp::new_id();
    state.reply_context = ReplyContext {
        reply_id: reply_id.clone(),
        cur_iter: 0,
        structured_schema: schema,
        structured_output: None,
    };
    state.context.push(Msg::reply(inner.name.clone(), reply_id));
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
    let pending: Vec<(String, String)> = pending_calls(msg)
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
    msg.finished_at = Some(stamp::now());
}

impl Run<'_> {
    /// The reply message (the last prompt element).
    pub(crate) fn reply(&mut self) -> &mut Msg {
        let last = self.prompt.len() - 1;
        &mut self.prompt[last]
    }

    fn reply_is_empty(&self) -> bool {
        self.prompt.last().is_some_and(|m| m.content.is_empty())
    }

    pub(crate) fn reply_id(&self) -> String {
        self.prompt.last().map(|m| m.id.clone()).unwrap_or_default()
    }

    /// Emits an event onto the reply.
    pub(crate) async fn emit(&mut self, event: AgentEvent) -> Result<(), AgentError> {
        let last = self.prompt.len() - 1;
        self.observe(&event);
        self.em.emit(&mut self.prompt[last], event).await
    }

    /// Shows a recorded event to the middlewares' `on_event`.
    fn observe(&mut self, event: &AgentEvent) {
        let inner = self.inner;
        for m in &inner.middlewares {
            m.on_event(event, &mut self.middle);
        }
    }

    /// Runs `f` on the state with the middlewares' state back in it.
    fn with_middle<R>(&mut self, state: &mut AgentState, f: impl FnOnce(&AgentState) -> R) -> R {
        std::mem::swap(&mut state.middle_context, &mut self.middle);
        let out = f(state);
        std::mem::swap(&mut state.middle_context, &mut self.middle);
        out
    }

    /// Asks the middlewares' `list_tools` for the tools offered now.
    fn refresh_tools(&mut self, state: &mut AgentState) {
        let inner = self.inner;
        let mut tools = ToolList::new(inner.tools_for(state));
        if !inner.middlewares.is_empty() {
            self.with_middle(state, |state| {
                for m in &inner.middlewares {
                    m.list_tools(&mut tools, state);
                }
            });
        }
        self.tools = tools;
    }

    /// The loop: decide, reason or act, until the reply ends or parks.
    async fn drive(&mut self, state: &mut AgentState) -> Result<Ending, AgentError> {
        loop {
            if self.cancel.is_cancelled() || self.em.is_closed() {
                return self.interrupted(state).await;
            }
            let (runnable, parked) = {
                let reply = self.reply();
                let pending = pending_calls(reply);
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
                if self.cancel.is_cancelled() {
                    return self.interrupted(state).await;
                }
                continue;
            }
            if parked {
                return Ok(Ending::Parked);
            }
            let output_due = state.reply_context.structured_schema.is_some()
                && state.reply_context.structured_output.is_none();
            if (self.answered && !output_due) || state.reply_context.structured_output.is_some() {
                if let Some(text) = self.another_round(state) {
                    let hint = HintBlockEvent::new(
                        self.reply_id(),
                        stamp::new_id(),
                        Some(MIDDLEWARE_HINT_SOURCE.to_owned()),
                        RichContent::Text(text),
                    );
                    self.emit(hint.into()).await?;
                    self.answered = false;
                    continue;
                }
                if self.end_completed(state).await? {
                    return Ok(Ending::Finished(ReplyFinishedReason::Completed));
                }
                // An `on_reply` middleware swallowed the end: another round.
                self.answered = false;
                continue;
            }
            let max = self.inner.react.max_iters;
            if state.reply_context.cur_iter >= max {
                let wants_output = state.reply_context.structured_schema.is_some();
                let grace = max.saturating_add(self.inner.react.structured_output_grace_iters);
                if wants_output && state.reply_context.cur_iter < grace {
                    // Force the submission within the grace rounds.
                    let forced = ToolChoice::tool(crate::structured::TOOL_NAME);
                    self.reason(state, Some(forced)).await?;
                    continue;
                }
                return self.exceed_max_iters(state).await;
            }
            self.reason(state, None).await?;
        }
    }

    /// Whether a middleware asks for another round before the reply ends
    /// (never beyond `max_iters`).
    fn another_round(&mut self, state: &mut AgentState) -> Option<String> {
        if state.reply_context.cur_iter >= self.inner.react.max_iters {
            return None;
        }
        let reply = self.prompt.last()?;
        // The middlewares' state goes back into `state` for the hook.
        std::mem::swap(&mut state.middle_context, &mut self.middle);
        let text = self
            .inner
            .middlewares
            .iter()
            .find_map(|m| match m.on_reply_end(reply, state) {
                ReplyEndAction::Continue(text) => Some(text),
                ReplyEndAction::Finish => None,
            });
        std::mem::swap(&mut state.middle_context, &mut self.middle);
        text
    }

    /// One reasoning step: inject the runtime state, call the model, stream
    /// its answer into the reply.
    async fn reason(
        &mut self,
        state: &mut AgentState,
        choice: Option<ToolChoice>,
    ) -> Result<(), AgentError> {
        let outcome = self.manage_context(state).await?;
        if self.cancel.is_cancelled() {
            // Interrupted while compressing: the loop ends the reply.
            return Ok(());
        }
        if state.reply_context.cur_iter == 0
            && choice.is_none()
            && state.reply_context.structured_schema.is_some()
        {
            let hint = HintBlockEvent::new(
                self.reply_id(),
                stamp::new_id(),
                Some(crate::structured::HINT_SOURCE.to_owned()),
                RichContent::Text(crate::structured::HINT_TEXT.to_owned()),
            );
            self.emit(hint.into()).await?;
        }
        if choice.is_none() {
            self.inject_runtime_state(state, &outcome).await?;
        }
        let calls_before = self.reply().tool_calls().count();
        let last = self.call_model(state, choice).await?;
        state.reply_context.cur_iter += 1;
        // Judged by what reached the reply (a middleware may drop a call).
        self.answered = self.reply().tool_calls().count() == calls_before;
        if was_interrupted(&last) {
            self.cancel.cancel();
        }
        Ok(())
    }

    /// Before a reasoning step: cut new oversized tool results, drop
    /// images beyond the limit, and compress when above the threshold.
    async fn manage_context(
        &mut self,
        state: &mut AgentState,
    ) -> Result<CompressOutcome, AgentError> {
        self.limit_results(state).await;
        let max_images = usize::try_from(self.inner.context.max_image_num).unwrap_or(usize::MAX);
        let offloader = self.inner.offloader.as_deref();
        let preamble = self.preamble;
        crate::context::limits::limit_images(
            &mut self.prompt[preamble..],
            max_images,
            offloader,
            &state.session_id,
        )
        .await;
        let request = CompressRequest {
            config: Arc::clone(&self.inner.context),
            instructions: None,
            ratio: self.inner.context.trigger_ratio,
        };
        self.compress(state, request).await
    }

    /// Cuts the reply's finished tool results that exceed
    /// `tool_result_limit` (each result is looked at once).
    async fn limit_results(&mut self, state: &AgentState) {
        let limit = usize::try_from(self.inner.context.tool_result_limit).unwrap_or(usize::MAX);
        let offloader = self.inner.offloader.as_deref();
        let last = self.prompt.len() - 1;
        let reply = &mut self.prompt[last];
        for block in &mut reply.content {
            let ContentBlock::ToolResult(result) = block else {
                continue;
            };
            if result.finished_at.is_none() || !self.checked.insert(result.id.clone()) {
                continue;
            }
            // Small results are let through without loading a tokenizer.
            if self.ledger.bounded_by_bytes()
                && crate::context::tokens::rich_bound(&result.output) <= limit
            {
                continue;
            }
            let counter = std::sync::Arc::clone(self.ledger.counter());
            crate::context::limits::limit_tool_result(
                result,
                limit,
                counter.as_ref(),
                offloader,
                &state.session_id,
            )
            .await;
        }
    }

    /// Runs a compression check (through the middlewares) over the context;
    /// the summary call's tokens are reported as a model call of the reply.
    pub(crate) async fn compress(
        &mut self,
        state: &mut AgentState,
        request: CompressRequest,
    ) -> Result<CompressOutcome, AgentError> {
        self.refresh_tools(state);
        let tools = self.tools.schemas().to_vec();
        let mut context = self.prompt.split_off(self.preamble);
        let system = self.prompt.swap_remove(0);
        self.prompt.clear();
        let session_id = state.session_id.clone();
        let result = crate::context::run_compression(
            self.inner,
            &mut context,
            &mut state.summary,
            &mut self.ledger,
            &system,
            &tools,
            &session_id,
            self.cancel.child_token(),
            request,
        )
        .await;
        self.prompt.push(system);
        self.prompt.extend(summary_msg(&state.summary));
        self.preamble = self.prompt.len();
        self.prompt.append(&mut context);
        // The summary calls' tokens count in the reply, also when they failed.
        let usage = match &result {
            Ok(o) => o.usage.clone(),
            Err(ContextError::SummaryFailed { usage, .. }) => usage.as_deref().cloned(),
            Err(_) => None,
        };
        if let Some(usage) = &usage {
            let name = self.inner.model.model_name().to_owned();
            self.emit(ModelCallStartEvent::new(self.reply_id(), name).into())
                .await?;
            let end = oxiscope_message::ModelCallEndEvent::new(
                self.reply_id(),
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_input_tokens,
                usage.cache_creation_input_tokens,
                oxiscope_message::FinishedReason::Completed,
            );
            self.emit(end.into()).await?;
        }
        Ok(result?)
    }

    async fn inject_runtime_state(
        &mut self,
        state: &AgentState,
        outcome: &CompressOutcome,
    ) -> Result<(), AgentError> {
        // While the reply runs, the context lives in `prompt`.
        let context = &self.prompt[self.preamble..];
        let band = self.inner.buffer_start();
        let usage =
            (state.reply_context.cur_iter == 0 && outcome.tokens_after >= band).then(|| {
                let busy = state
                    .tasks_context
                    .tasks
                    .iter()
                    .any(|t| t.state == oxiscope_tool::TaskState::InProgress);
                ContextUsage {
                    tokens: outcome.tokens_after,
                    threshold: outcome.threshold.max(self.inner.threshold()),
                    invite: self.inner.context.compression_tool_enabled && !busy,
                }
            });
        let failure =
            crate::inject::failure_streak(context, self.inner.injection.tool_retries_limit)
                .filter(|f| self.hinted_failure.as_deref() != Some(f.last_id.as_str()));
        let facts = Facts {
            now: chrono::Utc::now(),
            tasks: &state.tasks_context,
            usage,
            failure,
        };
        let Some(text) = crate::inject::runtime_hint(&self.inner.injection, context, &facts) else {
            return Ok(());
        };
        if let Some(f) = facts.failure {
            self.hinted_failure = Some(f.last_id);
        }
        let event: AgentEvent = HintBlockEvent::new(
            self.reply_id(),
            stamp::new_id(),
            Some(self.inner.injection.injection_source.clone()),
            RichContent::Text(text),
        )
        .into();
        if self.inner.injection.emit_hint_event {
            self.emit(event).await
        } else {
            self.reply()
                .append_event(&event)
                .map(|_| ())
                .map_err(|e| AgentError::Internal(e.to_string()))
        }
    }

    /// One model call through the middlewares' `on_reasoning`: its events
    /// are applied to the reply and streamed; returns the model's final
    /// chunk.
    async fn call_model(
        &mut self,
        state: &mut AgentState,
        choice: Option<ToolChoice>,
    ) -> Result<ChatResponse, AgentError> {
        let choice = self.prepare_reasoning(state, choice).await?;
        self.refresh_tools(state);
        let tools = self.tools.schemas().to_vec();
        let slot = Slot::default();
        let mut events = {
            // A reply with nothing in it yet is not sent (providers reject
            // an empty assistant turn).
            let upto = self.prompt.len() - usize::from(self.reply_is_empty());
            let core = ModelStep {
                inner: self.inner,
                messages: &self.prompt[..upto],
                tools: &tools,
                reply_id: self.reply_id(),
                cancel: self.cancel.clone(),
                slot: Arc::clone(&slot),
            };
            ReasoningNext::new(&self.inner.middlewares, &core)
                .run(ReasoningCall {
                    tool_choice: choice,
                })
                .await
        };
        while let Some(event) = events.next().await {
            let last = self.prompt.len() - 1;
            if let Err(e) = self.prompt[last].append_event(&event) {
                tracing::warn!(error = %e, "dropping an event that does not fit the reply");
                continue;
            }
            self.observe(&event);
            self.em.send(event).await;
        }
        drop(events);
        let outcome = std::mem::take(
            &mut *slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if let Some(e) = outcome.error {
            return Err(e);
        }
        let last = outcome.last.ok_or_else(|| {
            AgentError::Internal("the reasoning step ended without the model's answer".to_owned())
        })?;
        crate::reasoning::keep_provider_fields(self.reply(), &last);
        Ok(last)
    }

    /// The middlewares' `on_prepare_reasoning`: their hints are added to the
    /// reply; returns the tool choice they leave.
    async fn prepare_reasoning(
        &mut self,
        state: &AgentState,
        choice: Option<ToolChoice>,
    ) -> Result<Option<ToolChoice>, AgentError> {
        if self.inner.middlewares.is_empty() {
            return Ok(choice);
        }
        let reply_id = self.reply_id();
        let inner = self.inner;
        let mut step = ReasoningPrep {
            reply_id: &reply_id,
            cur_iter: state.reply_context.cur_iter,
            tool_choice: choice,
            hints: Vec::new(),
            middle_context: &mut self.middle,
        };
        for m in &inner.middlewares {
            m.on_prepare_reasoning(&mut step);
        }
        let ReasoningPrep {
            tool_choice, hints, ..
        } = step;
        for text in hints {
            let hint = HintBlockEvent::new(
                reply_id.clone(),
                stamp::new_id(),
                Some(MIDDLEWARE_HINT_SOURCE.to_owned()),
                RichContent::Text(text),
            );
            self.emit(hint.into()).await?;
        }
        Ok(tool_choice)
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
        self.call_model(state, Some(ToolChoice::none())).await?;
        let name = self.inner.name.clone();
        self.emit(ExceedMaxItersEvent::new(self.reply_id(), name).into())
            .await?;
        Ok(self
            .end(state, ReplyFinishedReason::ExceedMaxIters, None)
            .await)
    }

    /// Ends an interrupted reply: unfinished calls get interrupted results.
    async fn interrupted(&mut self, state: &mut AgentState) -> Result<Ending, AgentError> {
        self.close_pending(ToolResultState::Interrupted, INTERRUPTED_RESULT)
            .await?;
        Ok(self
            .end(state, ReplyFinishedReason::Interrupted, None)
            .await)
    }

    /// Gives every tool call without a result a closing result.
    pub(crate) async fn close_pending(
        &mut self,
        result_state: ToolResultState,
        text: &str,
    ) -> Result<(), AgentError> {
        let reply_id = self.reply_id();
        let pending: Vec<(String, String, bool)> = {
            let reply = self.reply();
            pending_calls(reply)
                .iter()
                .map(|c| {
                    let started = reply.tool_results().any(|r| r.id == c.id);
                    (c.id.clone(), c.name.clone(), started)
                })
                .collect()
        };
        for (id, name, started) in pending {
            if !started {
                self.emit(ToolResultStartEvent::new(reply_id.clone(), id.clone(), name).into())
                    .await?;
            }
            let delta =
                ToolResultTextDeltaEvent::new(reply_id.clone(), id.clone(), text.to_owned());
            self.emit(delta.into()).await?;
            self.emit(ToolResultEndEvent::new(reply_id.clone(), id, result_state).into())
                .await?;
        }
        Ok(())
    }

    /// Ends the reply as completed; with `on_reply` middleware, the end
    /// counts only once it reached the consumer. `Ok(false)`: it was
    /// swallowed, and the reply goes on (within `max_iters`).
    async fn end_completed(&mut self, state: &AgentState) -> Result<bool, AgentError> {
        let Some(gate) = self.gate.clone() else {
            self.end(state, ReplyFinishedReason::Completed, None).await;
            return Ok(true);
        };
        let end: AgentEvent = ReplyEndEvent::new(
            state.session_id.clone(),
            self.reply_id(),
            ReplyFinishedReason::Completed,
            None,
        )
        .into();
        gate.sent();
        self.em.send(end.clone()).await;
        let decision = gate.wait(self.em.sender(), &self.cancel).await;
        if decision == Some(Decision::Continue) && !self.cancel.is_cancelled() {
            return Ok(false);
        }
        // Delivered, or nobody is listening any more: the reply ends.
        self.reply()
            .append_event(&end)
            .map_err(|e| AgentError::Internal(e.to_string()))?;
        self.observe(&end);
        Ok(true)
    }

    /// Emits `REPLY_END`.
    pub(crate) async fn end(
        &mut self,
        state: &AgentState,
        reason: ReplyFinishedReason,
        error: Option<ErrorInfo>,
    ) -> Ending {
        let end = ReplyEndEvent::new(state.session_id.clone(), self.reply_id(), reason, error);
        if let Err(e) = self.emit(end.into()).await {
            tracing::error!(error = %e, "could not record the end of the reply");
        }
        Ending::Finished(reason)
    }
}

/// The core of a reasoning step: calls the model (retrying setup failures,
/// then the fallback model) and decodes its answer into events.
struct ModelStep<'a> {
    inner: &'a Inner,
    messages: &'a [Msg],
    tools: &'a [oxiscope_model::ToolSchema],
    reply_id: String,
    cancel: CancellationToken,
    slot: Slot,
}

impl ReasoningCore for ModelStep<'_> {
    fn run(&self, call: ReasoningCall) -> BoxFuture<'_, EventStream> {
        Box::pin(async move {
            let mut prefix: Vec<AgentEvent> = Vec::new();
            let models = std::iter::once(&self.inner.model).chain(self.inner.fallback_model.iter());
            let mut last_error: Option<ModelError> = None;
            for model in models {
                let attempts = self.inner.model_config.max_retries + 1;
                for attempt in 0..attempts {
                    let name = model.model_name().to_owned();
                    prefix.push(ModelCallStartEvent::new(self.reply_id.clone(), name).into());
                    let request = ModelCall {
                        messages: Cow::Borrowed(self.messages),
                        tools: Cow::Borrowed(self.tools),
                        tool_choice: call.tool_choice.clone(),
                        cancel: self.cancel.child_token(),
                    };
                    let next = ModelNext::new(&self.inner.middlewares, model.as_ref());
                    match next.run(request).await {
                        Ok(stream) => {
                            let body =
                                translate(stream, self.reply_id.clone(), Arc::clone(&self.slot));
                            return futures_util::stream::iter(prefix).chain(body).boxed();
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, attempt, "model call failed");
                            // The call never started: close it for the stream.
                            let end = oxiscope_message::ModelCallEndEvent::new(
                                self.reply_id.clone(),
                                0,
                                0,
                                0,
                                0,
                                oxiscope_message::FinishedReason::Interrupted,
                            );
                            prefix.push(end.into());
                            let retry = e.is_retryable() && attempt + 1 < attempts;
                            last_error = Some(e);
                            if !retry {
                                break;
                            }
                        }
                    }
                }
            }
            let error = last_error.map_or_else(
                || AgentError::Internal("no model to call".to_owned()),
                AgentError::Model,
            );
            record(&self.slot, |o| o.error = Some(error));
            futures_util::stream::iter(prefix).boxed()
        })
    }
}
