//! The Prometheus metrics router (the engine keeps the counters; see
//! `oxiscope_session::Metrics`).
//!
//! The metrics are served on their own router, meant for a separate
//! listener (`oxiscope serve --metrics --metrics-addr`, loopback by
//! default): they count every tenant's activity, so they never share the
//! tenants' address and need no credential of theirs.

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::state::AppState;

/// The metrics router: `GET /metrics`, Prometheus text format, no
/// authentication. Serve it on an address tenants cannot reach (see the
/// module docs); it is not part of [`crate::app`].
pub fn metrics_app(state: AppState) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .with_state(state)
}

/// Serves [`metrics_app`] on `listener` until the state's shutdown token
/// fires (as [`crate::serve`] does on its signal).
///
/// # Errors
/// The listener's I/O error.
pub async fn serve_metrics(
    listener: tokio::net::TcpListener,
    state: AppState,
) -> std::io::Result<()> {
    let stop = state.shutdown_token().clone();
    axum::serve(listener, metrics_app(state))
        .with_graceful_shutdown(async move { stop.cancelled().await })
        .await
}

async fn scrape(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics_text(),
    )
}
