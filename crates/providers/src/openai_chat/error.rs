//! HTTP failures and vendor error bodies as [`ModelError`]s.

use oxiscope_http::Error as HttpError;
use oxiscope_model::ModelError;
use serde_json::Value;

/// A failure before the response body started (the outer `Result` of a
/// call): an error status becomes [`ModelError::Provider`] with the
/// vendor's `error.code` (or `error.type`) and `error.message`.
pub(crate) fn setup_error(provider: &str, err: &HttpError) -> ModelError {
    if let Some(refused) = crate::media::refused_endpoint(err) {
        return refused;
    }
    if let Some(status) = err.status() {
        let body = err.body().unwrap_or_default();
        let (code, message) = parse_error_body(body);
        return ModelError::Provider {
            provider: provider.to_owned(),
            status: status.as_u16(),
            code,
            message: message.unwrap_or_else(|| fallback_message(body, status.as_u16())),
            request_id: err.request_id().map(str::to_owned),
            retry_after: err.retry_after(),
        };
    }
    match *err {
        HttpError::InvalidRequest { .. } | HttpError::Build { .. } => ModelError::InvalidRequest {
            message: err.to_string(),
        },
        HttpError::IdleTimeout { .. }
        | HttpError::UnexpectedEof { .. }
        | HttpError::Decode { .. }
        | HttpError::BodyTooLarge { .. } => ModelError::Stream {
            message: err.to_string(),
        },
        _ => ModelError::Connection {
            message: err.to_string(),
        },
    }
}

/// A failure while reading a streamed body: always a stream item.
pub(crate) fn stream_error(err: &HttpError) -> ModelError {
    ModelError::Stream {
        message: err.to_string(),
    }
}

/// `(code, message)` from `{"error": {"code", "type", "message"}}`; some
/// vendors put the object at the top level.
fn parse_error_body(body: &str) -> (Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return (None, None);
    };
    let error = value.get("error").unwrap_or(&value);
    let text = |v: &Value| match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let code = error
        .get("code")
        .and_then(text)
        .or_else(|| error.get("type").and_then(text));
    let message = match error {
        Value::String(s) => Some(s.clone()),
        _ => error.get("message").and_then(text),
    };
    (code, message)
}

fn fallback_message(body: &str, status: u16) -> String {
    let body = body.trim();
    if body.is_empty() {
        format!("HTTP {status} with an empty body")
    } else {
        body.to_owned()
    }
}
