//! `/schedule/`: scheduled agent runs, owner-scoped. The scheduler that
//! fires them is `service::scheduler`.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::on;
use chrono::Utc;

use super::table::{Route, schema};
use crate::api::{
    CreateScheduleRequest, CreateScheduleResponse, ListSchedulesResponse, ScheduleSessionsResponse,
    ScheduleView, UpdateScheduleRequest,
};
use crate::auth::UserId;
use crate::error::ApiResult;
use crate::extract::ApiJson;
use crate::service::schedule;
use crate::service::session_view;
use crate::state::AppState;

/// The `/schedule/` routes.
pub(super) const ROUTES: &[Route] = &[
    Route::get("/schedule/", |m| on(m, list))
        .user()
        .ok(schema::<ListSchedulesResponse>),
    Route::post("/schedule/", |m| on(m, create))
        .user()
        .body(schema::<CreateScheduleRequest>)
        .created(schema::<CreateScheduleResponse>),
    Route::patch("/schedule/{schedule_id}", |m| on(m, update))
        .user()
        .body(schema::<UpdateScheduleRequest>)
        .ok(schema::<ScheduleView>),
    Route::delete("/schedule/{schedule_id}", |m| on(m, delete)).user(),
    Route::get("/schedule/{schedule_id}/sessions", |m| on(m, sessions))
        .user()
        .ok(schema::<ScheduleSessionsResponse>),
];

/// `GET /schedule/`: the caller's schedules, oldest first.
pub(super) async fn list(
    State(state): State<AppState>,
    UserId(user): UserId,
) -> ApiResult<Json<ListSchedulesResponse>> {
    let schedules: Vec<ScheduleView> = state
        .storage()
        .list_schedules(&user)
        .await?
        .iter()
        .map(schedule::view)
        .collect();
    Ok(Json(ListSchedulesResponse {
        total: schedules.len(),
        schedules,
    }))
}

/// `POST /schedule/`: 201 `{schedule_id}`; 422 for a bad cron or time
/// zone (nothing stored), 404 for an unknown agent or credential.
pub(super) async fn create(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiJson(body): ApiJson<CreateScheduleRequest>,
) -> ApiResult<(StatusCode, Json<CreateScheduleResponse>)> {
    let schedule_id = schedule::create(&state, &user, body, Utc::now()).await?;
    Ok((
        StatusCode::CREATED,
        Json(CreateScheduleResponse { schedule_id }),
    ))
}

/// `PATCH /schedule/{schedule_id}`: the updated schedule; a new rule takes
/// effect at once.
pub(super) async fn update(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(schedule_id): Path<String>,
    ApiJson(body): ApiJson<UpdateScheduleRequest>,
) -> ApiResult<Json<ScheduleView>> {
    let record = schedule::update(&state, &user, &schedule_id, body, Utc::now()).await?;
    Ok(Json(schedule::view(&record)))
}

/// `DELETE /schedule/{schedule_id}`: 204; its sessions go with it.
pub(super) async fn delete(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(schedule_id): Path<String>,
) -> ApiResult<StatusCode> {
    schedule::delete(&state, &user, &schedule_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /schedule/{schedule_id}/sessions`: the sessions it opened, newest
/// first.
pub(super) async fn sessions(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(schedule_id): Path<String>,
) -> ApiResult<Json<ScheduleSessionsResponse>> {
    let record = schedule::find(&state, &user, &schedule_id).await?;
    let sessions: Vec<_> = schedule::sessions_of(&state, &record)
        .await?
        .iter()
        .map(session_view)
        .collect();
    Ok(Json(ScheduleSessionsResponse {
        total: sessions.len(),
        sessions,
    }))
}
