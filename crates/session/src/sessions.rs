//! Owned-session lookups and the session's status.

use oxiscope_agent::{AgentState, Awaiting};
use oxiscope_storage::SessionRecord;
use serde_json::{Map, Value};

use crate::Engine;
use crate::api::{SessionRecordView, SessionStatus};
use crate::error::{SessionError, SessionResult};

/// The caller's session `id` of agent `agent_id`, or 404.
pub async fn load_session(
    state: &Engine,
    user: &str,
    id: &str,
    agent_id: &str,
) -> SessionResult<SessionRecord> {
    state
        .storage()
        .get_session(user, id)
        .await?
        .filter(|s| s.agent_id == agent_id)
        .ok_or_else(|| SessionError::NotFound(format!("Session {id} not found")))
}

/// `429` when `user` keeps the operator's `max_sessions_per_user`
/// sessions already; checked before each new session is stored.
///
/// # Errors
/// [`SessionError::Limit`] naming the setting; the store's failure.
pub async fn check_session_cap(state: &Engine, user: &str) -> SessionResult<()> {
    let most = state.config().policy.max_sessions_per_user;
    let kept = state.storage().count_sessions(user).await?;
    if kept >= u64::try_from(most).unwrap_or(u64::MAX) {
        return Err(SessionError::Limit(format!(
            "A user may keep at most {most} sessions on this server (operator policy \
             max_sessions_per_user); delete one first."
        )));
    }
    Ok(())
}

/// The session's workspace (made and initialised on first use).
///
/// # Errors
/// The workspace cannot be made (an invalid id, no sandbox).
pub async fn workspace_of(
    state: &Engine,
    session: &SessionRecord,
) -> oxiscope_workspace::Result<std::sync::Arc<dyn oxiscope_workspace::Workspace>> {
    state
        .workspaces()
        .get(
            &session.user_id,
            &session.agent_id,
            &session.id,
            Some(&session.workspace_id),
        )
        .await
}

/// The session's agent state.
pub fn agent_state(session: &SessionRecord) -> SessionResult<AgentState> {
    serde_json::from_value(session.state.clone())
        .map_err(|e| SessionError::Internal(format!("session {}: stored state: {e}", session.id)))
}

/// Running when a run holds the session's lock, else what the stored state
/// waits for.
pub async fn session_status(
    state: &Engine,
    session: &SessionRecord,
) -> SessionResult<SessionStatus> {
    if state.bus().is_locked(&session.id).await? {
        return Ok(SessionStatus::Running);
    }
    // The record may have been read while a run was still going; now that no
    // run holds the lock, its final state is stored: read it again.
    let fresh = state
        .storage()
        .get_session(&session.user_id, &session.id)
        .await?;
    let session = fresh.as_ref().unwrap_or(session);
    Ok(match agent_state(session)?.awaiting() {
        Some(Awaiting::Permission) => SessionStatus::AwaitingPermission,
        Some(Awaiting::ExternalResult) => SessionStatus::AwaitingExternalResult,
        None => SessionStatus::Idle,
    })
}

fn object(value: &Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// The `SessionRecord` of the API.
pub fn session_view(session: &SessionRecord) -> SessionRecordView {
    // Sessions a schedule opened carry their origin in the config.
    let spec = crate::spec::SessionSpec::of(session);
    let origin = spec
        .origin()
        .cloned()
        .unwrap_or_else(|| crate::spec::origin_of("user"));
    SessionRecordView {
        id: session.id.clone(),
        updated_at: session.updated_at.clone(),
        created_at: session.created_at.clone(),
        user_id: session.user_id.clone(),
        agent_id: session.agent_id.clone(),
        origin,
        team_id: None,
        config: spec.raw().clone(),
        state: object(&session.state),
    }
}
