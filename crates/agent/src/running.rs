//! The working data of a running reply and what every stage does with
//! it: the prompt (system prompt, summary, context, the reply last),
//! emitting an event onto the reply, the middlewares' state and tools.

use oxiscope_message::{
    AgentEvent, Id, Msg, ToolResultEndEvent, ToolResultStartEvent, ToolResultState,
    ToolResultTextDeltaEvent,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::Inner;
use crate::context::compress::summary_msg;
use crate::context::tokens::TokenLedger;
use crate::emit::Emitter;
use crate::error::AgentError;
use crate::reasoning::PrepHint;
use crate::state::{AgentState, pending_calls};
use crate::tool_list::ToolList;

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
    /// Token counts of the context (locked for the whole reply).
    pub(crate) ledger: tokio::sync::MutexGuard<'a, TokenLedger>,
    /// Tool results already held against `tool_result_limit`.
    pub(crate) checked: std::collections::HashSet<String>,
    /// The newest failing call a tool-failure hint was given for.
    pub(crate) hinted_failure: Option<String>,
    /// Hints for the next reasoning step (from `on_reply_end`).
    pub(crate) next_hints: Vec<PrepHint>,
    /// The middlewares' state (the state's `middle_context`, kept here
    /// while the reply runs so every recorded event can update it).
    pub(crate) middle: serde_json::Map<String, Value>,
    /// The tools offered (and the middlewares' tools run) now.
    pub(crate) tools: ToolList,
}

impl<'a> Run<'a> {
    /// Takes the context out of the state as the model's prompt (without
    /// copying it), behind the system prompt and the summary.
    pub(crate) async fn open(
        inner: &'a Inner,
        state: &mut AgentState,
        em: Emitter,
        cancel: CancellationToken,
    ) -> Self {
        let mut run = Run {
            inner,
            em,
            cancel,
            prompt: Vec::with_capacity(state.context.len() + 2),
            preamble: 0,
            ledger: inner.ledger.lock().await,
            checked: std::collections::HashSet::new(),
            hinted_failure: None,
            next_hints: Vec::new(),
            middle: std::mem::take(&mut state.middle_context),
            tools: ToolList::default(),
        };
        run.refresh_tools(state);
        run.prompt.push(inner.system_msg());
        if let Some(summary) = summary_msg(&state.summary) {
            run.prompt.push(summary);
        }
        run.preamble = run.prompt.len();
        run.prompt.append(&mut state.context);
        run
    }

    /// Puts the context and the middlewares' state back into the state.
    pub(crate) fn close(mut self, state: &mut AgentState) {
        state.context = self.prompt.split_off(self.preamble);
        state.middle_context = std::mem::take(&mut self.middle);
    }
}

impl Run<'_> {
    /// The reply message (the last prompt element).
    pub(crate) fn reply(&mut self) -> &mut Msg {
        let last = self.prompt.len() - 1;
        &mut self.prompt[last]
    }

    pub(crate) fn reply_is_empty(&self) -> bool {
        self.prompt.last().is_some_and(|m| m.content.is_empty())
    }

    pub(crate) fn reply_id(&self) -> String {
        self.prompt
            .last()
            .map(|m| m.id.to_string())
            .unwrap_or_default()
    }

    /// Emits an event onto the reply.
    pub(crate) async fn emit(&mut self, event: AgentEvent) -> Result<(), AgentError> {
        let last = self.prompt.len() - 1;
        self.observe(&event);
        self.em.emit(&mut self.prompt[last], event).await
    }

    /// Shows a recorded event to the middlewares' `on_event`.
    pub(crate) fn observe(&mut self, event: &AgentEvent) {
        let inner = self.inner;
        for m in &inner.middlewares {
            m.on_event(event, &mut self.middle);
        }
    }

    /// Runs `f` on the state with the middlewares' state back in it.
    pub(crate) fn with_middle<R>(
        &mut self,
        state: &mut AgentState,
        f: impl FnOnce(&AgentState) -> R,
    ) -> R {
        std::mem::swap(&mut state.middle_context, &mut self.middle);
        let out = f(state);
        std::mem::swap(&mut state.middle_context, &mut self.middle);
        out
    }

    /// Asks the middlewares' `list_tools` for the tools offered now.
    pub(crate) fn refresh_tools(&mut self, state: &mut AgentState) {
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

    /// Gives every tool call without a result a closing result.
    pub(crate) async fn close_pending(
        &mut self,
        result_state: ToolResultState,
        text: &str,
    ) -> Result<(), AgentError> {
        let reply_id = self.reply_id();
        let pending: Vec<(Id, String, bool)> = {
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
                self.emit(ToolResultStartEvent::new(reply_id.clone(), id.to_string(), name).into())
                    .await?;
            }
            let delta =
                ToolResultTextDeltaEvent::new(reply_id.clone(), id.to_string(), text.to_owned());
            self.emit(delta.into()).await?;
            self.emit(
                ToolResultEndEvent::new(reply_id.clone(), id.to_string(), result_state).into(),
            )
            .await?;
        }
        Ok(())
    }
}
