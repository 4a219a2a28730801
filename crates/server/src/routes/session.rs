//! `/sessions/`: the caller's sessions, their messages, status and
//! interruption.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::on;
use oxiscope_agent::AgentState;
use oxiscope_permission::PermissionMode;
use oxiscope_storage::{SessionRecord, new_id, now};
use serde_json::{Map, Value, json};

use super::agent::agent_not_found;
use super::table::{Query, Reply, Route, optional, query, schema};
use crate::api::{
    AgentQuery, ChatModelConfig, CreateSessionRequest, CreateSessionResponse,
    InterruptSessionResponse, ListMessagesResponse, ListSessionsResponse, MessagesQuery,
    SessionRecordView, SessionStatusResponse, SessionView, UpdateSessionRequest,
};
use crate::auth::UserId;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, ApiQuery};
use crate::service::{self, agent_state, load_session, session_status, session_view};
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

/// A workspace id must be safe as a directory name.
fn check_workspace_id(id: &str) -> ApiResult<()> {
    oxiscope_workspace::validate_id("workspace id", id).map_err(|_| {
        ApiError::invalid(
            &["body", "workspace_id"],
            "workspace_id must be 1 to 64 letters, digits, '-' or '_'",
            "value_error",
        )
    })
}

async fn check_credential(
    state: &AppState,
    user: &str,
    config: Option<&ChatModelConfig>,
) -> ApiResult<()> {
    if let Some(config) = config {
        state
            .storage()
            .get_credential(user, &config.credential_id)
            .await?
            .ok_or_else(|| super::credential::not_found(&config.credential_id))?;
    }
    Ok(())
}

/// Writes the given config fields into `config`.
fn apply_config(
    config: &mut Map<String, Value>,
    chat: Option<ChatModelConfig>,
    fallback: Option<ChatModelConfig>,
    extra: [(&str, Option<Value>); 3],
) {
    if let Some(chat) = chat {
        config.insert("chat_model_config".into(), json!(chat));
    }
    if let Some(fallback) = fallback {
        config.insert("fallback_chat_model_config".into(), json!(fallback));
    }
    for (key, value) in extra {
        if let Some(value) = value {
            config.insert(key.to_owned(), value);
        }
    }
}

/// `POST /sessions/`: creates the session, or updates and returns the one
/// of the same user, agent and workspace.
pub(super) async fn create(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiJson(body): ApiJson<CreateSessionRequest>,
) -> ApiResult<(StatusCode, Json<CreateSessionResponse>)> {
    let agent = state
        .storage()
        .get_agent(&user, &body.agent_id)
        .await?
        .ok_or_else(|| agent_not_found(&body.agent_id))?;
    check_credential(&state, &user, body.chat_model_config.as_ref()).await?;
    check_credential(&state, &user, body.fallback_chat_model_config.as_ref()).await?;
    // The id a new session would get; per-session workspaces are named
    // after it.
    let id = new_id();
    let workspace_id = body.workspace_id.clone().unwrap_or_else(|| {
        state
            .workspaces()
            .assign_workspace_id(&user, &agent.id, &id)
    });
    check_workspace_id(&workspace_id)?;
    let extra = [
        ("tts_model_config", body.tts_model_config),
        ("realtime_model_config", body.realtime_model_config),
        ("knowledge_config", body.knowledge_config),
    ];

    let policy = &state.config().policy;
    if let Some(mode) = body.permission_mode {
        policy.check_mode(mode)?;
    }
    let storage = state.storage();
    let existing = match storage
        .find_session(&user, &agent.id, &workspace_id)
        .await?
    {
        Some(existing) => existing,
        None => {
            let mut config = Map::new();
            config.insert("workspace_id".into(), workspace_id.clone().into());
            // Without a name, the creation time until the first reply names it.
            let name = body.name.clone().unwrap_or_else(service::default_name);
            config.insert("name".into(), name.into());
            config.insert("naming".into(), json!({"auto": body.name.is_none()}));
            config.insert("cwd".into(), Value::Null);
            for key in [
                "chat_model_config",
                "fallback_chat_model_config",
                "tts_model_config",
                "realtime_model_config",
                "knowledge_config",
            ] {
                config.insert(key.into(), Value::Null);
            }
            apply_config(
                &mut config,
                body.chat_model_config.clone(),
                body.fallback_chat_model_config.clone(),
                extra.clone(),
            );
            // An agent stored with a mode the policy no longer allows
            // starts its sessions in `default`.
            let agent_mode = agent
                .data
                .get("permission_mode")
                .cloned()
                .and_then(|m| serde_json::from_value::<PermissionMode>(m).ok())
                .map(|m| policy.effective_mode(m));
            let mut agent_state = AgentState {
                session_id: id.clone(),
                ..AgentState::default()
            };
            agent_state.permission_context.mode =
                body.permission_mode.or(agent_mode).unwrap_or_default();
            let stamp = now();
            let record = SessionRecord {
                id: id.clone(),
                user_id: user.clone(),
                agent_id: agent.id.clone(),
                workspace_id: workspace_id.clone(),
                created_at: stamp.clone(),
                updated_at: stamp,
                config: Value::Object(config),
                state: serde_json::to_value(&agent_state)
                    .map_err(|e| ApiError::Internal(e.to_string()))?,
                revision: 0,
            };
            crate::service::check_session_cap(&state, &user).await?;
            match storage.create_session(&record).await {
                Ok(()) => {
                    return Ok((
                        StatusCode::CREATED,
                        Json(CreateSessionResponse { session_id: id }),
                    ));
                }
                // Another request created it a moment ago: update that one,
                // as if it had been found.
                Err(oxiscope_storage::Error::AlreadyExists { .. }) => storage
                    .find_session(&user, &agent.id, &workspace_id)
                    .await?
                    .ok_or_else(|| ApiError::Internal("a clashing session vanished".to_owned()))?,
                Err(e) => return Err(e.into()),
            }
        }
    };

    let mut config = match existing.config.clone() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if let Some(name) = body.name {
        config.insert("name".into(), name.into());
        config.insert("naming".into(), json!({"auto": false}));
    }
    apply_config(
        &mut config,
        body.chat_model_config,
        body.fallback_chat_model_config,
        extra,
    );
    storage
        .update_session_config(&user, &existing.id, &Value::Object(config))
        .await?;
    let session_id = existing.id.clone();
    if let Some(mode) = body.permission_mode {
        set_permission_mode(&state, existing, mode).await?;
    }
    Ok((
        StatusCode::CREATED,
        Json(CreateSessionResponse { session_id }),
    ))
}

/// A session's `cwd`: a directory inside its workspace, given relative to
/// the workspace (`src/app`) or under `/workspace`; stored relative.
fn check_cwd(cwd: &str) -> ApiResult<String> {
    let path = std::path::Path::new(cwd);
    let rel = path
        .strip_prefix(oxiscope_workspace::SANDBOX_ROOT)
        .unwrap_or(path);
    let mut parts = Vec::new();
    for component in rel.components() {
        match component {
            std::path::Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            std::path::Component::CurDir => {}
            _ => {
                return Err(ApiError::invalid(
                    &["body", "cwd"],
                    format!(
                        "cwd must be a directory inside the session's workspace, relative to it \
                         or under {}; {cwd:?} is not",
                        oxiscope_workspace::SANDBOX_ROOT
                    ),
                    "value_error",
                ));
            }
        }
    }
    Ok(parts.join("/"))
}

/// Writes a permission mode into the session's stored state.
async fn set_permission_mode(
    state: &AppState,
    session: SessionRecord,
    mode: PermissionMode,
) -> ApiResult<()> {
    if state.bus().is_locked(&session.id).await? {
        return Err(ApiError::Conflict(
            "The permission mode cannot change while a run is active.".to_owned(),
        ));
    }
    let mut current = agent_state(&session)?;
    current.permission_context.mode = mode;
    let snapshot = serde_json::to_value(&current).map_err(|e| ApiError::Internal(e.to_string()))?;
    match state
        .storage()
        .commit_reply(&session.id, session.revision, &snapshot, &[])
        .await
    {
        Err(oxiscope_storage::Error::StaleRevision { .. }) => Err(ApiError::Conflict(
            "The session changed meanwhile; retry.".to_owned(),
        )),
        other => other.map(|_| ()).map_err(ApiError::from),
    }
}

/// `GET /sessions/?agent_id=`.
pub(super) async fn list(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(query): ApiQuery<AgentQuery>,
) -> ApiResult<Json<ListSessionsResponse>> {
    state
        .storage()
        .get_agent(&user, &query.agent_id)
        .await?
        .ok_or_else(|| agent_not_found(&query.agent_id))?;
    let mut sessions = Vec::new();
    for session in state
        .storage()
        .list_sessions(&user, &query.agent_id)
        .await?
    {
        let status = session_status(&state, &session).await?;
        let usage = state.storage().session_usage(&user, &session.id).await?;
        let (team_id, team) = service::team::session_team(&state, &user, &session.id).await?;
        let mut record = session_view(&session);
        record.team_id = team_id;
        sessions.push(SessionView {
            session: record,
            is_running: status == crate::api::SessionStatus::Running,
            status,
            team,
            usage: crate::api::UsageView::from(&usage),
        });
    }
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
    let session = load_session(&state, &user, &session_id, &query.agent_id).await?;
    check_credential(&state, &user, body.chat_model_config.as_ref()).await?;
    check_credential(&state, &user, body.fallback_chat_model_config.as_ref()).await?;
    let mut config = match session.config.clone() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if let Some(name) = body.name {
        config.insert("name".into(), name.into());
        config.insert("naming".into(), json!({"auto": false}));
    }
    if let Some(cwd) = body.cwd.as_deref() {
        config.insert("cwd".into(), check_cwd(cwd)?.into());
    }
    apply_config(
        &mut config,
        body.chat_model_config,
        body.fallback_chat_model_config,
        [
            ("tts_model_config", body.tts_model_config),
            ("realtime_model_config", body.realtime_model_config),
            ("knowledge_config", body.knowledge_config),
        ],
    );
    state
        .storage()
        .update_session_config(&user, &session_id, &Value::Object(config))
        .await?;
    if let Some(mode) = body.permission_mode {
        state.config().policy.check_mode(mode)?;
        let fresh = load_session(&state, &user, &session_id, &query.agent_id).await?;
        set_permission_mode(&state, fresh, mode).await?;
    }
    let fresh = load_session(&state, &user, &session_id, &query.agent_id).await?;
    let mut view = session_view(&fresh);
    view.team_id = state.storage().session_team(&user, &session_id).await?;
    Ok(Json(view))
}

/// `DELETE /sessions/{id}?agent_id=`.
pub(super) async fn delete(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(session_id): Path<String>,
    ApiQuery(query): ApiQuery<AgentQuery>,
) -> ApiResult<StatusCode> {
    let session = load_session(&state, &user, &session_id, &query.agent_id).await?;
    if state.bus().is_locked(&session.id).await? {
        return Err(ApiError::Conflict(
            "A chat run is active for this session; interrupt it first.".to_owned(),
        ));
    }
    // A leader's team is dissolved with it; a member leaves its roster.
    service::team::session_deleting(&state, &user, &session_id).await?;
    state.storage().delete_session(&user, &session_id).await?;
    service::forget_session(&state, &session_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /sessions/{id}/messages?agent_id=&before=&limit=`.
pub(super) async fn messages(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(session_id): Path<String>,
    ApiQuery(query): ApiQuery<MessagesQuery>,
) -> ApiResult<Json<ListMessagesResponse>> {
    if !(1..=200).contains(&query.limit) {
        return Err(ApiError::invalid(
            &["query", "limit"],
            "Input should be between 1 and 200",
            "less_than_equal",
        ));
    }
    let session = load_session(&state, &user, &session_id, &query.agent_id).await?;
    // The cursor first: events after it are newer than the page.
    let event_cursor = state.bus().last_cursor(&session.id).await?;
    let is_running = state.bus().is_locked(&session.id).await?;
    let page = state
        .storage()
        .list_messages(
            &session.id,
            query.before.as_deref(),
            query.offset.unwrap_or(0),
            query.limit,
        )
        .await?;
    // The page is the newest `limit` messages before `before`, drawn
    // oldest first as AgentScope returns them.
    Ok(Json(ListMessagesResponse {
        messages: page.messages.into_iter().rev().map(|m| m.msg).collect(),
        event_cursor: event_cursor.map(|c| c.to_string()),
        is_running,
        has_more: page.has_more,
    }))
}

/// `GET /sessions/{id}/status?agent_id=`.
pub(super) async fn status(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(session_id): Path<String>,
    ApiQuery(query): ApiQuery<AgentQuery>,
) -> ApiResult<Json<SessionStatusResponse>> {
    let session = load_session(&state, &user, &session_id, &query.agent_id).await?;
    let status = session_status(&state, &session).await?;
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
    let at = crate::service::SessionKey {
        owner: &user,
        agent_id: &query.agent_id,
        session_id: &session_id,
    };
    state.sessions().interrupt(at).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(InterruptSessionResponse { session_id }),
    ))
}
