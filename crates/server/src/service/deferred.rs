//! Hints for a parked reply: a team message or a background result that
//! reaches a session while its reply waits for a confirmation or an
//! external result must not close that reply (a new input would). The
//! run that finds one in the inbox keeps it in the agent's state
//! (`middle_context`, saved with the session) instead of running it, and
//! [`DeferredHints`] gives it to the model at the resumed reply's next
//! reasoning step, recorded in the reply like any hint. A session parked
//! with no run waiting keeps the hint in its inbox instead (see
//! [`deliver_hint`](super::deliver::deliver_hint)).

use futures_util::future::BoxFuture;
use oxiscope_agent::{Agent, Middleware, PrepHint, ReasoningPrep};
use oxiscope_message::{ContentBlock, Msg, RichContent, Role};
use serde_json::{Value, json};

/// The `middle_context` entry holding deferred hints.
pub(crate) const KEY: &str = "oxiscope_deferred_hints";

/// Whether `msgs` are hint messages only (what `deliver_hint` queues).
pub(crate) fn hint_only(msgs: &[Msg]) -> bool {
    !msgs.is_empty()
        && msgs.iter().all(|m| {
            m.role == Role::Assistant
                && !m.content.is_empty()
                && m.content.iter().all(|b| matches!(b, ContentBlock::Hint(_)))
        })
}

/// Keeps the hints of `msgs` in `agent`'s state for its next reasoning
/// step.
pub(crate) async fn defer(agent: &Agent, msgs: &[Msg]) {
    let mut state = agent.state().await;
    let entry = state
        .middle_context
        .entry(KEY.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    if !entry.is_array() {
        *entry = Value::Array(Vec::new());
    }
    if let Value::Array(kept) = entry {
        for block in msgs.iter().flat_map(|m| &m.content) {
            if let ContentBlock::Hint(h) = block {
                kept.push(json!({"hint": h.hint, "source": h.source}));
            }
        }
    }
    agent.set_state(state).await;
}

/// Gives the model the hints kept for the session at its next reasoning
/// step (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct DeferredHints;

impl Middleware for DeferredHints {
    fn on_prepare_reasoning<'a>(&'a self, step: &'a mut ReasoningPrep<'_>) -> BoxFuture<'a, ()> {
        if let Some(Value::Array(kept)) = step.middle_context.remove(KEY) {
            for item in kept {
                // An entry that no longer reads as a hint is dropped.
                let hint = item.get("hint").cloned().unwrap_or(Value::Null);
                let Ok(hint) = serde_json::from_value::<RichContent>(hint) else {
                    continue;
                };
                let source = item
                    .get("source")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                step.hints.push(PrepHint::new(hint).with_source(source));
            }
        }
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use oxiscope_message::HintBlock;

    use super::*;

    #[test]
    fn only_assistant_hint_messages_are_hints() {
        let hint = Msg::assistant("team", ContentBlock::from(HintBlock::new("hi", None))).unwrap();
        let text = Msg::user("u", "hello").unwrap();
        assert!(hint_only(std::slice::from_ref(&hint)));
        assert!(!hint_only(&[hint, text.clone()]));
        assert!(!hint_only(&[text]));
        assert!(!hint_only(&[]));
    }
}
