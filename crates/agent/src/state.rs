//! The agent's state: everything a session needs to continue, including a
//! reply parked on a confirmation or an external result.
//!
//! A saved state is AgentScope's JSON, field for field: it saves nothing
//! AgentScope 2.0.11 does not (pinned by the tests against the reference
//! state files), so states move between the two implementations and are no
//! larger than AgentScope's. Loading parses in one pass straight into the
//! typed structs (no intermediate `serde_json::Value`) and trims every list
//! to its length, so an idle agent keeps no spare room; unknown fields are
//! ignored and missing ones take their defaults, so older states still load.

use oxiscope_message::{ContentBlock, Msg, RichContent, ToolCallBlock, ToolCallState, stamp};
use oxiscope_permission::PermissionContext;
use oxiscope_tool::{TasksContext, ToolContext};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The state of one agent session, serde-compatible with AgentScope's
/// `AgentState` (saved states move between the two implementations).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentState {
    /// The session id.
    pub session_id: String,
    /// The summary of compressed history: text or text / data blocks.
    pub summary: RichContent,
    /// The conversation: input messages and one assistant message per reply.
    pub context: Vec<Msg>,
    /// The current (or last) reply.
    pub reply_context: ReplyContext,
    /// Mode, rules and working directories of the permission engine.
    pub permission_context: PermissionContext,
    /// The tools' per-session state (read cache, active groups).
    pub tool_context: ToolContext,
    /// The task list.
    pub tasks_context: TasksContext,
    /// Free-form state of middlewares.
    pub middle_context: Map<String, Value>,
}

/// Where the current reply stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplyContext {
    /// The reply id (the id of the reply's message in the context).
    #[serde(default = "stamp::new_id")]
    pub reply_id: String,
    /// Reasoning-acting rounds used by the reply so far.
    #[serde(default)]
    pub cur_iter: u32,
    /// The JSON schema the reply must produce, when one was required.
    #[serde(default)]
    pub structured_schema: Option<Value>,
    /// The validated structured output, once produced.
    #[serde(default)]
    pub structured_output: Option<Map<String, Value>>,
}

impl Default for ReplyContext {
    fn default() -> Self {
        Self {
            reply_id: stamp::new_id(),
            cur_iter: 0,
            structured_schema: None,
            structured_output: None,
        }
    }
}

impl Default for AgentState {
    fn default() -> Self {
        Self {
            session_id: stamp::new_id(),
            summary: RichContent::Text(String::new()),
            context: Vec::new(),
            reply_context: ReplyContext::default(),
            permission_context: PermissionContext::default(),
            tool_context: ToolContext::default(),
            tasks_context: TasksContext::default(),
            middle_context: Map::new(),
        }
    }
}

/// The wire shape, including the fields older versions kept at the top
/// level (`reply_id`, `cur_iter`), which loading moves into
/// `reply_context`.
#[derive(Deserialize)]
struct RawState {
    #[serde(default = "stamp::new_id")]
    session_id: String,
    #[serde(default)]
    summary: Option<RichContent>,
    #[serde(default)]
    context: Vec<Msg>,
    #[serde(default)]
    reply_context: Option<ReplyContext>,
    #[serde(default)]
    permission_context: PermissionContext,
    #[serde(default)]
    tool_context: ToolContext,
    #[serde(default)]
    tasks_context: TasksContext,
    #[serde(default)]
    middle_context: Map<String, Value>,
    #[serde(default)]
    reply_id: Option<String>,
    #[serde(default)]
    cur_iter: Option<u32>,
}

impl<'de> Deserialize<'de> for AgentState {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut raw = RawState::deserialize(d)?;
        // A list grown while parsing keeps up to twice the room it needs.
        raw.context.shrink_to_fit();
        let mut reply_context = raw.reply_context.unwrap_or_default();
        if let Some(id) = raw.reply_id {
            reply_context.reply_id = id;
        }
        if let Some(iter) = raw.cur_iter {
            reply_context.cur_iter = iter;
        }
        Ok(Self {
            session_id: raw.session_id,
            summary: raw
                .summary
                .unwrap_or_else(|| RichContent::Text(String::new())),
            context: raw.context,
            reply_context,
            permission_context: raw.permission_context,
            tool_context: raw.tool_context,
            tasks_context: raw.tasks_context,
            middle_context: raw.middle_context,
        })
    }
}

impl AgentState {
    /// The current reply's message, if it is in the context.
    #[must_use]
    pub fn reply_msg(&self) -> Option<&Msg> {
        self.context
            .iter()
            .rev()
            .find(|m| m.id == self.reply_context.reply_id)
    }

    pub(crate) fn reply_index(&self) -> Option<usize> {
        self.context
            .iter()
            .rposition(|m| m.id == self.reply_context.reply_id)
    }

    /// The tool calls of the current reply that have no result yet.
    #[must_use]
    pub fn pending_tool_calls(&self) -> Vec<&ToolCallBlock> {
        self.reply_msg().map(pending_calls).unwrap_or_default()
    }

    /// Whether the current reply is parked, waiting for a confirmation or an
    /// external result.
    #[must_use]
    pub fn is_parked(&self) -> bool {
        self.reply_msg()
            .is_some_and(|m| m.finished_reason.is_none() && parked(m))
    }

    /// What the parked reply waits for, if it is parked.
    #[must_use]
    pub fn awaiting(&self) -> Option<Awaiting> {
        let msg = self.reply_msg()?;
        if msg.finished_reason.is_some() {
            return None;
        }
        let pending = pending_calls(msg);
        if pending.iter().any(|c| c.state == ToolCallState::Asking) {
            Some(Awaiting::Permission)
        } else if pending.iter().any(|c| c.state == ToolCallState::Submitted) {
            Some(Awaiting::ExternalResult)
        } else {
            None
        }
    }
}

/// What a parked reply waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Awaiting {
    /// The user's confirmation of tool calls.
    Permission,
    /// Results of externally executed tool calls.
    ExternalResult,
}

/// The ids of the calls of `msg` that have a finished result.
pub(crate) fn answered_ids(msg: &Msg) -> std::collections::HashSet<&str> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult(r) if r.finished_at.is_some() => Some(r.id.as_str()),
            _ => None,
        })
        .collect()
}

pub(crate) fn pending_calls(msg: &Msg) -> Vec<&ToolCallBlock> {
    let answered = answered_ids(msg);
    msg.tool_calls()
        .filter(|c| !answered.contains(c.id.as_str()))
        .collect()
}

fn parked(msg: &Msg) -> bool {
    pending_calls(msg)
        .iter()
        .any(|c| matches!(c.state, ToolCallState::Asking | ToolCallState::Submitted))
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
