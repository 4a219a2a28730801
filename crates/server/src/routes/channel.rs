//! `/channels`: IM channels, owner-scoped. The records are
//! `oxiscope_channel::Channels`'; the connections run in this replica's
//! `ChannelHost`, restarted when a record changes.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::on;
use oxiscope_channel::{ChannelStatus, ChannelTypeInfo, ChannelUpdate, ChannelView, NewChannel};
use oxiscope_storage::ChannelRecord;
use serde_json::Value;

use super::table::{Access, Route, schema};

use crate::auth::UserId;
use crate::channel_api::{
    BindingView, ChannelActionResponse, ChannelChatId, ChannelChatIdsResponse,
    ChannelSessionsResponse, CreateChannelRequest, StartCredentialBindingRequest,
};
use crate::error::{ApiError, ApiResult};
use crate::extract::ApiJson;
use crate::service::session_view;
use crate::state::AppState;

/// The fourteen `/channels` routes, and the webhook deliveries (ours).
pub(super) const ROUTES: &[Route] = &[
    Route::get("/channels/types", |m| on(m, types)).ok(schema::<Vec<ChannelTypeInfo>>),
    Route::get("/channels/", |m| on(m, list))
        .user()
        .ok(schema::<Vec<ChannelView>>),
    Route::post("/channels/", |m| on(m, create))
        .user()
        .body(schema::<CreateChannelRequest>)
        .created(schema::<ChannelView>),
    Route::post("/channels/bindings", |m| on(m, start_binding))
        .user()
        .body(schema::<StartCredentialBindingRequest>)
        .ok(schema::<BindingView>),
    Route::get("/channels/bindings/{binding_id}", |m| on(m, poll_binding))
        .user()
        .ok(schema::<BindingView>),
    Route::post("/channels/bindings/{binding_id}/cancel", |m| {
        on(m, cancel_binding)
    })
    .user()
    .ok(schema::<ChannelActionResponse>),
    Route::get("/channels/{channel_id}", |m| on(m, get))
        .user()
        .ok(schema::<ChannelView>),
    Route::patch("/channels/{channel_id}", |m| on(m, update))
        .user()
        .body(schema::<ChannelUpdate>)
        .ok(schema::<ChannelView>),
    Route::delete("/channels/{channel_id}", |m| on(m, delete)).user(),
    Route::post("/channels/{channel_id}/enable", |m| on(m, enable))
        .user()
        .ok(schema::<ChannelActionResponse>),
    Route::post("/channels/{channel_id}/disable", |m| on(m, disable))
        .user()
        .ok(schema::<ChannelActionResponse>),
    Route::get("/channels/{channel_id}/status", |m| on(m, status))
        .user()
        .ok(schema::<ChannelStatus>),
    Route::get("/channels/{channel_id}/sessions", |m| on(m, sessions))
        .user()
        .ok(schema::<ChannelSessionsResponse>),
    Route::get("/channels/{channel_id}/chat_ids", |m| on(m, chat_ids))
        .user()
        .ok(schema::<ChannelChatIdsResponse>),
    // Ours: a platform's push delivery, proven by its secret header.
    Route::post("/channels/{channel_id}/webhook", |m| on(m, webhook)).access(Access::Public),
];

fn not_found(id: &str) -> ApiError {
    ApiError::NotFound(format!("Channel {id} not found"))
}

async fn owned(state: &AppState, user: &str, id: &str) -> ApiResult<ChannelRecord> {
    state
        .channels()
        .channels()
        .get(user, id)
        .await?
        .ok_or_else(|| not_found(id))
}

fn view(record: &ChannelRecord) -> ApiResult<Json<ChannelView>> {
    Ok(Json(ChannelView::of(record)?))
}

/// Runs the record as it now is (or stops it when disabled); a channel
/// that cannot start is logged, and its status says `stopped`.
async fn restart(state: &AppState, record: &ChannelRecord) {
    if let Err(e) = state.channels().start(record.clone()).await {
        tracing::warn!(channel_id = record.id, error = %e, "a channel cannot start");
    }
}

/// `GET /channels/types`: the accepted types with their form schemas.
pub(super) async fn types(State(state): State<AppState>) -> Json<Vec<ChannelTypeInfo>> {
    Json(state.channels().channels().registry().infos())
}

/// `GET /channels/`: the caller's channels, oldest first.
pub(super) async fn list(
    State(state): State<AppState>,
    UserId(user): UserId,
) -> ApiResult<Json<Vec<ChannelView>>> {
    let records = state.channels().channels().list(&user).await?;
    let views = records
        .iter()
        .map(ChannelView::of)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(views))
}

/// `POST /channels/`: 201 with the channel (no credentials); it connects
/// at once when enabled.
pub(super) async fn create(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiJson(body): ApiJson<CreateChannelRequest>,
) -> ApiResult<(StatusCode, Json<ChannelView>)> {
    if let Some(binding) = &body.credential_binding_id {
        return Err(ApiError::NotFound(format!(
            "Credential binding {binding} not found"
        )));
    }
    let new = NewChannel {
        channel_type: body.channel_type,
        name: body.name,
        credentials: Value::Object(body.credentials),
        platform_config: body.platform_config,
        routing: body.routing,
        session: body.session,
        enabled: body.enabled,
    };
    let record = state.channels().channels().create(&user, new).await?;
    restart(&state, &record).await;
    Ok((StatusCode::CREATED, view(&record)?))
}

/// `POST /channels/bindings`: no accepted type hands over credentials by
/// QR code, so every request names a type that cannot.
pub(super) async fn start_binding(
    State(state): State<AppState>,
    UserId(_): UserId,
    ApiJson(body): ApiJson<StartCredentialBindingRequest>,
) -> ApiResult<Json<BindingView>> {
    let kind = state
        .channels()
        .channels()
        .registry()
        .get(&body.channel_type)?;
    if kind.info().supports_credential_binding {
        return Err(ApiError::Internal(format!(
            "{} declares credential binding, which this server does not run",
            body.channel_type
        )));
    }
    Err(ApiError::BadRequest(format!(
        "Channel type {} does not support credential binding",
        body.channel_type
    )))
}

/// `GET /channels/bindings/{binding_id}`: none is ever open.
pub(super) async fn poll_binding(
    UserId(_): UserId,
    Path(binding_id): Path<String>,
) -> ApiResult<Json<BindingView>> {
    Err(ApiError::NotFound(format!(
        "Credential binding {binding_id} not found"
    )))
}

/// `POST /channels/bindings/{binding_id}/cancel`: none is ever open.
pub(super) async fn cancel_binding(
    UserId(_): UserId,
    Path(binding_id): Path<String>,
) -> ApiResult<Json<ChannelActionResponse>> {
    Err(ApiError::NotFound(format!(
        "Credential binding {binding_id} not found"
    )))
}

/// `GET /channels/{channel_id}`: the channel, credentials left out.
pub(super) async fn get(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
) -> ApiResult<Json<ChannelView>> {
    view(&owned(&state, &user, &id).await?)
}

/// `PATCH /channels/{channel_id}`: name, routing, session and platform
/// config (the type and credentials do not change); the connection
/// restarts with them.
pub(super) async fn update(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ChannelUpdate>,
) -> ApiResult<Json<ChannelView>> {
    let record = state
        .channels()
        .channels()
        .update(&user, &id, body)
        .await?
        .ok_or_else(|| not_found(&id))?;
    restart(&state, &record).await;
    view(&record)
}

/// `DELETE /channels/{channel_id}`: 204; its connection stops, the
/// sessions it opened stay.
pub(super) async fn delete(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    if !state.channels().channels().delete(&user, &id).await? {
        return Err(not_found(&id));
    }
    state.channels().stop(&id).await;
    Ok(StatusCode::NO_CONTENT)
}

async fn set_enabled(
    state: &AppState,
    user: &str,
    id: &str,
    enabled: bool,
) -> ApiResult<Json<ChannelActionResponse>> {
    let update = ChannelUpdate {
        enabled: Some(enabled),
        ..ChannelUpdate::default()
    };
    let record = state
        .channels()
        .channels()
        .update(user, id, update)
        .await?
        .ok_or_else(|| not_found(id))?;
    restart(state, &record).await;
    let status = if enabled { "enabled" } else { "disabled" };
    Ok(Json(ChannelActionResponse {
        status: status.into(),
    }))
}

/// `POST /channels/{channel_id}/enable`.
pub(super) async fn enable(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
) -> ApiResult<Json<ChannelActionResponse>> {
    set_enabled(&state, &user, &id, true).await
}

/// `POST /channels/{channel_id}/disable`.
pub(super) async fn disable(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
) -> ApiResult<Json<ChannelActionResponse>> {
    set_enabled(&state, &user, &id, false).await
}

/// `GET /channels/{channel_id}/status`: the connection on this replica.
pub(super) async fn status(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
) -> ApiResult<Json<ChannelStatus>> {
    owned(&state, &user, &id).await?;
    Ok(Json(state.channels().status(&id)))
}

/// `GET /channels/{channel_id}/sessions`: the sessions it opened that
/// still exist, oldest first.
pub(super) async fn sessions(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
) -> ApiResult<Json<ChannelSessionsResponse>> {
    owned(&state, &user, &id).await?;
    let store = state
        .storage()
        .channels()
        .ok_or_else(|| ApiError::Internal("the storage keeps no channels".into()))?;
    let mut sessions = Vec::new();
    for claim in store.channel_sessions(&id).await? {
        if let Some(session) = state
            .storage()
            .get_session(&user, &claim.session_id)
            .await?
        {
            sessions.push(session_view(&session));
        }
    }
    Ok(Json(ChannelSessionsResponse {
        total: sessions.len(),
        sessions,
    }))
}

/// `GET /channels/{channel_id}/chat_ids`: the chats messages came from.
pub(super) async fn chat_ids(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
) -> ApiResult<Json<ChannelChatIdsResponse>> {
    owned(&state, &user, &id).await?;
    let store = state
        .storage()
        .channels()
        .ok_or_else(|| ApiError::Internal("the storage keeps no channels".into()))?;
    let chats = store
        .channel_chats(&id)
        .await?
        .into_iter()
        .map(|c| ChannelChatId {
            chat_id: c.chat_id,
            name: c.name,
            source: "recorded".into(),
        })
        .collect();
    Ok(Json(ChannelChatIdsResponse { chats }))
}

/// `POST /channels/{channel_id}/webhook` (ours; not AgentScope's): a
/// platform's push delivery to a channel in webhook mode. It carries no
/// user: the platform proves itself with the secret the channel gave it
/// (Telegram's `X-Telegram-Bot-Api-Secret-Token`); anything else — no such
/// channel here, a wrong or missing secret, a body that is not the
/// platform's — is one `403`, so nothing tells channels apart.
pub(super) async fn webhook(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<StatusCode> {
    let secret = headers
        .get(oxiscope_channel::telegram::SECRET_HEADER)
        .and_then(|v| v.to_str().ok());
    match state.channels().webhook(&id, secret, &body).await {
        Ok(_) => Ok(StatusCode::OK),
        Err(e) => {
            tracing::info!(channel_id = id, error = %e, "a webhook delivery was refused");
            Err(ApiError::Forbidden("The delivery was refused.".into()))
        }
    }
}
