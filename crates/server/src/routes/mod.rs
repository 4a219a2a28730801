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
mod trace;
mod ui;
mod usage;
mod workspace;

use std::sync::Arc;

use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::routing::{MethodFilter, MethodRouter, on};
use axum::{Extension, Json, Router, middleware};
use serde_json::{Value, json};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::auth::{AuthMode, dev_host_guard};
use crate::state::AppState;

pub(crate) use off::{Answer as OffAnswer, OFF};

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
        (Get, "/schedule/", |m| on(m, schedule::list)),
        (Post, "/schedule/", |m| on(m, schedule::create)),
        (Patch, "/schedule/{schedule_id}", |m| {
            on(m, schedule::update)
        }),
        (Delete, "/schedule/{schedule_id}", |m| {
            on(m, schedule::delete)
        }),
        (Get, "/schedule/{schedule_id}/sessions", |m| {
            on(m, schedule::sessions)
        }),
        (Get, "/model/", |m| on(m, meta::models)),
        (Get, "/embedding-model/", |m| on(m, meta::embedding_models)),
        (Get, "/tts-model/", |m| on(m, meta::tts_models)),
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
        (Get, "/channels/types", |m| on(m, channel::types)),
        (Get, "/channels/", |m| on(m, channel::list)),
        (Post, "/channels/", |m| on(m, channel::create)),
        (Post, "/channels/bindings", |m| {
            on(m, channel::start_binding)
        }),
        (Get, "/channels/bindings/{binding_id}", |m| {
            on(m, channel::poll_binding)
        }),
        (Post, "/channels/bindings/{binding_id}/cancel", |m| {
            on(m, channel::cancel_binding)
        }),
        (Get, "/channels/{channel_id}", |m| on(m, channel::get)),
        (Patch, "/channels/{channel_id}", |m| on(m, channel::update)),
        (Delete, "/channels/{channel_id}", |m| on(m, channel::delete)),
        (Post, "/channels/{channel_id}/enable", |m| {
            on(m, channel::enable)
        }),
        (Post, "/channels/{channel_id}/disable", |m| {
            on(m, channel::disable)
        }),
        (Get, "/channels/{channel_id}/status", |m| {
            on(m, channel::status)
        }),
        (Get, "/channels/{channel_id}/sessions", |m| {
            on(m, channel::sessions)
        }),
        (Get, "/channels/{channel_id}/chat_ids", |m| {
            on(m, channel::chat_ids)
        }),
        (Post, "/channels/{channel_id}/webhook", |m| {
            on(m, channel::webhook)
        }),
        (Get, "/usage", |m| on(m, usage::usage)),
        (Get, "/hub/mcp", |m| on(m, hub::mcp_hubs)),
        (Get, "/hub/mcp/{hub_id}/cards", |m| on(m, hub::mcp_cards)),
        (Get, "/hub/mcp/{hub_id}/cards/{card_id}", |m| {
            on(m, hub::mcp_card)
        }),
        (Post, "/hub/mcp/{hub_id}/cards/{card_id}/install", |m| {
            on(m, hub::install_mcp)
        }),
        (Get, "/hub/skill", |m| on(m, hub::skill_hubs)),
        (Get, "/hub/skill/{hub_id}/cards", |m| {
            on(m, hub::skill_cards)
        }),
        (Get, "/hub/skill/{hub_id}/cards/{card_id}", |m| {
            on(m, hub::skill_card)
        }),
        (Post, "/hub/skill/{hub_id}/cards/{card_id}/install", |m| {
            on(m, hub::install_skill)
        }),
        (Get, "/mcp", |m| on(m, library::list_mcps)),
        (Patch, "/mcp/{mcp_id}", |m| on(m, library::update_mcp)),
        (Delete, "/mcp/{mcp_id}", |m| on(m, library::delete_mcp)),
        (Get, "/skill", |m| on(m, library::list_skills)),
        (Get, "/skill/{skill_id}", |m| on(m, library::get_skill)),
        (Delete, "/skill/{skill_id}", |m| {
            on(m, library::delete_skill)
        }),
        (Post, "/workspace/mcp/from-library", |m| {
            on(m, library::add_mcps)
        }),
        (Post, "/workspace/skill/from-library", |m| {
            on(m, library::add_skills)
        }),
        (Get, "/workspace/mcp", |m| on(m, workspace::list_mcps)),
        (Post, "/workspace/mcp", |m| on(m, workspace::add_mcp)),
        (Delete, "/workspace/mcp/{mcp_name}", |m| {
            on(m, workspace::remove_mcp)
        }),
        (Get, "/workspace/skill", |m| on(m, workspace::list_skills)),
        (Post, "/workspace/skill", |m| on(m, workspace::add_skill)),
        (Post, "/workspace/skill/upload", |m| {
            on(m, workspace::upload_skill).layer(axum::extract::DefaultBodyLimit::max(
                workspace::UPLOAD_BODY_LIMIT,
            ))
        }),
        (Delete, "/workspace/skill/{skill_name}", |m| {
            on(m, workspace::remove_skill)
        }),
        (Get, "/workspace/directories", |m| {
            on(m, workspace::directories)
        }),
        (Get, "/workspace/status", |m| on(m, workspace::status)),
        (Post, "/workspace/files/download-token", |m| {
            on(m, workspace::download_token)
        }),
        (Get, "/workspace/files", |m| on(m, workspace::read_file)),
        (Get, "/knowledge_bases/embedding_models", |m| {
            on(m, knowledge::embedding_models)
        }),
        (Get, "/knowledge_bases/chunkers", |m| {
            on(m, knowledge::chunkers)
        }),
        (Get, "/knowledge_bases/middleware/parameters_schema", |m| {
            on(m, knowledge::middleware_schema)
        }),
        (Get, "/knowledge_bases/supported_content_types", |m| {
            on(m, knowledge::content_types)
        }),
        (Post, "/knowledge_bases/", |m| on(m, knowledge::create)),
        (Get, "/knowledge_bases/", |m| on(m, knowledge::list)),
        (Patch, "/knowledge_bases/{knowledge_base_id}", |m| {
            on(m, knowledge::update)
        }),
        (Delete, "/knowledge_bases/{knowledge_base_id}", |m| {
            on(m, knowledge::delete)
        }),
        (Get, "/knowledge_bases/{knowledge_base_id}/documents", |m| {
            on(m, knowledge::list_documents)
        }),
        (
            Post,
            "/knowledge_bases/{knowledge_base_id}/documents",
            |m| {
                // The upload limit is the service's (configurable); it counts
                // the file's bytes as they stream.
                on(m, knowledge::upload).layer(axum::extract::DefaultBodyLimit::disable())
            },
        ),
        (
            Get,
            "/knowledge_bases/{knowledge_base_id}/documents/status",
            |m| on(m, knowledge::statuses),
        ),
        (
            Delete,
            "/knowledge_bases/{knowledge_base_id}/documents/{document_id}",
            |m| on(m, knowledge::delete_document),
        ),
        (
            Get,
            "/knowledge_bases/{knowledge_base_id}/documents/{document_id}",
            |m| on(m, knowledge::download),
        ),
        (Post, "/knowledge_bases/{knowledge_base_id}/search", |m| {
            on(m, knowledge::search)
        }),
        (
            Get,
            "/knowledge_bases/{knowledge_base_id}/documents/{document_id}/chunks",
            |m| on(m, knowledge::chunks),
        ),
        (
            Post,
            "/knowledge_bases/{knowledge_base_id}/documents/{document_id}/download_token",
            |m| on(m, knowledge::download_token),
        ),
    ]
};

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
        let served = ROUTES
            .iter()
            .filter(|(_, p, _)| *p == path)
            .map(|&(verb, _, handler)| handler(verb.filter()));
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

/// The distinct paths of [`ROUTES`] and the off routes, in table order.
fn paths() -> Vec<&'static str> {
    let mut paths: Vec<&'static str> = Vec::new();
    let off = off::OFF.iter().map(|&(_, path, _, _)| path);
    for path in ROUTES.iter().map(|&(_, path, _)| path).chain(off) {
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
