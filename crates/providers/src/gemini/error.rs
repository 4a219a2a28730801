//! Gemini errors -> [`ModelError`].
//!
//! The API answers errors with Google's status object,
//! `{"error": {"code": 429, "message": ..., "status": "RESOURCE_EXHAUSTED",
//! "details": [...]}}` (a streaming call may wrap it in a list). A
//! `RetryInfo` detail's `retryDelay` stands in for a missing `Retry-After`.

use std::time::Duration;

use oxiscope_model::ModelError;
use serde_json::Value;

/// The provider name in errors.
pub(crate) const PROVIDER: &str = "gemini";

/// An HTTP failure of a call, with the API's error body read.
pub(crate) fn from_http(err: oxiscope_http::Error) -> ModelError {
    let delay = match &err {
        oxiscope_http::Error::Status(status) if status.retry_after.is_none() => {
            retry_delay(&status.body)
        }
        _ => None,
    };
    let mut error = crate::common::model::from_http(err, PROVIDER, error_body);
    if let ModelError::Provider { retry_after, .. } = &mut error
        && retry_after.is_none()
    {
        *retry_after = delay;
    }
    error
}

/// The status object of an error body.
fn status_object(body: &Value) -> Option<&Value> {
    match body {
        Value::Array(items) => items.iter().find_map(|v| v.get("error")),
        other => other.get("error"),
    }
}

/// `(error.status, error.message)` of an API error body, or the raw body.
fn error_body(body: &str) -> (Option<String>, String) {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(status_object);
    let code = error
        .and_then(|e| e.get("status"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .map_or_else(|| body.to_owned(), str::to_owned);
    (code, message)
}

/// The `retryDelay` of a `RetryInfo` detail (`"37s"`, `"1.5s"`).
fn retry_delay(body: &str) -> Option<Duration> {
    let parsed: Value = serde_json::from_str(body).ok()?;
    let details = status_object(&parsed)?.get("details")?.as_array()?;
    details.iter().find_map(|d| {
        let delay = d.get("retryDelay")?.as_str()?.strip_suffix('s')?;
        let seconds: f64 = delay.parse().ok()?;
        (0.0..=86_400.0)
            .contains(&seconds)
            .then(|| Duration::from_secs_f64(seconds))
    })
}

/// An error object sent inside a stream (`{"error": {...}}` as an event).
pub(crate) fn from_event(error: &Value) -> ModelError {
    let status = error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..=599).contains(c))
        .unwrap_or(500);
    let code = error
        .get("status")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let body = serde_json::json!({"error": error}).to_string();
    ModelError::Provider {
        provider: PROVIDER.to_owned(),
        status,
        code,
        message,
        request_id: None,
        retry_after: retry_delay(&body),
    }
}

/// A reply Gemini refused or could not finish: a blocked prompt or a
/// candidate stopped for safety, recitation, a malformed function call...
/// Content refusals are not retryable (400); a broken function call is the
/// model's slip and may succeed on a retry (502).
pub(crate) fn stopped(reason: &str, what: &str) -> ModelError {
    let retryable = matches!(
        reason,
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS"
    );
    ModelError::Provider {
        provider: PROVIDER.to_owned(),
        status: if retryable { 502 } else { 400 },
        code: Some(reason.to_owned()),
        message: format!("{what} ({reason})"),
        request_id: None,
        retry_after: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn retry_info_and_status_are_read_from_plain_and_listed_bodies() {
        let body = r#"{"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]}}"#;
        assert_eq!(
            error_body(body),
            (
                Some("RESOURCE_EXHAUSTED".to_owned()),
                "Quota exceeded".to_owned()
            )
        );
        assert_eq!(retry_delay(body), Some(Duration::from_secs(37)));
        let listed = format!("[{body}]");
        assert_eq!(retry_delay(&listed), Some(Duration::from_secs(37)));
        assert_eq!(error_body("not json").1, "not json");
        assert_eq!(
            retry_delay(r#"{"error": {"details": [{"retryDelay": "-1s"}]}}"#),
            None
        );
        assert_eq!(
            retry_delay(r#"{"error": {"details": [{"retryDelay": "1e300s"}]}}"#),
            None
        );
    }

    #[test]
    fn stream_errors_keep_their_http_code() {
        let err = from_event(
            &serde_json::json!({"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}),
        );
        assert!(err.is_retryable());
        let ModelError::Provider { status, code, .. } = err else {
            panic!()
        };
        assert_eq!((status, code.as_deref()), (503, Some("UNAVAILABLE")));
        let odd = from_event(&serde_json::json!({"code": 7}));
        assert!(matches!(odd, ModelError::Provider { status: 500, .. }));
    }
}
