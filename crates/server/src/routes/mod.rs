//! The router: AgentScope's paths and methods, from one table.

pub(crate) mod agent;
mod channel;
mod chat;
mod credential;
mod health;
mod hub;
mod knowledge;
mod library;
mod meta;
mod off;
mod schedule;
mod session;
mod stream;
mod table;
mod trace;
mod ui;
mod usage;
mod workspace;

use std::sync::Arc;

use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::routing::MethodRouter;
use axum::{Extension, Json, Router, middleware};
use serde_json::{Value, json};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::auth::{AuthMode, dev_host_guard};
use crate::state::AppState;

pub(crate) use off::{Answer as OffAnswer, OFF};
pub(crate) use table::{Access, Query, Reply, Route, Verb};

/// Every route of the service, family by family: the router and the
/// OpenAPI document are both built from these rows (plus [`OFF`]). A new
/// family is one module exporting its `ROUTES`, listed here.
const FAMILIES: &[&[Route]] = &[
    agent::ROUTES,
    chat::ROUTES,
    usage::ROUTES,
    credential::ROUTES,
    health::ROUTES,
    meta::ROUTES,
    session::ROUTES,
    hub::ROUTES,
    library::ROUTES,
    workspace::ROUTES,
    knowledge::ROUTES,
    schedule::ROUTES,
    channel::ROUTES,
];

/// Every served route, in table order.
pub(crate) fn routes() -> impl Iterator<Item = &'static Route> {
    FAMILIES.iter().flat_map(|family| family.iter())
}

/// The service's HTTP app over `state`.
///
/// Every request runs in a span with a request id (echoed in
/// `x-request-id`); under [`AuthMode::DevHeader`] requests must name this
/// server in `Host` and `Origin` (see [`crate::ServerConfig::listen_addr`]).
pub fn app(state: AppState) -> Router {
    let cors = cors_layer(&state.edge().cors_origins);
    let dev_auth = state.edge().auth == AuthMode::DevHeader;
    let mut router = Router::new();
    for path in paths() {
        let served = routes()
            .filter(|r| r.path == path)
            .map(|r| (r.handler)(r.verb.filter()));
        let off = off::OFF
            .iter()
            .filter(|(_, p, _, _)| *p == path)
            .map(|&(verb, _, user, answer)| off::handler(verb.filter(), user, answer));
        let methods = served
            .chain(off)
            .reduce(MethodRouter::merge)
            .unwrap_or_default();
        router = router.route(path, methods.fallback(method_not_allowed));
    }
    let mut router = ui::serve(router)
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

/// The distinct paths of [`routes`] and the off routes, in table order.
fn paths() -> Vec<&'static str> {
    let mut paths: Vec<&'static str> = Vec::new();
    let off = off::OFF.iter().map(|&(_, path, _, _)| path);
    for path in routes().map(|r| r.path).chain(off) {
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
            .expose_headers([trace::REQUEST_ID.clone()])
            // Browsers reuse the preflight answer this long instead of
            // sending one before every request.
            .max_age(std::time::Duration::from_secs(CORS_MAX_AGE_SECS)),
    )
}

/// How long, in seconds, a browser may reuse a CORS preflight answer.
const CORS_MAX_AGE_SECS: u64 = 600;

#[cfg(test)]
#[path = "routes_tests.rs"]
mod tests;
