//! Hints for a parked reply: a team message or a background result that
//! reaches a session while its reply waits for a confirmation or an
//! external result must not close that reply (a new input would). The
//! run that finds one in the inbox keeps it in the agent's state
//! (`middle_context`, saved with the session) instead of running it, and
//! [`DeferredHints`] gives it to the model at the resumed reply's next
//! reasoning step, recorded in the reply like any hint. A session parked
//! with no run waiting keeps the hint in its inbox instead (see
//! [`deliver_hint`](super::deliver::deliver_hint)).
//!
//! Replies started by hints alone are bounded: a hint starts no reply when
//! the user is over the token quota, or after [`MAX_HINT_RUNS`] such
//! replies since the session's last user input, so agents that message
//! each other (a team) cannot run for ever on a model that reports no
//! tokens. Such a hint is kept the same way, for the session's next reply
//! (the newest [`MAX_KEPT`] at most), not dropped.

use futures_util::future::BoxFuture;
use oxiscope_agent::{Agent, Middleware, PrepHint, ReasoningPrep};
use oxiscope_message::{ContentBlock, Msg, RichContent, Role};
use serde_json::{Value, json};

/// The `middle_context` entry holding deferred hints.
pub const KEY: &str = "oxiscope_deferred_hints";

/// The `middle_context` entry counting replies started by hints alone
/// since the last user input.
pub const HINT_RUNS_KEY: &str = "oxiscope_hint_runs";

/// The most hints kept for a session's next reply; older ones are dropped
/// (logged) past it.
pub const MAX_KEPT: usize = 100;

/// The most replies hints alone may start between two user inputs of a
/// session; later hints wait for the next reply the user starts.
pub const MAX_HINT_RUNS: u64 = 50;

/// Whether a reply started by a hint may run now: the user is within the
/// token quota and the session within [`MAX_HINT_RUNS`]; counts it.
///
/// # Errors
/// Why not, for the log.
pub async fn admit_hint_run(
    state: &crate::Engine,
    user_id: &str,
    agent: &Agent,
) -> Result<(), String> {
    super::check_quota(state, user_id)
        .await
        .map_err(|e| e.to_string())?;
    let mut agent_state = agent.state().await;
    let runs = agent_state
        .middle_context
        .get(HINT_RUNS_KEY)
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if runs >= MAX_HINT_RUNS {
        return Err(format!(
            "{runs} replies were started by hints since the user last wrote \
             (at most {MAX_HINT_RUNS})"
        ));
    }
    agent_state
        .middle_context
        .insert(HINT_RUNS_KEY.to_owned(), Value::from(runs + 1));
    agent.set_state(agent_state).await;
    Ok(())
}

/// A user input: hints may start replies again.
pub async fn user_turn(agent: &Agent) {
    let mut agent_state = agent.state().await;
    if agent_state.middle_context.remove(HINT_RUNS_KEY).is_some() {
        agent.set_state(agent_state).await;
    }
}

/// Whether `msgs` are hint messages only (what `deliver_hint` queues).
pub fn hint_only(msgs: &[Msg]) -> bool {
    !msgs.is_empty()
        && msgs.iter().all(|m| {
            m.role == Role::Assistant
                && !m.content.is_empty()
                && m.content.iter().all(|b| matches!(b, ContentBlock::Hint(_)))
        })
}

/// Keeps the hints of `msgs` in `agent`'s state for its next reasoning
/// step.
pub async fn defer(agent: &Agent, msgs: &[Msg]) {
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
        if kept.len() > MAX_KEPT {
            let over = kept.len() - MAX_KEPT;
            kept.drain(..over);
            tracing::warn!(
                session_id = state.session_id,
                dropped = over,
                "too many hints kept for the next reply; the oldest were dropped"
            );
        }
    }
    agent.set_state(state).await;
}

/// Gives the model the hints kept for the session at its next reasoning
/// step (see the module docs).
#[derive(Debug, Default)]
pub struct DeferredHints;

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

    #[tokio::test]
    async fn hints_alone_start_a_bounded_number_of_replies_between_user_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let storage = std::sync::Arc::new(
            oxiscope_storage::SqliteStorage::open(dir.path())
                .await
                .unwrap(),
        );
        let state = crate::Engine::new(
            storage,
            std::sync::Arc::new(oxiscope_storage::InMemoryBus::new()),
            crate::Sealer::from_key(&[5; 32]),
            crate::EngineConfig::new(dir.path()),
        );
        let model = std::sync::Arc::new(oxiscope_test_support::ScriptedModel::new([]));
        let agent = Agent::builder("a", model).build().unwrap();
        for _ in 0..MAX_HINT_RUNS {
            admit_hint_run(&state, "u", &agent).await.unwrap();
        }
        let why = admit_hint_run(&state, "u", &agent).await.unwrap_err();
        assert!(why.contains("at most 50"), "{why}");
        // The count is kept with the state (saved with the session).
        assert_eq!(
            agent.state().await.middle_context[HINT_RUNS_KEY],
            Value::from(MAX_HINT_RUNS)
        );
        user_turn(&agent).await;
        admit_hint_run(&state, "u", &agent).await.unwrap();
    }

    #[tokio::test]
    async fn kept_hints_are_capped_at_the_newest() {
        let model = std::sync::Arc::new(oxiscope_test_support::ScriptedModel::new([]));
        let agent = Agent::builder("a", model).build().unwrap();
        let msgs: Vec<Msg> = (0..MAX_KEPT + 20)
            .map(|i| {
                Msg::assistant(
                    "team",
                    ContentBlock::from(HintBlock::new(format!("h{i}"), None)),
                )
                .unwrap()
            })
            .collect();
        defer(&agent, &msgs[..10]).await;
        defer(&agent, &msgs[10..]).await;
        let state = agent.state().await;
        let kept = state.middle_context[KEY].as_array().unwrap();
        assert_eq!(kept.len(), MAX_KEPT);
        assert_eq!(kept[0]["hint"], "h20");
        assert_eq!(kept[MAX_KEPT - 1]["hint"], format!("h{}", MAX_KEPT + 19));
    }

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
