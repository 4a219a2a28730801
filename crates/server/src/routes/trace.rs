//! One span per request, and its request id.
//!
//! A request keeps the caller's `x-request-id` when it is a short token
//! (1 to 64 of `A-Z a-z 0-9 - _ .`), else gets a fresh one; the response
//! carries it back in `x-request-id`. The span holds the id, the method,
//! the route (the matched pattern, `-` when none matched) and the path;
//! the request's end is logged in it with the status and the latency, at
//! `error` for a 5xx and `info` otherwise. Headers and bodies are never
//! logged: they carry `Authorization` and tenants' data.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument as _;

/// The request id header.
pub(crate) static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The longest request id taken from a caller.
const MAX_ID_LEN: usize = 64;

/// Runs the request in its span and stamps the response with its id.
pub(crate) async fn trace_request(req: Request, next: Next) -> Response {
    let id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|id| is_sane_id(id))
        .map_or_else(|| uuid::Uuid::new_v4().simple().to_string(), str::to_owned);
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("-", MatchedPath::as_str)
        .to_owned();
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        method = %req.method(),
        route,
        path = req.uri().path(),
    );
    let started = Instant::now();
    let mut response = next.run(req).instrument(span.clone()).await;
    // Microsecond precision, without float noise in the log.
    let latency_ms = (started.elapsed().as_secs_f64() * 1e6).round() / 1e3;
    let status = response.status().as_u16();
    span.in_scope(|| {
        if response.status().is_server_error() {
            tracing::error!(status, latency_ms, "request failed");
        } else {
            tracing::info!(status, latency_ms, "request finished");
        }
    });
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID.clone(), value);
    }
    response
}

/// A short token: safe to log and to echo.
fn is_sane_id(id: &str) -> bool {
    (1..=MAX_ID_LEN).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::is_sane_id;

    #[test]
    fn only_short_plain_tokens_are_kept_as_request_ids() {
        for ok in ["abc", "0f3c-9a_b.c", &"a".repeat(64)] {
            assert!(is_sane_id(ok), "{ok}");
        }
        for bad in [
            "",
            &"a".repeat(65),
            "a b",
            "a\tb",
            "id\"x",
            "ä",
            "a/b",
            "x=y",
        ] {
            assert!(!is_sane_id(bad), "{bad}");
        }
    }
}
