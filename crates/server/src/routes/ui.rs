//! The web UI: `GET /`, the interactive API reference at `GET /docs` and
//! their assets under `/ui/`, embedded in the binary and served from the
//! API's own origin.
//!
//! The UI is plain ES modules (no build step) with two vendored libraries
//! (a markdown renderer and an HTML sanitiser, each with its license) and
//! a small code highlighter of its own. Its
//! pages are not API operations, so they are not in [`super::routes`] nor
//! in the OpenAPI document. Every answer carries a strict
//! Content-Security-Policy: scripts only from this origin, no inline
//! script or style, no `eval`, no frames, no plugins, and requests only to
//! this origin (model output cannot load a tracking pixel).

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::error::ApiError;
use crate::state::AppState;

/// The policy of every UI answer.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; manifest-src 'self'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'";

/// One embedded asset: its name under `/ui/`, its type, its bytes.
type Asset = (&'static str, &'static str, &'static [u8]);

const JS: &str = "text/javascript; charset=utf-8";

/// Every file of the UI, from `crates/server/ui/`.
const ASSETS: &[Asset] = &[
    (
        "style.css",
        "text/css; charset=utf-8",
        include_bytes!("../../ui/style.css"),
    ),
    (
        "docs.css",
        "text/css; charset=utf-8",
        include_bytes!("../../ui/docs.css"),
    ),
    ("app.js", JS, include_bytes!("../../ui/app.js")),
    ("api.js", JS, include_bytes!("../../ui/api.js")),
    ("chat.js", JS, include_bytes!("../../ui/chat.js")),
    ("confirm.js", JS, include_bytes!("../../ui/confirm.js")),
    ("cron.js", JS, include_bytes!("../../ui/cron.js")),
    ("docs.js", JS, include_bytes!("../../ui/docs.js")),
    ("dom.js", JS, include_bytes!("../../ui/dom.js")),
    ("forms.js", JS, include_bytes!("../../ui/forms.js")),
    ("highlight.js", JS, include_bytes!("../../ui/highlight.js")),
    ("knowledge.js", JS, include_bytes!("../../ui/knowledge.js")),
    ("markdown.js", JS, include_bytes!("../../ui/markdown.js")),
    ("panels.js", JS, include_bytes!("../../ui/panels.js")),
    ("schedules.js", JS, include_bytes!("../../ui/schedules.js")),
    (
        "schema-view.js",
        JS,
        include_bytes!("../../ui/schema-view.js"),
    ),
    ("tools.js", JS, include_bytes!("../../ui/tools.js")),
    ("workspace.js", JS, include_bytes!("../../ui/workspace.js")),
    (
        "vendor/marked.esm.js",
        JS,
        include_bytes!("../../ui/vendor/marked.esm.js"),
    ),
    (
        "vendor/purify.es.mjs",
        JS,
        include_bytes!("../../ui/vendor/purify.es.mjs"),
    ),
    (
        "icon.svg",
        "image/svg+xml",
        include_bytes!("../../ui/icon.svg"),
    ),
];

const INDEX: &[u8] = include_bytes!("../../ui/index.html");
const DOCS: &[u8] = include_bytes!("../../ui/docs.html");
const HTML: &str = "text/html; charset=utf-8";

/// `router` with the UI's routes added.
pub(super) fn serve(router: Router<AppState>) -> Router<AppState> {
    router
        .route("/", get(index))
        .route("/docs", get(docs))
        .route("/ui/{*file}", get(asset))
}

/// `GET /`: the UI's page.
async fn index() -> Response {
    answer(HTML, INDEX)
}

/// `GET /docs`: the API reference, drawn from `/openapi.json` (as
/// FastAPI serves one at `/docs`).
async fn docs() -> Response {
    answer(HTML, DOCS)
}

/// `GET /ui/{file}`: an asset, or the API's 404.
async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some(&(_, kind, bytes)) => answer(kind, bytes),
        None => ApiError::NotFound("Not Found".to_owned()).into_response(),
    }
}

/// `bytes` as `kind`, with the UI's security headers. The assets change
/// with the binary, so browsers revalidate them (`no-cache`).
fn answer(kind: &'static str, bytes: &'static [u8]) -> Response {
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
#[path = "ui_tests.rs"]
mod tests;
