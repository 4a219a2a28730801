//! Keeping workers reporting: a member's reply may end only after its
//! last tool call was a successful `TeamSay` to the leader (or to
//! everyone). Otherwise the reply goes on with a reminder, at most
//! [`MAX_NUDGES`] times a reply, then ends as it is.

use std::sync::Mutex;

use oxiscope_agent::{AgentState, ReplyEndAction};
use oxiscope_message::{ContentBlock, Msg, ToolResultState};
use serde_json::Value;

/// Reminders one reply gets at most.
pub(super) const MAX_NUDGES: u32 = 3;

/// The reporting rule of one member session.
#[derive(Debug)]
pub(super) struct Nudge {
    leader: String,
    /// The reply reminded last, and how often.
    given: Mutex<(String, u32)>,
}

impl Nudge {
    /// The rule for a member of the team led by `leader`.
    pub(super) fn new(leader: String) -> Self {
        Self {
            leader,
            given: Mutex::new((String::new(), 0)),
        }
    }

    /// Whether `reply`'s last tool call is a successful `TeamSay` to the
    /// leader or to everyone.
    pub(super) fn reported(&self, reply: &Msg) -> bool {
        let Some(call) = reply.content.iter().rev().find_map(|b| match b {
            ContentBlock::ToolCall(call) => Some(call),
            _ => None,
        }) else {
            return false;
        };
        if call.name != "TeamSay" {
            return false;
        }
        let to = serde_json::from_str::<Value>(&call.input)
            .ok()
            .and_then(|input| input.get("to").cloned())
            .unwrap_or(Value::Null);
        let to_leader = match &to {
            Value::Null => true,
            Value::String(name) => *name == self.leader,
            _ => false,
        };
        to_leader
            && reply.content.iter().any(|b| {
                matches!(b, ContentBlock::ToolResult(r)
                    if r.id == call.id && r.state == ToolResultState::Success)
            })
    }

    /// What to do when `reply` is about to end.
    pub(super) fn on_end(&self, reply: &Msg, _state: &AgentState) -> ReplyEndAction {
        if self.reported(reply) {
            return ReplyEndAction::Finish;
        }
        let mut given = self
            .given
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if given.0 != reply.id {
            *given = (reply.id.to_string(), 0);
        }
        if given.1 >= MAX_NUDGES {
            return ReplyEndAction::Finish;
        }
        given.1 += 1;
        ReplyEndAction::Continue(format!(
            "<system-reminder>You are a member of a team led by {leader}. Before you end your \
             turn, report your result (or why you could not finish) to {leader} with the \
             TeamSay tool; the leader is waiting for it.</system-reminder>",
            leader = self.leader
        ))
    }
}

#[cfg(test)]
mod tests {
    use oxiscope_message::{TextBlock, ToolCallBlock, ToolResultBlock};

    use super::*;

    fn reply(blocks: Vec<ContentBlock>) -> Msg {
        let mut msg = Msg::assistant("w1", "x").unwrap();
        msg.content = blocks;
        msg
    }

    fn say(to: &str, state: ToolResultState) -> Vec<ContentBlock> {
        let call = ToolCallBlock::new("c1", "TeamSay", format!(r#"{{"content":"x","to":{to}}}"#));
        let result = ToolResultBlock::new("c1", "TeamSay", "ok", state);
        vec![call.into(), result.into()]
    }

    #[test]
    fn only_a_successful_report_to_the_leader_ends_a_reply() {
        let nudge = Nudge::new("Lead".into());
        assert!(nudge.reported(&reply(say("\"Lead\"", ToolResultState::Success))));
        assert!(nudge.reported(&reply(say("null", ToolResultState::Success))));
        assert!(!nudge.reported(&reply(say("\"w2\"", ToolResultState::Success))));
        assert!(!nudge.reported(&reply(say("\"Lead\"", ToolResultState::Error))));
        assert!(!nudge.reported(&reply(vec![TextBlock::new("done").into()])));

        let silent = reply(vec![TextBlock::new("done").into()]);
        let state = AgentState::default();
        for _ in 0..MAX_NUDGES {
            assert!(matches!(
                nudge.on_end(&silent, &state),
                ReplyEndAction::Continue(_)
            ));
        }
        assert_eq!(nudge.on_end(&silent, &state), ReplyEndAction::Finish);
    }
}
