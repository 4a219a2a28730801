//! `POST /chat/`: start (or resume) a run in the background.

use axum::Json;
use axum::extract::State;

use super::agent::agent_not_found;
use crate::api::{ChatRequest, ChatTriggerResponse};
use crate::auth::UserId;
use crate::error::ApiResult;
use crate::extract::ApiJson;
use crate::service::{
    ChatInput, RunRequest, agent_state, check_quota, load_session, parse_input, start_run,
};
use crate::state::AppState;

/// `POST /chat/`: `{status: "started", session_id}`; the events arrive on
/// the session's stream. A resume sent while a run is active is queued for
/// it; 429 when the session already has `inbox_limit` inputs queued, or
/// when the caller has spent the operator's token quota (checked before
/// any model is called).
pub(super) async fn chat(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiJson(body): ApiJson<ChatRequest>,
) -> ApiResult<Json<ChatTriggerResponse>> {
    let input = parse_input(body.input.clone())?;
    let session = load_session(&state, &user, &body.session_id, &body.agent_id).await?;
    check_quota(&state, &user).await?;
    if let ChatInput::Confirm(event) = &input {
        state
            .config()
            .policy
            .check_confirm(&agent_state(&session)?, event)?;
    }
    let agent = state
        .storage()
        .get_agent(&user, &body.agent_id)
        .await?
        .ok_or_else(|| agent_not_found(&body.agent_id))?;
    start_run(
        &state,
        &agent,
        session,
        RunRequest::Chat(Box::new(input), body.input),
    )
    .await?;
    Ok(Json(ChatTriggerResponse {
        status: "started".to_owned(),
        session_id: body.session_id,
    }))
}
