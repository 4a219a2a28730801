//! Context management inside a running reply: before each reasoning step
//! (oversized tool results, images beyond the limit, compression), and
//! compression on request (the `CompressContext` tool).

use std::sync::Arc;

use oxiscope_message::{ContentBlock, ModelCallStartEvent};

use super::compress::summary_msg;
use super::{CompressOutcome, CompressRequest};
use crate::error::{AgentError, ContextError};
use crate::running::Run;
use crate::state::AgentState;

impl Run<'_> {
    /// Before a reasoning step: cut new oversized tool results, drop
    /// images beyond the limit, and compress when above the threshold.
    pub(crate) async fn manage_context(
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
            if result.finished_at.is_none() || !self.checked.insert(result.id.to_string()) {
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
}
