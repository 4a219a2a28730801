//! Request extractors that fail the way FastAPI does: a 422 with
//! `{"detail": [{"type", "loc", "msg", "input"}]}`.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use oxiscope_session::{missing_field, shape_error};

use crate::error::ApiError;

/// A JSON body; malformed JSON and wrong shapes become FastAPI-style 422s.
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::BadRequest(e.body_text()))?;
        if bytes.is_empty() {
            return Err(ApiError::invalid(&["body"], "Field required", "missing"));
        }
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            ApiError::Validation(vec![json!({
                "type": "json_invalid",
                "loc": ["body", e.column()],
                "msg": "JSON decode error",
                "input": {},
                "ctx": {"error": e.to_string()},
            })])
        })?;
        serde_json::from_value(value.clone())
            .map(ApiJson)
            .map_err(|e| shape_error(&["body"], &e, &value).into())
    }
}

/// Query parameters; a missing or mistyped one becomes a FastAPI-style 422.
#[derive(Debug, Clone)]
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        serde_urlencoded::from_str(query)
            .map(ApiQuery)
            .map_err(|e| {
                let text = e.to_string();
                match missing_field(&text) {
                    Some(field) => {
                        ApiError::invalid(&["query", field], "Field required", "missing")
                    }
                    None => ApiError::invalid(&["query"], text, "value_error"),
                }
            })
    }
}
