//! [`ApiError`]: every failure a handler returns, rendered in FastAPI's
//! shapes (`{"detail": "..."}`, or a list of validation errors for 422).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A handler failure and the status it maps to.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// 400: the request is well-formed but cannot be served.
    #[error("{0}")]
    BadRequest(String),
    /// 401: no or unknown credentials.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: the operator's policy does not allow it.
    #[error("{0}")]
    Forbidden(String),
    /// 404: no such record for this user.
    #[error("{0}")]
    NotFound(String),
    /// 409: the session's state does not allow it now.
    #[error("{0}")]
    Conflict(String),
    /// 429: a per-session limit (queued inputs) is reached.
    #[error("{0}")]
    TooManyRequests(String),
    /// 422: the request failed validation; FastAPI's error items.
    #[error("validation failed: {0:?}")]
    Validation(Vec<Value>),
    /// 500: logged in full, answered with a generic body.
    #[error("internal: {0}")]
    Internal(String),
    /// Another status with a string detail (413, 415, 408, 422, 502, 503).
    #[error("{1}")]
    Status(StatusCode, String),
}

/// Result of a handler.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// A one-item validation error at `loc` (FastAPI's `{loc, msg, type}`).
    #[must_use]
    pub fn invalid(loc: &[&str], msg: impl Into<String>, kind: &str) -> Self {
        Self::Validation(vec![
            json!({"type": kind, "loc": loc, "msg": msg.into(), "input": null}),
        ])
    }

    /// The HTTP status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Status(status, _) => *status,
        }
    }
}

impl From<oxiscope_storage::Error> for ApiError {
    fn from(e: oxiscope_storage::Error) -> Self {
        oxiscope_session::SessionError::from(e).into()
    }
}

impl From<oxiscope_workspace::Error> for ApiError {
    fn from(e: oxiscope_workspace::Error) -> Self {
        oxiscope_session::SessionError::from(e).into()
    }
}

impl From<oxiscope_session::HubError> for ApiError {
    fn from(e: oxiscope_session::HubError) -> Self {
        oxiscope_session::SessionError::from(e).into()
    }
}

/// A channel's refusal: what the request got wrong is a 422 at its body,
/// an unknown type a 400; the engine's as the engine's.
impl From<oxiscope_channel::Error> for ApiError {
    fn from(e: oxiscope_channel::Error) -> Self {
        use oxiscope_channel::Error as E;
        match e {
            E::Invalid(d) => Self::invalid(&["body"], d, "value_error"),
            E::UnknownType(t) => Self::BadRequest(format!("Unknown channel type: {t}")),
            E::Session(e) => e.into(),
            other => Self::Internal(other.to_string()),
        }
    }
}

/// The one place the engine's refusals become HTTP statuses.
impl From<oxiscope_session::SessionError> for ApiError {
    fn from(e: oxiscope_session::SessionError) -> Self {
        use oxiscope_session::SessionError as E;
        match e {
            E::Invalid(d) => Self::BadRequest(d),
            E::Unauthorized(d) => Self::Unauthorized(d),
            E::Forbidden(d) => Self::Forbidden(d),
            E::NotFound(d) => Self::NotFound(d),
            E::Conflict(d) => Self::Conflict(d),
            E::Limit(d) => Self::TooManyRequests(d),
            E::Fields(items) => Self::Validation(items),
            E::Unprocessable(d) => Self::Status(StatusCode::UNPROCESSABLE_ENTITY, d),
            E::TooLarge(d) => Self::Status(StatusCode::PAYLOAD_TOO_LARGE, d),
            E::Unsupported(d) => Self::Status(StatusCode::UNSUPPORTED_MEDIA_TYPE, d),
            E::Timeout(d) => Self::Status(StatusCode::REQUEST_TIMEOUT, d),
            // Not 504: no gateway's upstream is meant, and not 408: the
            // client was on time.
            E::Unavailable(d) => Self::Status(StatusCode::SERVICE_UNAVAILABLE, d),
            E::Upstream {
                location,
                reason,
                rate_limited,
            } => {
                // What the hub said stays in the log.
                tracing::warn!(%location, %reason, "hub request failed");
                if rate_limited {
                    Self::Status(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "The hub is rate-limiting requests; try again later.".to_owned(),
                    )
                } else {
                    Self::Status(
                        StatusCode::BAD_GATEWAY,
                        "The hub could not be reached.".to_owned(),
                    )
                }
            }
            E::Internal(d) => Self::Internal(d),
            // A variant added to the engine answers 500 until it is mapped.
            other => Self::Internal(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = match self {
            Self::Validation(items) => json!({ "detail": items }),
            Self::Internal(detail) => {
                // The cause goes to the log (in the request's span, with
                // its id), never to the caller.
                tracing::error!(%detail, "internal error");
                json!({ "detail": "Internal Server Error" })
            }
            Self::BadRequest(d)
            | Self::Unauthorized(d)
            | Self::Forbidden(d)
            | Self::NotFound(d)
            | Self::Conflict(d)
            | Self::TooManyRequests(d)
            | Self::Status(_, d) => json!({ "detail": d }),
        };
        (status, axum::Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Log lines written into a shared buffer.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_500_logs_its_cause_and_answers_a_generic_body() {
        let logs = Captured::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .finish();
        let response = tracing::subscriber::with_default(subscriber, || {
            ApiError::Internal("the disk is on fire".to_owned()).into_response()
        });
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let logged = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
        assert!(logged.contains("ERROR"), "{logged}");
        assert!(logged.contains("the disk is on fire"), "{logged}");
        let body =
            futures_util::FutureExt::now_or_never(axum::body::to_bytes(response.into_body(), 1024))
                .unwrap()
                .unwrap();
        assert_eq!(&body[..], br#"{"detail":"Internal Server Error"}"#);
    }
}
