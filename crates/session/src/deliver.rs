//! Delivering a hint to another session: a team message, a background
//! tool's result. The hint is queued in the session's inbox as an
//! assistant message holding one hint block, like any queued input: it
//! runs at once when the session is idle (on whichever replica takes the
//! lock), or after the active run, which serves its inbox before letting
//! go.
//!
//! A session parked on a confirmation or an external result is not woken:
//! a new input would close the parked reply, so the hint waits in the
//! inbox for the user's answer (that run serves the inbox when it ends).
//! A hint queued while a run is active, which then parks, is kept in the
//! parked reply's state and given to the model at its next reasoning step
//! (see [`super::deferred`]).

use oxiscope_message::{ContentBlock, HintBlock, Msg};

use crate::Engine;
use crate::error::{SessionError, SessionResult};
use crate::inbox::{Origin, Queued};
use crate::input::ChatInput;

use super::{agent_state, push_inbox, wake};

/// Queues `hint` for `session_id` of `user_id`, signed by `sender` (the
/// message's name), and wakes the session. 404 when the session or its
/// agent is gone; 429 when its inbox is full.
pub async fn deliver_hint(
    state: &Engine,
    user_id: &str,
    session_id: &str,
    sender: &str,
    hint: HintBlock,
) -> SessionResult<()> {
    // Over the token quota nothing more runs for the user: say so to the
    // sender (a team tool reads it) instead of queueing.
    super::check_quota(state, user_id).await?;
    queue(state, user_id, session_id, sender, hint, Origin::Team, true).await
}

/// As [`deliver_hint`] for what must not be lost (a background call's
/// result): over the user's token quota the hint is queued all the same,
/// without waking the session, and reaches the model with the next reply
/// the quota allows.
pub async fn keep_hint(
    state: &Engine,
    user_id: &str,
    session_id: &str,
    sender: &str,
    hint: HintBlock,
) -> SessionResult<()> {
    let wake_now = match super::check_quota(state, user_id).await {
        Ok(()) => true,
        Err(SessionError::Limit(_)) => false,
        Err(e) => return Err(e),
    };
    queue(
        state,
        user_id,
        session_id,
        sender,
        hint,
        Origin::Hint,
        wake_now,
    )
    .await
}

async fn queue(
    state: &Engine,
    user_id: &str,
    session_id: &str,
    sender: &str,
    hint: HintBlock,
    origin: Origin,
    wake_now: bool,
) -> SessionResult<()> {
    let storage = state.storage();
    let session = storage
        .get_session(user_id, session_id)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("Session {session_id} not found")))?;
    let agent = storage
        .get_agent(user_id, &session.agent_id)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("Agent {} not found", session.agent_id)))?;
    let msg = Msg::assistant(sender, ContentBlock::from(hint))
        .map_err(|e| SessionError::Internal(format!("a hint message is invalid: {e}")))?;
    let item = Queued::new(origin, ChatInput::Msgs(vec![msg]));
    push_inbox(state, &session, &item).await?;
    if !wake_now {
        return Ok(());
    }
    // Read again after queueing: a parked reply answered meanwhile has
    // ended, and then nothing else would serve the inbox.
    let fresh = storage
        .get_session(user_id, session_id)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("Session {session_id} not found")))?;
    if agent_state(&fresh)?.is_parked() && !state.bus().is_locked(session_id).await? {
        return Ok(());
    }
    wake(state, &agent, &fresh).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use oxiscope_storage::UsageCounts;

    use super::*;

    #[tokio::test]
    async fn over_the_quota_a_result_is_kept_in_the_inbox_and_a_message_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (state, session) = crate::testing::service_with(dir.path(), |mut c| {
            c.policy.user_token_quota = Some(100);
            c
        })
        .await;
        let spent = UsageCounts {
            input_tokens: 90,
            output_tokens: 20,
            ..UsageCounts::default()
        };
        state
            .storage()
            .add_usage("u", &session.id, "2026-12-01", &spent)
            .await
            .unwrap();
        let hint = || HintBlock::new("the result", None);
        // A team message is refused: its sender is told.
        let refused = deliver_hint(&state, "u", &session.id, "team", hint()).await;
        assert!(
            matches!(refused, Err(SessionError::Limit(_))),
            "{refused:?}"
        );
        assert!(state.bus().pop_inbox(&session.id).await.unwrap().is_none());
        // A background result is queued, and nothing runs.
        keep_hint(&state, "u", &session.id, "background", hint())
            .await
            .unwrap();
        assert!(!state.bus().is_locked(&session.id).await.unwrap());
        let kept = state.bus().pop_inbox(&session.id).await.unwrap().unwrap();
        assert!(kept.to_string().contains("the result"), "{kept}");
    }
}
