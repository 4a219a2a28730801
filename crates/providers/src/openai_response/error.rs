//! Responses API errors -> [`ModelError`].

use oxiscope_http::Error as HttpError;
use oxiscope_model::ModelError;
use serde_json::Value;

/// The provider name in errors.
pub(crate) const PROVIDER: &str = "openai";

/// A failure of the call before the body started: an error status becomes
/// [`ModelError::Provider`] with the API's `error.code` (or `error.type`)
/// and `error.message`, the request id and `Retry-After`.
pub(crate) fn from_http(err: &HttpError) -> ModelError {
    if let Some(refused) = crate::media::refused_endpoint(err) {
        return refused;
    }
    if let Some(status) = err.status() {
        let body = err.body().unwrap_or_default();
        let (code, message) = error_body(body);
        return ModelError::Provider {
            provider: PROVIDER.to_owned(),
            status: status.as_u16(),
            code,
            message: message.unwrap_or_else(|| match body.trim() {
                "" => format!("HTTP {} with an empty body", status.as_u16()),
                text => text.to_owned(),
            }),
            request_id: err.request_id().map(str::to_owned),
            retry_after: err.retry_after(),
        };
    }
    match err {
        HttpError::InvalidRequest { .. } | HttpError::Build { .. } => ModelError::InvalidRequest {
            message: err.to_string(),
        },
        HttpError::Connect { .. } | HttpError::Timeout { .. } => ModelError::Connection {
            message: err.to_string(),
        },
        _ => ModelError::Stream {
            message: err.to_string(),
        },
    }
}

/// `(code, message)` of `{"error": {"code", "type", "message"}}`.
fn error_body(body: &str) -> (Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return (None, None);
    };
    let error = value.get("error").unwrap_or(&value);
    (code_of(error), text(error.get("message")))
}

fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn code_of(error: &Value) -> Option<String> {
    text(error.get("code")).or_else(|| text(error.get("type")))
}

/// An `error` event, or the `error` of a `response.failed` event, with the
/// HTTP status its code stands for (so retry decisions work as for a
/// status error).
pub(crate) fn from_event(error: &Value) -> ModelError {
    let code = code_of(error);
    let status = match code.as_deref().unwrap_or_default() {
        "rate_limit_exceeded" | "insufficient_quota" => 429,
        "invalid_prompt"
        | "invalid_request_error"
        | "context_length_exceeded"
        | "invalid_image"
        | "invalid_image_format"
        | "invalid_base64_image"
        | "invalid_image_url"
        | "image_too_large"
        | "image_too_small"
        | "unsupported_image_media_type"
        | "empty_image_file"
        | "image_content_policy_violation"
        | "image_parse_error"
        | "image_file_too_large"
        | "image_file_not_found"
        | "failed_to_download_image"
        | "image_url_failed_to_download" => 400,
        "authentication_error" | "invalid_api_key" => 401,
        "permission_denied" => 403,
        "vector_store_timeout" => 504,
        _ => 500,
    };
    ModelError::Provider {
        provider: PROVIDER.to_owned(),
        status,
        code,
        message: text(error.get("message")).unwrap_or_else(|| "the response failed".to_owned()),
        request_id: None,
        retry_after: None,
    }
}
