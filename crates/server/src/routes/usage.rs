//! `GET /usage`: the caller's token usage and quota (an Oxiscope
//! extension).

use axum::Json;
use axum::extract::State;

use crate::api::UsageResponse;
use crate::auth::UserId;
use crate::error::ApiResult;
use crate::service::user_usage;
use crate::state::AppState;

/// `GET /usage`: what the caller spent, in total and in the quota's
/// window, and the quota.
pub(super) async fn usage(
    State(state): State<AppState>,
    UserId(user): UserId,
) -> ApiResult<Json<UsageResponse>> {
    Ok(Json(user_usage(&state, &user).await?))
}
