//! Request extractors that fail the way FastAPI does: a 422 with
//! `{"detail": [{"type", "loc", "msg", "input"}]}`.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

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
            .map_err(|e| shape_error(&["body"], &e, &value))
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

/// A serde shape error as a validation item: missing fields get
/// `type: missing` at their location, other errors `value_error`.
pub(crate) fn shape_error(loc: &[&str], e: &serde_json::Error, input: &Value) -> ApiError {
    let text = e.to_string();
    let (kind, field, msg) = match missing_field(&text) {
        Some(f) => ("missing", Some(f.to_owned()), "Field required".to_owned()),
        None => ("value_error", None, strip_position(&text)),
    };
    let mut loc: Vec<Value> = loc.iter().map(|s| Value::from(*s)).collect();
    loc.extend(field.map(Value::from));
    ApiError::Validation(vec![
        json!({"type": kind, "loc": loc, "msg": msg, "input": input}),
    ])
}

/// The field of serde's "missing field `x`" message.
fn missing_field(text: &str) -> Option<&str> {
    let rest = text.split("missing field `").nth(1)?;
    rest.split('`').next()
}

/// serde_json's message without its " at line 1 column 5" suffix.
fn strip_position(text: &str) -> String {
    text.split(" at line ").next().unwrap_or(text).to_owned()
}
