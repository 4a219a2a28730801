//! Context management: token accounting, compression, per-item limits and
//! the `CompressContext` tool.

pub(crate) mod compress;
mod in_reply;
pub(crate) mod limits;
pub(crate) mod tokens;

use oxiscope_message::{Msg, RichContent, Role};
use oxiscope_model::ToolSchema;
use tokio_util::sync::CancellationToken;

pub use compress::{CompressNext, CompressOutcome, CompressRequest};

use crate::agent::{DEFAULT_CONTEXT_SIZE, Inner};
use crate::error::ContextError;
use crate::middleware::ThroughMiddleware;
use crate::state::AgentState;
use compress::Compressor;
use std::sync::Arc;
use tokens::TokenLedger;

/// The id of the system prompt message.
pub(crate) const SYSTEM_ID: &str = "system-prompt";

/// An id that changes whenever `text` does, so caches keyed by message id
/// (token counts here, formatted requests in the providers) never serve
/// the old text of the system prompt or the summary.
pub(crate) fn text_id(prefix: &str, text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    format!("{prefix}-{:016x}", h.finish())
}

/// The name of the tool that lets the agent compress its context.
pub(crate) const COMPRESS_TOOL: &str = "CompressContext";

/// The `CompressContext` tool's schema.
pub(crate) fn compress_tool_schema() -> ToolSchema {
    ToolSchema::function(
        COMPRESS_TOOL,
        "Compress the conversation so far into a structured summary, to free room in the \
         context window. Call it between two pieces of work once you are told the context is \
         nearly full; it does nothing while the context is still small. Optionally say what \
         the summary must keep.",
        serde_json::json!({
            "type": "object",
            "properties": {
                "instructions": {
                    "type": "string",
                    "description": "What the summary must keep (paths, names, decisions, ...)"
                }
            },
            "required": []
        }),
    )
}

/// Runs one compression check through the middlewares' onion.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_compression<'a>(
    inner: &'a Inner,
    context: &mut Vec<Msg>,
    summary: &mut RichContent,
    ledger: &mut TokenLedger,
    system: &Msg,
    tools: &[ToolSchema],
    session_id: &str,
    cancel: CancellationToken,
    request: CompressRequest,
) -> Result<CompressOutcome, ContextError> {
    let through = |model: &'a Arc<dyn oxiscope_model::DynChatModel>| ThroughMiddleware {
        middlewares: &inner.middlewares,
        model: model.as_ref(),
    };
    let mut models = vec![through(&inner.model)];
    if let Some(f) = &inner.fallback_model {
        models.push(through(f));
    }
    let mut job = Compressor {
        context,
        summary,
        ledger,
        system,
        tools,
        models,
        offloader: inner.offloader.as_deref(),
        session_id,
        context_size: inner.context_size(),
        exact_above: inner.buffer_start(),
        cancel,
    };
    CompressNext::new(&inner.middlewares, &mut job)
        .run(request)
        .await
}

impl Inner {
    /// The system prompt as the model sees it: the agent's prompt, the
    /// toolkit's skills, then every middleware's `on_system_prompt`.
    pub(crate) fn system_msg(&self) -> Msg {
        let mut base = self.system_prompt.to_string();
        if let Some(skills) = self.toolkit.skills_prompt() {
            if !base.is_empty() {
                base.push_str("\n\n");
            }
            base.push_str(&skills);
        }
        let prompt = self
            .middlewares
            .iter()
            .fold(base, |p, m| m.on_system_prompt(p));
        let id = text_id(SYSTEM_ID, &prompt);
        let mut msg = Msg::from_text("system", Role::System, prompt);
        msg.id = id.into();
        msg
    }

    /// The tools offered to the model in `state`.
    pub(crate) fn tools_for(&self, state: &AgentState) -> Vec<ToolSchema> {
        let mut tools = self.toolkit.schemas(&state.tool_context);
        if self.context.compression_tool_enabled {
            tools.push(compress_tool_schema());
        }
        if let Some(schema) = &state.reply_context.structured_schema
            && state.reply_context.structured_output.is_none()
        {
            tools.push(crate::structured::tool_schema(schema));
        }
        tools
    }

    /// The context window compression works against: the builder's, else
    /// the model's card, else [`DEFAULT_CONTEXT_SIZE`].
    pub(crate) fn context_size(&self) -> u64 {
        *self.context_size.get_or_init(|| {
            self.model
                .context_size()
                .unwrap_or(DEFAULT_CONTEXT_SIZE)
                .max(1)
        })
    }

    /// The compression threshold in tokens.
    pub(crate) fn threshold(&self) -> usize {
        (self.context.trigger_ratio * self.context_size() as f64) as usize
    }

    /// Where the buffer before the threshold starts, in tokens.
    pub(crate) fn buffer_start(&self) -> usize {
        let ratio = (self.context.trigger_ratio - self.context.context_buffer_ratio).max(0.0);
        (ratio * self.context_size() as f64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_of_reused_messages_follow_their_text() {
        // Same length, other text: another id, so no cache serves the old.
        assert_ne!(
            text_id(SYSTEM_ID, "time 12:01"),
            text_id(SYSTEM_ID, "time 12:02")
        );
        assert_eq!(text_id(SYSTEM_ID, "same"), text_id(SYSTEM_ID, "same"));
        let a = compress::summary_msg(&RichContent::Text("summary one".into())).unwrap();
        let b = compress::summary_msg(&RichContent::Text("summary two".into())).unwrap();
        assert_ne!(a.id, b.id);
    }
}
