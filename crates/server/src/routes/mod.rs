//! The router: AgentScope's paths and methods, from one table.

mod agent;
mod chat;
mod credential;
mod health;
mod meta;
mod session;
mod stream;
mod trace;

use std::sync::Arc;

use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::routing::{MethodFilter, MethodRouter, on};
use axum::{Extension, Json, Router, middleware};
use serde_json::{Value, json};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::auth::{AuthMode, dev_host_guard};
use crate::state::AppState;

pub(crate) use credential::unseal as unseal_credential;

/// An HTTP method the service serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Get,
    Post,
    Patch,
    Delete,
}

impl Verb {
    /// The OpenAPI spelling: `get`, `post`, ...
    #[cfg(test)]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::Post => "post",
            Self::Patch => "patch",
            Self::Delete => "delete",
        }
    }

    fn filter(self) -> MethodFilter {
        match self {
            Self::Get => MethodFilter::GET,
            Self::Post => MethodFilter::POST,
            Self::Patch => MethodFilter::PATCH,
            Self::Delete => MethodFilter::DELETE,
        }
    }
}

/// One route: method, path, and its handler for that method.
pub(crate) type Route = (
    Verb,
    &'static str,
    fn(MethodFilter) -> MethodRouter<AppState>,
);

/// Every route of the service. The router is built from this table alone,
/// and a test holds the OpenAPI document to it: add a route here, and to
/// `openapi.rs`.
pub(crate) const ROUTES: &[Route] = {
    use Verb::{Delete, Get, Patch, Post};
    &[
        (Get, "/agent/", |m| on(m, agent::list)),
        (Post, "/agent/", |m| on(m, agent::create)),
        (Get, "/agent/schema/v2", |m| on(m, agent::schema_v2)),
        (Patch, "/agent/{agent_id}", |m| on(m, agent::update)),
        (Delete, "/agent/{agent_id}", |m| on(m, agent::delete)),
        (Get, "/credential/", |m| on(m, credential::list)),
        (Post, "/credential/", |m| on(m, credential::create)),
        (Get, "/credential/schemas", |m| on(m, credential::schemas)),
        (Patch, "/credential/{credential_id}", |m| {
            on(m, credential::update)
        }),
        (Delete, "/credential/{credential_id}", |m| {
            on(m, credential::delete)
        }),
        (Get, "/model/", |m| on(m, meta::models)),
        (Get, "/health", |m| on(m, health::health)),
        (Get, "/openapi.json", |m| on(m, meta::openapi)),
        (Get, "/sessions/", |m| on(m, session::list)),
        (Post, "/sessions/", |m| on(m, session::create)),
        (Patch, "/sessions/{session_id}", |m| on(m, session::update)),
        (Delete, "/sessions/{session_id}", |m| on(m, session::delete)),
        (Get, "/sessions/{session_id}/messages", |m| {
            on(m, session::messages)
        }),
        (Get, "/sessions/{session_id}/status", |m| {
            on(m, session::status)
        }),
        (Post, "/sessions/{session_id}/interrupt", |m| {
            on(m, session::interrupt)
        }),
        (Get, "/sessions/{session_id}/stream", |m| {
            on(m, stream::stream)
        }),
        (Post, "/chat/", |m| on(m, chat::chat)),
    ]
};

/// The service's HTTP app over `state`.
///
/// Every request runs in a span with a request id (echoed in
/// `x-request-id`); under [`AuthMode::DevHeader`] requests must name this
/// server in `Host` and `Origin` (see [`crate::ServerConfig::listen_addr`]).
pub fn app(state: AppState) -> Router {
    let cors = cors_layer(&state.config().cors_origins);
    let dev_auth = state.config().auth == AuthMode::DevHeader;
    let mut router = Router::new();
    for path in paths() {
        let methods = ROUTES
            .iter()
            .filter(|(_, p, _)| *p == path)
            .map(|&(verb, _, handler)| handler(verb.filter()))
            .reduce(MethodRouter::merge)
            .unwrap_or_default();
        router = router.route(path, methods.fallback(method_not_allowed));
    }
    let mut router = router
        .fallback(meta::not_found)
        .layer(Extension(Arc::new(health::HealthChecks::default())))
        .with_state(state.clone());
    // Layers added later run first: request span, then the host check,
    // then CORS.
    if let Some(layer) = cors {
        router = router.layer(layer);
    }
    if dev_auth {
        router = router.layer(middleware::from_fn_with_state(state, dev_host_guard));
    }
    router.layer(middleware::from_fn(trace::trace_request))
}

/// The distinct paths of [`ROUTES`], in table order.
fn paths() -> Vec<&'static str> {
    let mut paths: Vec<&'static str> = Vec::new();
    for &(_, path, _) in ROUTES {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

/// A known path with another method: FastAPI's 405 body (axum adds the
/// `Allow` header).
async fn method_not_allowed() -> (StatusCode, Json<Value>) {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        Json(json!({"detail": "Method Not Allowed"})),
    )
}

/// CORS for the configured origins; `None` (off) when there are none.
fn cors_layer(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST, Method::PATCH, Method::DELETE])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                header::HeaderName::from_static("x-user-id"),
                trace::REQUEST_ID.clone(),
            ])
            .expose_headers([trace::REQUEST_ID.clone()]),
    )
}

#[cfg(test)]
#[path = "routes_tests.rs"]
mod tests;
