//! The tool-call journal of a run: from the events the run publishes,
//! each tool execution is journaled when it starts (`TOOL_RESULT_START`)
//! and when it finishes (`TOOL_RESULT_END`, with its state and capped
//! text output), keyed by session, reply and call id. A replica that takes
//! over a run whose runner died reads the journal: a call started and not
//! finished is *in doubt* and is named to the user and the model instead
//! of being run again (see `takeover`).
//!
//! The journal is written as the events arrive, so a call that started a
//! moment before its runner died may not be journaled yet; a journal write
//! that fails is logged and the run goes on (the commit, on the same
//! storage, is what decides whether the reply is kept).

use std::collections::HashMap;

use oxiscope_agent::ReplyInput;
use oxiscope_message::AgentEvent;
use oxiscope_storage::{RESULT_LIMIT, ToolCallRecord, cap_text};
use serde_json::json;

use crate::Engine;

/// What one run has journaled: the outputs of its running calls.
#[derive(Debug, Default)]
pub struct Journal {
    /// Text output so far per running call id (capped).
    outputs: HashMap<String, String>,
}

impl Journal {
    /// Journals `event` if it starts or finishes a tool execution.
    pub async fn observe(&mut self, state: &Engine, session_id: &str, event: &AgentEvent) {
        let storage = state.storage();
        match event {
            AgentEvent::ToolResultStart(start) => {
                let call = ToolCallRecord::start(
                    session_id,
                    &start.reply_id,
                    &start.tool_call_id,
                    &start.tool_call_name,
                );
                self.outputs
                    .insert(start.tool_call_id.clone(), String::new());
                if let Err(e) = storage.start_tool_call(&call).await {
                    tracing::warn!(session_id, call_id = call.call_id, error = %e, "journaling a tool call failed");
                }
            }
            AgentEvent::ToolResultTextDelta(delta) => {
                if let Some(out) = self.outputs.get_mut(&delta.tool_call_id)
                    && out.len() < RESULT_LIMIT
                {
                    out.push_str(&delta.delta);
                }
            }
            AgentEvent::ToolResultEnd(end) => {
                let output = self.outputs.remove(&end.tool_call_id).unwrap_or_default();
                let result = json!({
                    "state": end.state,
                    "output": cap_text(&output, RESULT_LIMIT),
                });
                let key = ToolCallRecord::key(session_id, &end.reply_id, &end.tool_call_id);
                if let Err(e) = storage.finish_tool_call(&key, &result).await {
                    tracing::warn!(session_id, key, error = %e, "journaling a tool result failed");
                }
            }
            _ => {}
        }
    }
}

/// Withdraws the confirmation of calls in doubt: a confirmation that
/// approves a call the journal shows as started and never finished (its
/// runner died while it ran, and the reply was parked again at its last
/// commit) is turned into a refusal, so the call is not run a second time;
/// the model reads a refused call, and the takeover's `REPLY_END` named it.
pub async fn guard_confirm(state: &Engine, session_id: &str, input: ReplyInput) -> ReplyInput {
    let ReplyInput::Confirm(mut confirm) = input else {
        return input;
    };
    let calls = match state.storage().list_tool_calls(session_id).await {
        Ok(calls) => calls,
        Err(e) => {
            tracing::warn!(session_id, error = %e, "reading the tool-call journal failed");
            return ReplyInput::Confirm(confirm);
        }
    };
    for answer in &mut confirm.confirm_results {
        let doubtful = calls.iter().any(|call| {
            call.in_doubt()
                && call.reply_id == confirm.reply_id
                && call.call_id == answer.tool_call.id
        });
        if answer.confirmed && doubtful {
            tracing::warn!(
                session_id,
                call_id = answer.tool_call.id.as_str(),
                "not running a tool call in doubt again"
            );
            answer.confirmed = false;
        }
    }
    ReplyInput::Confirm(confirm)
}

/// Drops the session's journal once its reply's last event is out.
pub async fn clear(state: &Engine, session_id: &str) {
    if let Err(e) = state.storage().clear_tool_calls(session_id).await {
        tracing::warn!(session_id, error = %e, "clearing the tool-call journal failed");
    }
}
