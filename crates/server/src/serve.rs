//! Serving the app with a graceful shutdown.

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::routes::app;
use crate::state::AppState;

/// Serves [`app`] on `listener` until `signal` completes, then shuts down
/// gracefully: running replies are interrupted and persist their state,
/// open streams end, and in-flight requests finish.
///
/// # Errors
/// The listener's I/O error.
///
/// # Cancel safety
/// Not cancel safe: dropping the future drops the server without
/// persisting running replies; complete `signal` instead.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    signal: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = app(state.clone());
    let stopping = state.clone();
    // Idle workspaces are closed (their MCP servers stopped) once a minute.
    let sweeper = state
        .workspaces()
        .spawn_sweeper(Duration::from_secs(60), state.shutdown_token().clone());
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            signal.await;
            stopping.shutdown().await;
        })
        .await?;
    sweeper.abort();
    Ok(())
}
