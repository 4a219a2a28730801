//! How long a request may take to be answered: which routes are uploads
//! or event streams, and the answer of one that ran out of time.

use std::time::Duration;

use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::ListenLimits;

/// The time bound of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bound {
    /// Answered within the request timeout.
    Ordinary,
    /// A file sent in the body: within the upload timeout.
    Upload,
    /// A session's event stream (SSE): open as long as the client wants;
    /// its heartbeats keep the connection busy.
    Stream,
}

impl Bound {
    /// How long a request of this kind may take; `None`: unbounded.
    pub(super) fn limit(self, limits: &ListenLimits) -> Option<Duration> {
        match self {
            Self::Ordinary => Some(limits.request_timeout),
            Self::Upload => Some(limits.upload_timeout),
            Self::Stream => None,
        }
    }
}

/// The bound of `method path`: `GET /sessions/{id}/stream` is a stream;
/// `POST /knowledge_bases/{id}/documents` and `POST /workspace/skill/upload`
/// are uploads (each counts and limits its own bytes); the rest are
/// ordinary.
pub(super) fn bound(method: &Method, path: &str) -> Bound {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match (method.as_str(), parts.as_slice()) {
        ("GET", ["sessions", id, "stream"]) if !id.is_empty() => Bound::Stream,
        ("POST", ["knowledge_bases", id, "documents"]) if !id.is_empty() => Bound::Upload,
        ("POST", ["workspace", "skill", "upload"]) => Bound::Upload,
        _ => Bound::Ordinary,
    }
}

/// The answer to a request that was not answered within `limit`: `503`
/// with a `detail` naming the setting (not `408`, which browsers retry on
/// their own).
pub(super) fn too_slow(bound: Bound, limit: Duration) -> Response {
    let flag = match bound {
        Bound::Upload => "--upload-timeout-secs",
        Bound::Ordinary | Bound::Stream => "--request-timeout-secs",
    };
    let detail = format!(
        "The request was not answered within {} s (the server's request time limit, {flag}).",
        limit.as_secs()
    );
    (
        StatusCode::SERVICE_UNAVAILABLE,
        axum::Json(json!({ "detail": detail })),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::{Verb, routes};

    /// A route's path with each `{param}` filled in.
    fn concrete(template: &str) -> String {
        template
            .split('/')
            .map(|part| if part.starts_with('{') { "x1" } else { part })
            .collect::<Vec<_>>()
            .join("/")
    }

    #[test]
    fn only_the_event_stream_and_the_two_uploads_leave_the_request_timeout() {
        let mut special: Vec<(Bound, &str, &str)> = Vec::new();
        for route in routes() {
            let (verb, path) = (route.verb, route.path);
            let method = match verb {
                Verb::Get => Method::GET,
                Verb::Post => Method::POST,
                Verb::Patch => Method::PATCH,
                Verb::Delete => Method::DELETE,
            };
            let found = bound(&method, &concrete(path));
            if found != Bound::Ordinary {
                special.push((found, verb.as_str(), path));
            }
        }
        assert_eq!(
            special,
            [
                (Bound::Stream, "get", "/sessions/{session_id}/stream"),
                (Bound::Upload, "post", "/workspace/skill/upload"),
                (
                    Bound::Upload,
                    "post",
                    "/knowledge_bases/{knowledge_base_id}/documents"
                ),
            ]
        );
        assert_eq!(bound(&Method::GET, "/sessions//stream"), Bound::Ordinary);
        assert_eq!(bound(&Method::POST, "/sessions/a/stream"), Bound::Ordinary);
        let limits = ListenLimits::default();
        assert_eq!(Bound::Stream.limit(&limits), None);
        assert_eq!(Bound::Upload.limit(&limits), Some(limits.upload_timeout));
    }
}
