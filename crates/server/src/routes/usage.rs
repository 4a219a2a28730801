//! `GET /usage`: the caller's token usage and quota (an Oxiscope
//! extension).

use axum::Json;
use axum::extract::State;
use axum::routing::on;

use super::table::{Route, schema};
use crate::api::UsageResponse;
use crate::auth::UserId;
use crate::error::ApiResult;
use crate::service::user_usage;
use crate::state::AppState;

/// `/usage`, an Oxiscope extension: the caller's token usage and quota.
pub(super) const ROUTES: &[Route] = &[Route::get("/usage", |m| on(m, usage))
    .user()
    .ok(schema::<UsageResponse>)];

/// `GET /usage`: what the caller spent, in total and in the quota's
/// window, and the quota.
pub(super) async fn usage(
    State(state): State<AppState>,
    UserId(user): UserId,
) -> ApiResult<Json<UsageResponse>> {
    Ok(Json(user_usage(&state, &user).await?))
}
