//! Anthropic errors -> [`ModelError`].

use oxiscope_model::ModelError;
use serde_json::Value;

/// The provider name in errors.
pub(crate) const PROVIDER: &str = "anthropic";

/// An HTTP failure of a call, with the API's error body read.
pub(crate) fn from_http(err: oxiscope_http::Error) -> ModelError {
    crate::common::model::from_http(err, PROVIDER, error_body)
}

/// `(error.type, error.message)` of an API error body, or the raw body.
fn error_body(body: &str) -> (Option<String>, String) {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    let code = error
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .map_or_else(|| body.to_owned(), str::to_owned);
    (code, message)
}

/// An `error` event of a stream, with the HTTP status the API documents for
/// its type (so retry decisions work as for a status error).
pub(crate) fn from_event(error: &Value) -> ModelError {
    let code = error
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("api_error");
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let status = match code {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        _ => 500,
    };
    ModelError::Provider {
        provider: PROVIDER.to_owned(),
        status,
        code: Some(code.to_owned()),
        message: message.to_owned(),
        request_id: None,
        retry_after: None,
    }
}
