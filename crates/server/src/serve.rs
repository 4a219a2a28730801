//! Serving the app with a graceful shutdown.

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::listen::{ListenLimits, listen};
use crate::routes::app;
use crate::state::AppState;

/// Serves [`app`] on `listener` under `limits` (see [`listen`]) until
/// `signal` completes, then shuts down gracefully: running replies are
/// interrupted and persist their state, open streams end, and in-flight
/// requests finish.
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
    limits: ListenLimits,
    signal: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    clear_staging(state.data_dir());
    let router = app(state.clone());
    // Documents a stopped server left unfinished are indexed again.
    if let Err(e) = state.resume_knowledge_indexing().await {
        tracing::error!("cannot resume knowledge-base indexing: {e}");
    }
    let stopping = state.clone();
    // Idle workspaces are closed (their MCP servers stopped) once a minute.
    let sweeper = state
        .workspaces()
        .spawn_sweeper(Duration::from_secs(60), state.shutdown_token().clone());
    // Runs whose runner died (on any replica) are ended.
    let takeover = crate::service::takeover::spawn_sweeper(state.engine().clone());
    // Schedules fire (each occurrence once across replicas).
    let scheduler = crate::service::scheduler::spawn_scheduler(state.engine().clone());
    // Background tool calls: heartbeats, and those of stopped processes
    // (this one's previous run included) are reported or delivered.
    let keeper = crate::service::offload::spawn_keeper(state.engine().clone());
    // Every enabled channel connects (each message is handled once across
    // replicas).
    let channels = state.clone();
    tokio::spawn(async move {
        match channels.channels().start_enabled().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(channels = n, "channels started"),
            Err(e) => tracing::error!("cannot start the channels: {e}"),
        }
    });
    let recovering = state.clone();
    tokio::spawn(async move {
        if let Err(e) = recovering.recover_background_tasks().await {
            tracing::error!("cannot take over background tool calls: {e}");
        }
    });
    let shutdown = async move {
        signal.await;
        stopping.shutdown().await;
    };
    listen(listener, router, limits, shutdown).await?;
    state.channels().stop_all().await;
    sweeper.abort();
    takeover.abort();
    scheduler.abort();
    keeper.abort();
    Ok(())
}

/// Removes what skill installs left in `<data_dir>/staging` when an
/// earlier process died mid-install (each install removes its own when it
/// ends). Best effort: a failure is logged.
fn clear_staging(data_dir: &std::path::Path) {
    let staging = data_dir.join("staging");
    match std::fs::remove_dir_all(&staging) {
        Ok(()) => {
            tracing::info!(dir = %staging.display(), "removed stale skill staging");
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!(dir = %staging.display(), "cannot remove stale skill staging: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_staging_is_removed_and_a_missing_one_is_fine() {
        let dir = tempfile::tempdir().unwrap();
        let left = dir.path().join("staging/abc/skill");
        std::fs::create_dir_all(&left).unwrap();
        std::fs::write(left.join("SKILL.md"), "x").unwrap();
        clear_staging(dir.path());
        assert!(!dir.path().join("staging").exists());
        clear_staging(dir.path());
        assert!(dir.path().exists());
    }
}
