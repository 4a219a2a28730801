//! `/agent/`: the caller's agent definitions.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::on;
use oxiscope_storage::{AgentRecord, new_id, now};
use serde_json::{Map, Value, json};

use super::table::{Route, schema};
use crate::api::{
    AgentSchemaV2Response, AgentView, CreateAgentRequest, CreateAgentResponse, ListAgentsResponse,
    UpdateAgentRequest,
};
use crate::auth::UserId;
use crate::error::{ApiError, ApiResult};
use crate::extract::ApiJson;
use crate::state::AppState;
use oxiscope_session::records::view;

/// The `/agent/` routes.
pub(super) const ROUTES: &[Route] = &[
    Route::get("/agent/schema/v2", |m| on(m, schema_v2)).ok(schema::<AgentSchemaV2Response>),
    Route::get("/agent/", |m| on(m, list))
        .user()
        .ok(schema::<ListAgentsResponse>),
    Route::post("/agent/", |m| on(m, create))
        .user()
        .body(schema::<CreateAgentRequest>)
        .created(schema::<CreateAgentResponse>),
    Route::patch("/agent/{agent_id}", |m| on(m, update))
        .user()
        .body(schema::<UpdateAgentRequest>)
        .ok(schema::<AgentView>),
    Route::delete("/agent/{agent_id}", |m| on(m, delete)).user(),
];

/// The chat config with every section present: given sections win over the
/// deprecated top-level copies, missing ones get defaults.
fn chat_config(
    given: Option<Map<String, Value>>,
    context: Option<Map<String, Value>>,
    react: Option<Map<String, Value>>,
    invite: Option<Map<String, Value>>,
) -> Map<String, Value> {
    let mut config = given.unwrap_or_default();
    let defaults = [
        ("context_config", context, json!({})),
        (
            "react_config",
            react,
            serde_json::to_value(oxiscope_agent::ReActConfig::default()).unwrap_or(json!({})),
        ),
        (
            "invite_config",
            invite,
            json!({"invitable": false, "invite_description": null}),
        ),
    ];
    for (key, legacy, default) in defaults {
        if !config.contains_key(key) {
            config.insert(key.to_owned(), legacy.map_or(default, Value::Object));
        }
    }
    config
}

/// `GET /agent/`.
pub(super) async fn list(
    State(state): State<AppState>,
    UserId(user): UserId,
) -> ApiResult<Json<ListAgentsResponse>> {
    let agents: Vec<AgentView> = state
        .storage()
        .list_agents(&user)
        .await?
        .into_iter()
        .map(view)
        // Team workers are the team's, listed with it (as in AgentScope).
        .filter(|a| a.source != "team")
        .collect();
    Ok(Json(ListAgentsResponse {
        total: agents.len(),
        agents,
    }))
}

/// `POST /agent/`.
pub(super) async fn create(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiJson(body): ApiJson<CreateAgentRequest>,
) -> ApiResult<(StatusCode, Json<CreateAgentResponse>)> {
    let mut data = Map::new();
    data.insert("name".into(), body.name.into());
    data.insert("system_prompt".into(), body.system_prompt.into());
    let config = chat_config(
        body.chat_config.map(crate::api::AgentChatConfig::into_map),
        body.context_config,
        body.react_config,
        body.invite_config,
    );
    data.insert("chat_config".into(), Value::Object(config));
    if let Some(mode) = body.permission_mode {
        state.config().policy.check_mode(mode)?;
        data.insert("permission_mode".into(), json!(mode));
    }
    let stamp = now();
    let record = AgentRecord {
        id: new_id(),
        user_id: user,
        created_at: stamp.clone(),
        updated_at: stamp,
        data: Value::Object(data),
    };
    state.storage().create_agent(&record).await?;
    Ok((
        StatusCode::CREATED,
        Json(CreateAgentResponse {
            agent_id: record.id,
        }),
    ))
}

/// `PATCH /agent/{agent_id}`.
pub(super) async fn update(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(agent_id): Path<String>,
    ApiJson(body): ApiJson<UpdateAgentRequest>,
) -> ApiResult<Json<AgentView>> {
    let mut record = state
        .storage()
        .get_agent(&user, &agent_id)
        .await?
        .ok_or_else(|| agent_not_found(&agent_id))?;
    let data = record.data.as_object_mut().ok_or_else(|| {
        ApiError::Internal(format!("agent {agent_id} has a non-object data document"))
    })?;
    if let Some(name) = body.name {
        data.insert("name".into(), name.into());
    }
    if let Some(prompt) = body.system_prompt {
        data.insert("system_prompt".into(), prompt.into());
    }
    let mut config = match data.remove("chat_config") {
        Some(Value::Object(c)) => c,
        _ => Map::new(),
    };
    if let Some(given) = body.chat_config {
        config.extend(given.into_map());
    }
    for (key, section) in [
        ("context_config", body.context_config),
        ("react_config", body.react_config),
        ("invite_config", body.invite_config),
    ] {
        if let Some(section) = section {
            config.insert(key.to_owned(), Value::Object(section));
        }
    }
    data.insert("chat_config".into(), Value::Object(config));
    if let Some(mode) = body.permission_mode {
        state.config().policy.check_mode(mode)?;
        data.insert("permission_mode".into(), json!(mode));
    }
    record.updated_at = now();
    state.storage().update_agent(&record).await?;
    Ok(Json(view(record)))
}

/// `DELETE /agent/{agent_id}`.
pub(super) async fn delete(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(agent_id): Path<String>,
) -> ApiResult<StatusCode> {
    let sessions = state.storage().list_sessions(&user, &agent_id).await?;
    // Teams its sessions lead are dissolved; rosters it is on forget it.
    for session in &sessions {
        crate::service::team::session_deleting(&state, &user, &session.id).await?;
    }
    if state.storage().delete_agent(&user, &agent_id).await? {
        for session in &sessions {
            crate::service::forget_session(&state, &session.id).await?;
        }
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(agent_not_found(&agent_id))
    }
}

/// `GET /agent/schema/v2`: the agent form's schema, offering the
/// permission modes the operator allows.
pub(super) async fn schema_v2(State(state): State<AppState>) -> Json<AgentSchemaV2Response> {
    Json(AgentSchemaV2Response::agent_data(
        &state.config().policy.allowed_modes,
    ))
}

pub(crate) fn agent_not_found(id: &str) -> ApiError {
    ApiError::NotFound(format!("Agent {id} not found"))
}
