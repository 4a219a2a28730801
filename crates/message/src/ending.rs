//! [`ReplyEnding`]: the event a reply stream ends on.

use crate::event::{ReplyEndEvent, RequireExternalExecutionEvent, RequireUserConfirmEvent};

/// The event a reply stream ends on, with what it carries: what a driver
/// of replies (a console, a pipeline, a service) acts on.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyEnding {
    /// `REPLY_END`: the reply is over.
    Finished(ReplyEndEvent),
    /// Parked until the user answers these calls.
    Confirm(RequireUserConfirmEvent),
    /// Parked until these calls' results, run outside the agent, arrive.
    External(RequireExternalExecutionEvent),
}

impl ReplyEnding {
    /// How the reply ended.
    #[must_use]
    pub fn outcome(&self) -> crate::ReplyOutcome {
        use crate::ReplyOutcome;
        match self {
            Self::Finished(end) => ReplyOutcome::Finished(end.finished_reason),
            Self::Confirm(_) => ReplyOutcome::AwaitingConfirmation,
            Self::External(_) => ReplyOutcome::AwaitingExternal,
        }
    }

    /// The reply it ends.
    #[must_use]
    pub fn reply_id(&self) -> &str {
        match self {
            Self::Finished(end) => &end.reply_id,
            Self::Confirm(event) => &event.reply_id,
            Self::External(event) => &event.reply_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AgentEvent, ReplyFinishedReason, ToolCallBlock};

    #[test]
    fn the_ending_of_a_stream_agrees_with_its_outcome() {
        let call = ToolCallBlock::new("c1", "Bash", r#"{"command":"ls"}"#);
        let ends = [
            AgentEvent::ReplyEnd(ReplyEndEvent::new(
                "s".into(),
                "r1".into(),
                ReplyFinishedReason::Interrupted,
                None,
            )),
            AgentEvent::RequireUserConfirm(RequireUserConfirmEvent::new(
                "r2".into(),
                vec![call.clone()],
            )),
            AgentEvent::RequireExternalExecution(RequireExternalExecutionEvent::new(
                "r3".into(),
                vec![call],
            )),
        ];
        for (event, id) in ends.into_iter().zip(["r1", "r2", "r3"]) {
            let outcome = event.reply_outcome();
            let ending = event.into_ending().expect("ends its reply");
            assert_eq!(Some(ending.outcome()), outcome);
            assert_eq!(ending.reply_id(), id);
        }
    }
}
