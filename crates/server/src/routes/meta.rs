//! `/health`, `/model/`, `/openapi.json` and unknown paths.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use oxiscope_model::CredentialType;
use serde_json::Value;

use crate::api::{HealthResponse, ListModelsResponse, ModelQuery};
use crate::error::{ApiError, ApiResult};
use crate::extract::ApiQuery;
use crate::state::AppState;

/// `GET /health`: liveness plus readiness of each component.
pub(super) async fn health(State(state): State<AppState>) -> (StatusCode, Json<HealthResponse>) {
    let mut components = BTreeMap::new();
    let storage = if state.storage().ping().await.is_ok() {
        "ok"
    } else {
        "not_ready"
    };
    components.insert("storage".to_owned(), storage.to_owned());
    components.insert("message_bus".to_owned(), "ok".to_owned());
    let shutting_down = state.shutdown_token().is_cancelled();
    components.insert(
        "chat".to_owned(),
        if shutting_down { "not_ready" } else { "ok" }.to_owned(),
    );
    let ready = components.values().all(|c| c != "not_ready");
    let body = HealthResponse {
        status: if ready { "ok" } else { "not_ready" }.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        components,
    };
    // AgentScope answers 200 either way; the body carries readiness.
    (StatusCode::OK, Json(body))
}

/// `GET /model/?provider=`: the model cards of a credential type.
pub(super) async fn models(
    ApiQuery(query): ApiQuery<ModelQuery>,
) -> ApiResult<Json<ListModelsResponse>> {
    let kind: CredentialType = query
        .provider
        .parse()
        .map_err(|_| ApiError::NotFound(format!("Unknown provider {}", query.provider)))?;
    let cards = kind
        .list_models()
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let models: Vec<Value> = cards
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Json(ListModelsResponse {
        total: models.len(),
        models,
    }))
}

/// `GET /openapi.json`.
pub(super) async fn openapi() -> Json<Value> {
    Json(crate::openapi::document())
}

/// Any other path: FastAPI's 404 body.
pub(super) async fn not_found() -> ApiError {
    ApiError::NotFound("Not Found".to_owned())
}
