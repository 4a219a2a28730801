//! The router: AgentScope's paths and methods.

mod agent;
mod chat;
mod credential;
mod meta;
mod session;
mod stream;

use axum::Router;
use axum::http::{HeaderValue, Method, header};
use axum::routing::{get, patch, post};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::state::AppState;

pub(crate) use credential::unseal as unseal_credential;

/// The service's HTTP app over `state`.
pub fn app(state: AppState) -> Router {
    let cors = cors_layer(&state.config().cors_origins);
    let router = Router::new()
        .route("/agent/", get(agent::list).post(agent::create))
        .route("/agent/schema/v2", get(agent::schema_v2))
        .route(
            "/agent/{agent_id}",
            patch(agent::update).delete(agent::delete),
        )
        .route(
            "/credential/",
            get(credential::list).post(credential::create),
        )
        .route("/credential/schemas", get(credential::schemas))
        .route(
            "/credential/{credential_id}",
            patch(credential::update).delete(credential::delete),
        )
        .route("/model/", get(meta::models))
        .route("/health", get(meta::health))
        .route("/openapi.json", get(meta::openapi))
        .route("/sessions/", get(session::list).post(session::create))
        .route(
            "/sessions/{session_id}",
            patch(session::update).delete(session::delete),
        )
        .route("/sessions/{session_id}/messages", get(session::messages))
        .route("/sessions/{session_id}/status", get(session::status))
        .route("/sessions/{session_id}/interrupt", post(session::interrupt))
        .route("/sessions/{session_id}/stream", get(stream::stream))
        .route("/chat/", post(chat::chat))
        .fallback(meta::not_found)
        .with_state(state);
    match cors {
        Some(layer) => router.layer(layer),
        None => router,
    }
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
            ]),
    )
}
