//! `/model/`, `/openapi.json` and unknown paths.

use axum::Json;
use axum::extract::State;
use axum::routing::on;
use oxiscope_model::CredentialType;
use serde_json::Value;

use super::table::{Query, Route, query, schema};
use crate::api::{ListModelsResponse, ModelQuery};
use crate::error::{ApiError, ApiResult};
use crate::extract::ApiQuery;
use crate::state::AppState;

/// The model catalogues and the document itself.
pub(super) const ROUTES: &[Route] = &[
    Route::get("/model/", |m| on(m, models))
        .query(PROVIDER)
        .ok(schema::<ListModelsResponse>),
    Route::get("/embedding-model/", |m| on(m, embedding_models))
        .query(PROVIDER)
        .ok(schema::<ListModelsResponse>),
    Route::get("/tts-model/", |m| on(m, tts_models))
        .query(PROVIDER)
        .ok(schema::<ListModelsResponse>),
    Route::get("/openapi.json", |m| on(m, openapi)).undocumented(),
];

const PROVIDER: &[Query] = &[query("provider")];

/// `GET /model/?provider=`: the model cards of a credential type.
pub(super) async fn models(
    ApiQuery(query): ApiQuery<ModelQuery>,
) -> ApiResult<Json<ListModelsResponse>> {
    let kind: CredentialType = query
        .provider
        .parse()
        .map_err(|_| ApiError::NotFound(format!("Unknown provider {}", query.provider)))?;
    card_list(kind.list_models())
}

/// `GET /embedding-model/?provider=`: the embedding model cards of a
/// credential type (an empty list for a type without embedding models).
pub(super) async fn embedding_models(
    ApiQuery(query): ApiQuery<ModelQuery>,
) -> ApiResult<Json<ListModelsResponse>> {
    card_list(provider(&query)?.list_embedding_models())
}

/// `GET /tts-model/?provider=`: the TTS model cards of a credential type
/// (an empty list for a type without TTS models).
pub(super) async fn tts_models(
    ApiQuery(query): ApiQuery<ModelQuery>,
) -> ApiResult<Json<ListModelsResponse>> {
    card_list(provider(&query)?.list_tts_models())
}

/// The credential type `provider` names; AgentScope's 404 otherwise.
fn provider(query: &ModelQuery) -> ApiResult<CredentialType> {
    query
        .provider
        .parse()
        .map_err(|_| ApiError::NotFound(format!("Provider '{}' not found.", query.provider)))
}

/// Cards as a `{models, total}` page.
fn card_list<T: serde::Serialize, E: std::fmt::Display>(
    cards: Result<Vec<T>, E>,
) -> ApiResult<Json<ListModelsResponse>> {
    let cards = cards.map_err(|e| ApiError::Internal(e.to_string()))?;
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

/// `GET /openapi.json`: the document of this server's authentication mode.
pub(super) async fn openapi(State(state): State<AppState>) -> Json<Value> {
    let edge = state.edge();
    Json(crate::openapi::document_for(edge.auth, edge.jwt))
}

/// Any other path: FastAPI's 404 body.
pub(super) async fn not_found() -> ApiError {
    ApiError::NotFound("Not Found".to_owned())
}
