//! The watchers that follow a reply's events, a model call's chunks and a
//! tool's chunks, and end their spans.

use std::sync::Arc;

use oxiscope_message::{
    AgentEvent, ContentBlock, FinishedReason, MediaBlock, ReplyFinishedReason, ToolResultState,
};
use oxiscope_model::{ChatResponse, ModelError};
use oxiscope_tool::ToolChunk;
use serde_json::json;

use super::middleware::{Tracer, lock, serde_name};
use super::span::{SpanData, push_capped};

pub(super) fn model_error_type(e: &ModelError) -> &'static str {
    match e {
        ModelError::Provider { .. } => "provider_error",
        ModelError::Connection { .. } => "connection_error",
        ModelError::Stream { .. } => "stream_error",
        ModelError::InvalidRequest { .. } => "invalid_request",
        _ => "model_error",
    }
}

/// Follows a reply's events; ends its span at `REPLY_END` (or when the
/// stream is dropped before).
pub(super) struct ReplyWatch {
    pub(super) tracer: Arc<Tracer>,
    pub(super) span: Option<SpanData>,
    pub(super) input_tokens: u64,
    pub(super) output_tokens: u64,
    pub(super) text: String,
}

impl ReplyWatch {
    pub(super) fn observe(&mut self, event: &AgentEvent) {
        let Some(span) = self.span.as_mut() else {
            return;
        };
        match event {
            AgentEvent::ReplyStart(e) => {
                if self.tracer.agent_name.is_none() {
                    span.name = format!("invoke_agent {}", e.name);
                    span.set("gen_ai.agent.name", e.name.as_str());
                }
                if self.tracer.conversation_id.is_none() {
                    span.set("gen_ai.conversation.id", e.session_id.as_str());
                }
                span.set("oxiscope.reply.id", e.reply_id.as_str());
            }
            AgentEvent::ModelCallEnd(e) => {
                self.input_tokens = self.input_tokens.saturating_add(e.input_tokens);
                self.output_tokens = self.output_tokens.saturating_add(e.output_tokens);
                span.set("gen_ai.usage.input_tokens", self.input_tokens);
                span.set("gen_ai.usage.output_tokens", self.output_tokens);
            }
            AgentEvent::TextBlockDelta(e) if self.tracer.content => {
                push_capped(&mut self.text, &e.delta);
            }
            AgentEvent::RequireUserConfirm(e) => {
                let ids = e
                    .tool_calls
                    .iter()
                    .map(|c| c.id.to_string())
                    .collect::<Vec<_>>();
                span.set("oxiscope.reply.awaiting_confirmation", ids);
            }
            AgentEvent::RequireExternalExecution(e) => {
                let ids = e
                    .tool_calls
                    .iter()
                    .map(|c| c.id.to_string())
                    .collect::<Vec<_>>();
                span.set("oxiscope.reply.awaiting_external_execution", ids);
            }
            AgentEvent::ReplyEnd(e) => {
                span.set(
                    "oxiscope.reply.finished_reason",
                    serde_name(&e.finished_reason),
                );
                if e.finished_reason == ReplyFinishedReason::Error {
                    let (kind, message) = e.error.as_ref().map_or_else(
                        || ("unknown".to_owned(), "the reply failed".to_owned()),
                        |info| (serde_name(&info.kind), info.message.clone()),
                    );
                    span.fail(&kind, message);
                }
                self.close();
            }
            _ => {}
        }
    }

    fn close(&mut self) {
        let Some(mut span) = self.span.take() else {
            return;
        };
        if self.tracer.content && !self.text.is_empty() {
            let output = json!([{
                "role": "assistant",
                "parts": [{ "type": "text", "content": self.text }],
            }]);
            span.set("gen_ai.output.messages", output.to_string());
        }
        {
            let mut current = lock(&self.tracer.current);
            if *current == Some(span.context) {
                *current = None;
            }
        }
        self.tracer.finish(span);
    }
}

impl Drop for ReplyWatch {
    fn drop(&mut self) {
        self.close();
    }
}

/// Follows a model call's stream; ends its span at the final chunk, an
/// error, or when the stream is dropped.
pub(super) struct ModelWatch {
    pub(super) tracer: Arc<Tracer>,
    pub(super) span: Option<SpanData>,
}

impl ModelWatch {
    pub(super) fn observe(&mut self, item: &Result<ChatResponse, ModelError>) {
        let Some(mut span) = self.span.take() else {
            return;
        };
        match item {
            Ok(response) if !response.is_last => {
                self.span = Some(span);
                return;
            }
            Ok(response) => {
                span.set("gen_ai.response.id", response.id.as_str());
                if let Some(usage) = &response.usage {
                    span.set("gen_ai.usage.input_tokens", usage.input_tokens);
                    span.set("gen_ai.usage.output_tokens", usage.output_tokens);
                    if usage.cache_input_tokens > 0 {
                        span.set(
                            "gen_ai.usage.cache_read.input_tokens",
                            usage.cache_input_tokens,
                        );
                    }
                    if usage.cache_creation_input_tokens > 0 {
                        span.set(
                            "gen_ai.usage.cache_creation.input_tokens",
                            usage.cache_creation_input_tokens,
                        );
                    }
                }
                let calls_tools = response
                    .content
                    .iter()
                    .any(|b| matches!(b, ContentBlock::ToolCall(_)));
                let reason = match response.finished_reason {
                    FinishedReason::Interrupted => "interrupted",
                    FinishedReason::Completed if calls_tools => "tool_calls",
                    FinishedReason::Completed => "stop",
                };
                span.set("gen_ai.response.finish_reasons", vec![reason.to_owned()]);
                if self.tracer.content {
                    let output = json!([{ "role": "assistant", "content": response.content }]);
                    span.set("gen_ai.output.messages", output.to_string());
                }
            }
            Err(e) => span.fail(model_error_type(e), e.to_string()),
        }
        self.tracer.finish(span);
    }
}

impl Drop for ModelWatch {
    fn drop(&mut self) {
        if let Some(span) = self.span.take() {
            self.tracer.finish(span);
        }
    }
}

/// Follows a tool's chunks; ends its span at the last chunk (or when the
/// stream is dropped).
pub(super) struct ToolWatch {
    pub(super) tracer: Arc<Tracer>,
    pub(super) span: Option<SpanData>,
    pub(super) text: String,
}

impl ToolWatch {
    pub(super) fn observe(&mut self, chunk: &ToolChunk) {
        if self.span.is_none() {
            return;
        }
        let wants_text = self.tracer.content || chunk.state == ToolResultState::Error;
        if wants_text {
            for block in &chunk.content {
                if let MediaBlock::Text(t) = block {
                    push_capped(&mut self.text, &t.text);
                }
            }
        }
        if !chunk.is_last {
            return;
        }
        let Some(mut span) = self.span.take() else {
            return;
        };
        span.set("oxiscope.tool.state", serde_name(&chunk.state));
        if self.tracer.content {
            span.set("gen_ai.tool.call.result", self.text.clone());
        }
        if chunk.state == ToolResultState::Error {
            let message = if self.text.is_empty() {
                "the tool failed".to_owned()
            } else {
                std::mem::take(&mut self.text)
            };
            span.fail("tool_error", message);
        }
        self.tracer.finish(span);
    }
}

impl Drop for ToolWatch {
    fn drop(&mut self) {
        if let Some(span) = self.span.take() {
            self.tracer.finish(span);
        }
    }
}
