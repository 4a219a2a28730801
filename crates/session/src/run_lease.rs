//! Keeping a run's lease: renewed while the run goes on, checked before
//! each reply.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Whether `lease` still owns the session (renewing it): `false` once
/// another replica took the session over.
pub(super) async fn still_holds(state: &Engine, lease: &RunLease) -> bool {
    // Unknown (the bus failed): behave as the holder.
    state
        .bus()
        .renew(lease, state.config().lock_ttl)
        .await
        .unwrap_or(true)
}

/// Renews the lease every third of its lifetime until `done`. A lost lease
/// (another replica took the session over) interrupts the run through
/// `run`: its commits are fenced off by then, so it stops.
pub(super) async fn keep_lease(
    state: Engine,
    lease: RunLease,
    done: CancellationToken,
    run: CancellationToken,
) {
    let ttl = state.config().lock_ttl;
    loop {
        tokio::select! {
            () = done.cancelled() => return,
            () = tokio::time::sleep(ttl / 3) => {}
        }
        match state.bus().renew(&lease, ttl).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::error!(session_id = lease.session_id, "the run lock was lost");
                run.cancel();
                return;
            }
            Err(e) => tracing::warn!(session_id = lease.session_id, error = %e, "renewing failed"),
        }
    }
}
