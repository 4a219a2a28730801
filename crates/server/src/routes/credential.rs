//! `/credential/`: provider credentials, sealed at rest, masked in answers.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::on;
use oxiscope_model::{Credential, CredentialType, SECRET_MASK};
use oxiscope_storage::{CredentialRecord, new_id, now};
use serde_json::{Map, Value};

use super::table::{Route, schema};
use crate::api::{
    CreateCredentialRequest, CreateCredentialResponse, CredentialView,
    ListCredentialSchemasResponse, ListCredentialsResponse, UpdateCredentialRequest,
};
use crate::auth::UserId;
use crate::error::{ApiError, ApiResult};
use crate::extract::ApiJson;
use crate::state::AppState;

/// The `/credential/` routes.
pub(super) const ROUTES: &[Route] = &[
    Route::get("/credential/schemas", |m| on(m, schemas))
        .ok(schema::<ListCredentialSchemasResponse>),
    Route::get("/credential/", |m| on(m, list))
        .user()
        .ok(schema::<ListCredentialsResponse>),
    Route::post("/credential/", |m| on(m, create))
        .user()
        .body(schema::<CreateCredentialRequest>)
        .created(schema::<CreateCredentialResponse>),
    Route::patch("/credential/{credential_id}", |m| on(m, update))
        .user()
        .body(schema::<UpdateCredentialRequest>)
        .ok(schema::<CredentialView>),
    Route::delete("/credential/{credential_id}", |m| on(m, delete)).user(),
];

/// Reads a credential document, as a 422 on `body.data` when it is not one.
fn parse(data: Map<String, Value>) -> ApiResult<Credential> {
    let input = Value::Object(data);
    Credential::from_json_value(input.clone()).map_err(|e| {
        ApiError::Validation(vec![serde_json::json!({
            "type": "value_error",
            "loc": ["body", "data"],
            "msg": e.to_string(),
            "input": mask(input),
        })])
    })
}

/// The input echoed in an error, with anything that looks secret masked.
fn mask(mut input: Value) -> Value {
    if let Value::Object(map) = &mut input {
        for (key, value) in map.iter_mut() {
            if key.contains("key") || key.contains("secret") || key.contains("token") {
                *value = Value::from(SECRET_MASK);
            }
        }
    }
    input
}

fn view(state: &AppState, record: CredentialRecord) -> ApiResult<CredentialView> {
    let credential = state.unseal_credential(&record)?;
    let data = match serde_json::to_value(&credential) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    Ok(CredentialView {
        id: record.id,
        updated_at: record.updated_at,
        created_at: record.created_at,
        user_id: record.user_id,
        data,
        editable: true,
    })
}

/// `GET /credential/schemas`.
pub(super) async fn schemas() -> Json<ListCredentialSchemasResponse> {
    let schemas = CredentialType::all_json_schemas()
        .into_iter()
        .filter_map(|s| match s {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .collect();
    Json(ListCredentialSchemasResponse { schemas })
}

/// `GET /credential/`.
pub(super) async fn list(
    State(state): State<AppState>,
    UserId(user): UserId,
) -> ApiResult<Json<ListCredentialsResponse>> {
    let credentials = state
        .storage()
        .list_credentials(&user)
        .await?
        .into_iter()
        .map(|r| view(&state, r))
        .collect::<ApiResult<Vec<_>>>()?;
    Ok(Json(ListCredentialsResponse {
        total: credentials.len(),
        credentials,
    }))
}

/// Refuses a credential whose endpoint is at a loopback, private or
/// other non-public address when this server calls model endpoints at
/// public addresses only: every chat through it would fail, so it is
/// refused now, naming the switch that allows it. A name that does not
/// resolve here is let through (each call checks again).
///
/// # Errors
/// 403 naming `--allow-private-model-endpoints`.
async fn check_endpoint(state: &AppState, credential: &Credential) -> ApiResult<()> {
    if state.config().policy.private_model_endpoints {
        return Ok(());
    }
    let base = credential.base_url();
    if let Some(kind) = crate::service::address::non_public(&base).await {
        return Err(ApiError::Forbidden(format!(
            "The credential's endpoint {base} is at {kind}, and this server calls \
             model endpoints at public addresses only. To use a model server on this machine \
             or a private network, start `oxiscope serve` with \
             `--allow-private-model-endpoints` (or `private_model_endpoints = true` in the \
             policy file)."
        )));
    }
    Ok(())
}

/// `POST /credential/`.
pub(super) async fn create(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiJson(body): ApiJson<CreateCredentialRequest>,
) -> ApiResult<(StatusCode, Json<CreateCredentialResponse>)> {
    let mut data = body.data;
    // Ids are the server's: a client cannot pick (or collide with) one.
    let id = new_id();
    data.insert("id".into(), Value::from(id.clone()));
    let credential = parse(data)?;
    check_endpoint(&state, &credential).await?;
    let stamp = now();
    let record = CredentialRecord {
        id: id.clone(),
        user_id: user,
        created_at: stamp.clone(),
        updated_at: stamp,
        sealed: state.seal_credential(&credential)?,
    };
    state.storage().create_credential(&record).await?;
    Ok((
        StatusCode::CREATED,
        Json(CreateCredentialResponse { credential_id: id }),
    ))
}

/// `PATCH /credential/{credential_id}`: merges the given fields; a masked
/// secret keeps the stored one.
pub(super) async fn update(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(credential_id): Path<String>,
    ApiJson(body): ApiJson<UpdateCredentialRequest>,
) -> ApiResult<Json<CredentialView>> {
    let mut record = state
        .storage()
        .get_credential(&user, &credential_id)
        .await?
        .ok_or_else(|| not_found(&credential_id))?;
    let current = state.unseal_credential(&record)?;
    let mut merged = match current.to_storage_json() {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    for (key, value) in body.data {
        if value.as_str() == Some(SECRET_MASK) || key == "id" {
            continue;
        }
        merged.insert(key, value);
    }
    let credential = parse(merged)?;
    check_endpoint(&state, &credential).await?;
    record.sealed = state.seal_credential(&credential)?;
    record.updated_at = now();
    state.storage().update_credential(&record).await?;
    Ok(Json(view(&state, record)?))
}

/// `DELETE /credential/{credential_id}`.
pub(super) async fn delete(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(credential_id): Path<String>,
) -> ApiResult<StatusCode> {
    if state
        .storage()
        .delete_credential(&user, &credential_id)
        .await?
    {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found(&credential_id))
    }
}

pub(crate) fn not_found(id: &str) -> ApiError {
    ApiError::NotFound(format!("Credential {id} not found"))
}
