//! `/mcp`, `/skill` and `/workspace/{mcp,skill}/from-library`: the
//! caller's library of installed MCP servers and skills, and putting them
//! into a session's workspace.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::on;

use super::table::{Query, Route, query, schema};
use crate::api::{
    AddFromLibraryRequest, AddFromLibraryResponse, AddSkillsFromLibraryRequest, McpView,
    SkillRecordView, SkillView, UpdateMcpRequest, WorkspaceQuery,
};
use crate::auth::UserId;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, ApiQuery};
use crate::service::library;
use crate::state::AppState;

/// The `/mcp`, `/skill` and from-library routes.
pub(super) const ROUTES: &[Route] = &[
    Route::get("/mcp", |m| on(m, list_mcps))
        .user()
        .ok(schema::<Vec<McpView>>),
    Route::patch("/mcp/{mcp_id}", |m| on(m, update_mcp))
        .user()
        .body(schema::<UpdateMcpRequest>)
        .ok(schema::<McpView>),
    Route::delete("/mcp/{mcp_id}", |m| on(m, delete_mcp)).user(),
    Route::get("/skill", |m| on(m, list_skills))
        .user()
        .ok(schema::<Vec<SkillView>>),
    Route::get("/skill/{skill_id}", |m| on(m, get_skill))
        .user()
        .ok(schema::<SkillRecordView>),
    Route::delete("/skill/{skill_id}", |m| on(m, delete_skill)).user(),
    Route::post("/workspace/mcp/from-library", |m| on(m, add_mcps))
        .user()
        .query(SESSION)
        .body(schema::<AddFromLibraryRequest>)
        .created(schema::<AddFromLibraryResponse>),
    Route::post("/workspace/skill/from-library", |m| on(m, add_skills))
        .user()
        .query(SESSION)
        .body(schema::<AddSkillsFromLibraryRequest>)
        .created(schema::<AddFromLibraryResponse>),
];

/// The session whose workspace receives.
const SESSION: &[Query] = &[query("agent_id"), query("session_id")];

/// `GET /mcp`: the caller's MCPs, by name.
pub(super) async fn list_mcps(
    State(state): State<AppState>,
    UserId(user): UserId,
) -> ApiResult<Json<Vec<McpView>>> {
    let records = state.storage().list_library_mcps(&user).await?;
    Ok(Json(records.into_iter().map(library::mcp_view).collect()))
}

/// `PATCH /mcp/{mcp_id}`: rename, turn on or off, or re-key.
pub(super) async fn update_mcp(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<UpdateMcpRequest>,
) -> ApiResult<Json<McpView>> {
    Ok(Json(library::update_mcp(&state, &user, &id, body).await?))
}

/// `DELETE /mcp/{mcp_id}`: workspaces that hold it keep it.
pub(super) async fn delete_mcp(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    if state.storage().delete_library_mcp(&user, &id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!("MCP {id} not found")))
    }
}

/// `GET /skill`: the caller's skills, by name.
pub(super) async fn list_skills(
    State(state): State<AppState>,
    UserId(user): UserId,
) -> ApiResult<Json<Vec<SkillView>>> {
    let records = state.storage().list_library_skills(&user).await?;
    Ok(Json(records.into_iter().map(library::skill_view).collect()))
}

/// `GET /skill/{skill_id}`: one skill with its `SKILL.md`.
pub(super) async fn get_skill(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
) -> ApiResult<Json<SkillRecordView>> {
    let record = state
        .storage()
        .get_library_skill(&user, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Skill {id} not found")))?;
    Ok(Json(library::skill_record_view(record)))
}

/// `DELETE /skill/{skill_id}`: workspaces keep their copies.
pub(super) async fn delete_skill(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    if state.storage().delete_library_skill(&user, &id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!("Skill {id} not found")))
    }
}

/// `POST /workspace/mcp/from-library`: the caller's installed MCPs into
/// the session's workspace, one by one.
pub(super) async fn add_mcps(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(query): ApiQuery<WorkspaceQuery>,
    ApiJson(body): ApiJson<AddFromLibraryRequest>,
) -> ApiResult<(StatusCode, Json<AddFromLibraryResponse>)> {
    let out = library::add_mcps(&state, &user, &query, body.mcp_ids).await?;
    Ok((StatusCode::CREATED, Json(out)))
}

/// `POST /workspace/skill/from-library`: the caller's installed skills,
/// fetched from their hubs, into the session's workspace, one by one.
pub(super) async fn add_skills(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(query): ApiQuery<WorkspaceQuery>,
    ApiJson(body): ApiJson<AddSkillsFromLibraryRequest>,
) -> ApiResult<(StatusCode, Json<AddFromLibraryResponse>)> {
    let out = library::add_skills(&state, &user, &query, body.skill_ids).await?;
    Ok((StatusCode::CREATED, Json(out)))
}
