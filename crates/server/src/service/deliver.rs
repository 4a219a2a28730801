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

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

use super::{agent_state, push_inbox, wake};

/// Queues `hint` for `session_id` of `user_id`, signed by `sender` (the
/// message's name), and wakes the session. 404 when the session or its
/// agent is gone; 429 when its inbox is full.
pub(crate) async fn deliver_hint(
    state: &AppState,
    user_id: &str,
    session_id: &str,
    sender: &str,
    hint: HintBlock,
) -> ApiResult<()> {
    // Over the token quota nothing more runs for the user: say so to the
    // sender (a team tool reads it) instead of queueing.
    super::check_quota(state, user_id).await?;
    let storage = state.storage();
    let session = storage
        .get_session(user_id, session_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Session {session_id} not found")))?;
    let agent = storage
        .get_agent(user_id, &session.agent_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Agent {} not found", session.agent_id)))?;
    let msg = Msg::assistant(sender, ContentBlock::from(hint))
        .map_err(|e| ApiError::Internal(format!("a hint message is invalid: {e}")))?;
    let item = serde_json::to_value(&msg)
        .map_err(|e| ApiError::Internal(format!("a hint message cannot be written: {e}")))?;
    push_inbox(state, &session, item).await?;
    // Read again after queueing: a parked reply answered meanwhile has
    // ended, and then nothing else would serve the inbox.
    let fresh = storage
        .get_session(user_id, session_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Session {session_id} not found")))?;
    if agent_state(&fresh)?.is_parked() && !state.bus().is_locked(session_id).await? {
        return Ok(());
    }
    wake(state, &agent, &fresh).await
}
