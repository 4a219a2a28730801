//! `/sessions/`: the caller's sessions, their messages, status and
//! interruption.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::on;

use super::table::{Query, Reply, Route, optional, query, schema};
use crate::api::{
    AgentQuery, CreateSessionRequest, CreateSessionResponse, InterruptSessionResponse,
    ListMessagesResponse, ListSessionsResponse, MessagesQuery, SessionRecordView,
    SessionStatusResponse, UpdateSessionRequest,
};
use crate::auth::UserId;
use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiQuery};
use crate::service::{Page, SessionKey};
use crate::state::AppState;

/// The `/sessions/` routes.
pub(super) const ROUTES: &[Route] = &[
    Route::get("/sessions/", |m| on(m, list))
        .user()
        .query(AGENT)
        .ok(schema::<ListSessionsResponse>),
    Route::post("/sessions/", |m| on(m, create))
        .user()
        .body(schema::<CreateSessionRequest>)
        .created(schema::<CreateSessionResponse>),
    Route::delete("/sessions/{session_id}", |m| on(m, delete))
        .user()
        .query(AGENT),
    Route::patch("/sessions/{session_id}", |m| on(m, update))
        .user()
        .query(AGENT)
        .body(schema::<UpdateSessionRequest>)
        .ok(schema::<SessionRecordView>),
    Route::post("/sessions/{session_id}/interrupt", |m| on(m, interrupt))
        .user()
        .query(AGENT)
        .status("202")
        .reply(Reply::Json(schema::<InterruptSessionResponse>)),
    Route::get("/sessions/{session_id}/messages", |m| on(m, messages))
        .user()
        .query(&[
            query("agent_id"),
            optional("before"),
            optional("offset"),
            optional("limit"),
        ])
        .ok(schema::<ListMessagesResponse>),
    Route::get("/sessions/{session_id}/status", |m| on(m, status))
        .user()
        .query(AGENT)
        .ok(schema::<SessionStatusResponse>),
    Route::get("/sessions/{session_id}/stream", |m| {
        on(m, super::stream::stream)
    })
    .user()
    .query(&[query("agent_id"), optional("after")])
    .event_stream(),
];

const AGENT: &[Query] = &[query("agent_id")];

/// The session a request names.
fn key<'a>(owner: &'a str, agent_id: &'a str, session_id: &'a str) -> SessionKey<'a> {
    SessionKey {
        owner,
        agent_id,
        session_id,
    }
}

/// `POST /sessions/`: creates the session, or updates and returns the one
/// of the same user, agent and workspace.
pub(super) async fn create(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiJson(body): ApiJson<CreateSessionRequest>,
) -> ApiResult<(StatusCode, Json<CreateSessionResponse>)> {
    let session_id = state.sessions().create(&user, body).await?;
    Ok((
        StatusCode::CREATED,
        Json(CreateSessionResponse { session_id }),
    ))
}

/// `GET /sessions/?agent_id=`.
pub(super) async fn list(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(query): ApiQuery<AgentQuery>,
) -> ApiResult<Json<ListSessionsResponse>> {
    let sessions = state.sessions().list(&user, &query.agent_id).await?;
    Ok(Json(ListSessionsResponse {
        total: sessions.len(),
        sessions,
    }))
}

/// `PATCH /sessions/{id}?agent_id=`.
pub(super) async fn update(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(session_id): Path<String>,
    ApiQuery(query): ApiQuery<AgentQuery>,
    ApiJson(body): ApiJson<UpdateSessionRequest>,
) -> ApiResult<Json<SessionRecordView>> {
    let at = key(&user, &query.agent_id, &session_id);
    Ok(Json(state.sessions().update(at, body).await?))
}

/// `DELETE /sessions/{id}?agent_id=`.
pub(super) async fn delete(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(session_id): Path<String>,
    ApiQuery(query): ApiQuery<AgentQuery>,
) -> ApiResult<StatusCode> {
    let at = key(&user, &query.agent_id, &session_id);
    state.sessions().delete(at).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /sessions/{id}/messages?agent_id=&before=&limit=`.
pub(super) async fn messages(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(session_id): Path<String>,
    ApiQuery(query): ApiQuery<MessagesQuery>,
) -> ApiResult<Json<ListMessagesResponse>> {
    let at = key(&user, &query.agent_id, &session_id);
    let page = Page {
        before: query.before,
        offset: query.offset.unwrap_or(0),
        limit: query.limit,
    };
    Ok(Json(state.sessions().messages(at, page).await?))
}

/// `GET /sessions/{id}/status?agent_id=`.
pub(super) async fn status(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(session_id): Path<String>,
    ApiQuery(query): ApiQuery<AgentQuery>,
) -> ApiResult<Json<SessionStatusResponse>> {
    let status = state
        .sessions()
        .status(key(&user, &query.agent_id, &session_id))
        .await?;
    Ok(Json(SessionStatusResponse { session_id, status }))
}

/// `POST /sessions/{id}/interrupt?agent_id=`: 202 whether or not anything
/// was running.
pub(super) async fn interrupt(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(session_id): Path<String>,
    ApiQuery(query): ApiQuery<AgentQuery>,
) -> ApiResult<(StatusCode, Json<InterruptSessionResponse>)> {
    state
        .sessions()
        .interrupt(key(&user, &query.agent_id, &session_id))
        .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(InterruptSessionResponse { session_id }),
    ))
}
