//! A reasoning step: the hints before it (structured-output requirement,
//! runtime state, the middlewares' [`PrepHint`]s), one model call through
//! the `on_reasoning` and `on_model_call` onions (with the retry policy and
//! the fallback model, see [`model_call`]), and the decoding of its answer
//! into the reply's events.
//!
//! The step's stream carries its own outcome: block events
//! ([`StepItem::Event`]), then one [`StepItem::End`] with the model's final
//! chunk or its error. Nothing travels beside the stream.

mod model_call;
mod room;
mod translate;

use std::pin::Pin;

use futures_util::StreamExt;
use oxiscope_message::{AgentEvent, ContentBlock, HintBlock, HintBlockEvent, RichContent, stamp};
use oxiscope_model::{ChatResponse, ToolChoice};

use crate::context::CompressOutcome;
use crate::error::AgentError;
use crate::inject::{ContextUsage, Facts};
use crate::middleware::{ReasoningCall, ReasoningNext, ReasoningPrep};
use crate::running::Run;
use crate::state::AgentState;

pub use model_call::{RETRY_BASE_DELAY, RETRY_MAX_DELAY};
pub(crate) use translate::{keep_provider_fields, was_interrupted};

/// The source of hints a middleware adds without naming one.
pub const MIDDLEWARE_HINT_SOURCE: &str = r#"{"label": "System", "sublabel": "Middleware"}"#;

/// The items of a reasoning step's stream, as
/// [`Middleware::on_reasoning`](crate::Middleware::on_reasoning) sees them.
pub type StepStream = Pin<Box<dyn futures_util::Stream<Item = StepItem> + Send>>;

/// An item of a reasoning step.
#[derive(Debug)]
pub enum StepItem {
    /// An event of the step (`MODEL_CALL_START`, the blocks,
    /// `MODEL_CALL_END`); a middleware may change, add or drop them.
    Event(AgentEvent),
    /// How the model call ended; the step's last item. A middleware passes
    /// it on unchanged: a step whose stream has no end fails the reply.
    End(StepEnd),
}

/// How a reasoning step's model call ended: the model's final chunk, or
/// the error that ended the step (after the retries and the fallback).
#[derive(Debug)]
pub struct StepEnd(Result<ChatResponse, AgentError>);

impl StepEnd {
    pub(crate) fn answered(last: ChatResponse) -> Self {
        Self(Ok(last))
    }

    pub(crate) fn failed(error: AgentError) -> Self {
        Self(Err(error))
    }

    /// The model's final chunk (finished reason, usage, full blocks).
    #[must_use]
    pub fn response(&self) -> Option<&ChatResponse> {
        self.0.as_ref().ok()
    }

    /// The error that ended the step.
    #[must_use]
    pub fn error(&self) -> Option<&AgentError> {
        self.0.as_ref().err()
    }
}

/// A hint a middleware adds before a reasoning step
/// ([`ReasoningPrep::hints`]).
///
/// By default it is recorded in the reply (and so stays in the context)
/// and streamed as a `HINT_BLOCK` event. With `persist` off it is added to
/// this one model request only; with `emit_event` off the consumer gets no
/// event. Only a hint that is both persisted and emitted keeps the reply
/// message equal to the one rebuilt from the stream.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PrepHint {
    /// What the model reads.
    pub hint: RichContent,
    /// The hint block's `source` (how a UI labels it).
    pub source: Option<String>,
    /// Whether the consumer gets a `HINT_BLOCK` event.
    pub emit_event: bool,
    /// Whether the hint is recorded in the reply (else it is only sent
    /// with this step's model request).
    pub persist: bool,
}

impl PrepHint {
    /// A hint from the middleware ([`MIDDLEWARE_HINT_SOURCE`]), recorded
    /// and streamed.
    #[must_use]
    pub fn new(hint: impl Into<RichContent>) -> Self {
        Self {
            hint: hint.into(),
            source: Some(MIDDLEWARE_HINT_SOURCE.to_owned()),
            emit_event: true,
            persist: true,
        }
    }

    /// Sets the block's source.
    #[must_use]
    pub fn with_source(mut self, source: Option<String>) -> Self {
        self.source = source;
        self
    }

    /// Sets whether the consumer gets a `HINT_BLOCK` event.
    #[must_use]
    pub fn with_emit_event(mut self, emit: bool) -> Self {
        self.emit_event = emit;
        self
    }

    /// Sets whether the hint is recorded in the reply.
    #[must_use]
    pub fn with_persist(mut self, persist: bool) -> Self {
        self.persist = persist;
        self
    }
}

impl From<String> for PrepHint {
    fn from(text: String) -> Self {
        Self::new(RichContent::Text(text))
    }
}

impl From<&str> for PrepHint {
    fn from(text: &str) -> Self {
        Self::new(RichContent::Text(text.to_owned()))
    }
}

impl Run<'_> {
    /// One reasoning step: manage the context, add the hints, call the
    /// model and stream its answer into the reply. Returns whether the
    /// model answered without calling tools.
    pub(crate) async fn reason(
        &mut self,
        state: &mut AgentState,
        choice: Option<ToolChoice>,
    ) -> Result<bool, AgentError> {
        let outcome = self.manage_context(state).await?;
        if self.cancel.is_cancelled() {
            // Interrupted while compressing: the loop ends the reply.
            return Ok(false);
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
        let last = match self.call_model(state, choice).await {
            // Interrupted while the call failed or waited to retry: the
            // loop ends the reply as interrupted.
            Err(_) if self.cancel.is_cancelled() => return Ok(false),
            other => other?,
        };
        state.reply_context.cur_iter += 1;
        if was_interrupted(&last) {
            self.cancel.cancel();
        }
        // Judged by what reached the reply (a middleware may drop a call).
        Ok(self.reply().tool_calls().count() == calls_before)
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
        let hint = PrepHint::new(RichContent::Text(text))
            .with_source(Some(self.inner.injection.injection_source.clone()))
            .with_emit_event(self.inner.injection.emit_hint_event);
        self.add_hint(hint).await
    }

    /// Adds a persisted hint to the reply, streamed when `emit_event`.
    pub(crate) async fn add_hint(&mut self, hint: PrepHint) -> Result<(), AgentError> {
        let event: AgentEvent =
            HintBlockEvent::new(self.reply_id(), stamp::new_id(), hint.source, hint.hint).into();
        match (hint.persist, hint.emit_event) {
            (true, true) => self.emit(event).await,
            (true, false) => crate::emit::apply_event(self.reply(), &event)
                .map(|_| ())
                .map_err(|e| AgentError::Internal(e.to_string())),
            (false, true) => {
                self.em.send(event).await;
                Ok(())
            }
            (false, false) => Ok(()),
        }
    }

    /// One model call through the middlewares' `on_reasoning`: its events
    /// are applied to the reply and streamed; returns the model's final
    /// chunk.
    pub(crate) async fn call_model(
        &mut self,
        state: &mut AgentState,
        choice: Option<ToolChoice>,
    ) -> Result<ChatResponse, AgentError> {
        let (choice, transient) = self.prepare_reasoning(state, choice).await?;
        self.refresh_tools(state);
        let mut events = {
            // Hints for this request only go into a copy of the prompt.
            let with_hints = (!transient.is_empty()).then(|| {
                let mut msgs = self.prompt.clone();
                if let Some(reply) = msgs.last_mut() {
                    reply.content.extend(transient);
                }
                msgs
            });
            // A reply with nothing in it yet is not sent (providers reject
            // an empty assistant turn).
            let upto = self.prompt.len() - usize::from(self.reply_is_empty());
            let room =
                room::Room::left_in(&self.prompt[self.prompt.len() - 1], self.inner.reply_limits);
            let core = model_call::ModelStep {
                inner: self.inner,
                room,
                messages: with_hints.as_deref().unwrap_or(&self.prompt[..upto]),
                tools: self.tools.schemas(),
                reply_id: self.reply_id(),
                cancel: self.cancel.clone(),
            };
            ReasoningNext::new(&self.inner.middlewares, &core)
                .run(ReasoningCall {
                    tool_choice: choice,
                })
                .await
        };
        let mut end = None;
        while let Some(item) = events.next().await {
            let event = match item {
                StepItem::Event(event) => event,
                StepItem::End(e) => {
                    end = Some(e);
                    continue;
                }
            };
            if let Err(e) = crate::emit::apply_event(self.reply(), &event) {
                tracing::warn!(error = %e, "dropping an event that does not fit the reply");
                continue;
            }
            self.observe(&event);
            self.em.send(event).await;
        }
        drop(events);
        let StepEnd(outcome) = end.ok_or_else(|| {
            AgentError::Internal("the reasoning step ended without the model's answer".to_owned())
        })?;
        let last = outcome?;
        keep_provider_fields(self.reply(), &last);
        Ok(last)
    }

    /// The middlewares' `on_prepare_reasoning` (their step starts with the
    /// hints an `on_reply_end` asked for): persisted hints are added to the
    /// reply; returns the tool choice they leave and the hint
    /// blocks for this request only.
    async fn prepare_reasoning(
        &mut self,
        state: &AgentState,
        choice: Option<ToolChoice>,
    ) -> Result<(Option<ToolChoice>, Vec<ContentBlock>), AgentError> {
        if self.inner.middlewares.is_empty() && self.next_hints.is_empty() {
            return Ok((choice, Vec::new()));
        }
        let reply_id = self.reply_id();
        let inner = self.inner;
        let mut step = ReasoningPrep {
            reply_id: &reply_id,
            cur_iter: state.reply_context.cur_iter,
            tool_choice: choice,
            hints: std::mem::take(&mut self.next_hints),
            middle_context: &mut self.middle,
        };
        for m in &inner.middlewares {
            m.on_prepare_reasoning(&mut step).await;
        }
        let ReasoningPrep {
            tool_choice, hints, ..
        } = step;
        let mut transient = Vec::new();
        for hint in hints {
            if !hint.persist {
                let block = HintBlock::new(hint.hint.clone(), hint.source.clone());
                transient.push(ContentBlock::Hint(block));
            }
            self.add_hint(hint).await?;
        }
        Ok((tool_choice, transient))
    }
}
