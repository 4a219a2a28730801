//! A user's run slots: the operator's `max_concurrent_runs_per_user` as
//! that many bus leases (`run-slot:<user>:<n>`), so the cap holds across
//! replicas. A run holds one slot while it runs, renewing it as it renews
//! its session's lock; a replica that dies leaves its slots to expire with
//! the lock TTL.

use oxiscope_storage::RunLease;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::Engine;
use crate::error::{SessionError, SessionResult};

/// One of a user's run slots; dropped, it is let go of.
#[derive(Debug)]
pub struct RunSlot {
    state: Engine,
    lease: Option<RunLease>,
    _renewing: DropGuard,
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        if let Some(lease) = self.lease.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let state = self.state.clone();
            runtime.spawn(async move {
                if let Err(e) = state.bus().unlock(&lease).await {
                    tracing::warn!(key = lease.session_id, error = %e, "releasing a run slot failed");
                }
            });
        }
    }
}

/// A free run slot of `user`, or `None` when all of them are taken.
///
/// # Errors
/// The bus's failure.
pub async fn try_take(state: &Engine, user: &str) -> SessionResult<Option<RunSlot>> {
    let ttl = state.config().lock_ttl;
    let most = state.config().policy.max_concurrent_runs_per_user;
    for n in 0..most {
        let key = format!("run-slot:{user}:{n}");
        if let Some(lease) = state.bus().try_lock(&key, ttl).await? {
            let stop = CancellationToken::new();
            tokio::spawn(renew(state.clone(), lease.clone(), stop.clone()));
            return Ok(Some(RunSlot {
                state: state.clone(),
                lease: Some(lease),
                _renewing: stop.drop_guard(),
            }));
        }
    }
    Ok(None)
}

/// A free run slot of `user` for a chat the user starts.
///
/// # Errors
/// 429 naming `max_concurrent_runs_per_user` when all are taken; the
/// bus's failure.
pub async fn take_for_chat(state: &Engine, user: &str) -> SessionResult<RunSlot> {
    try_take(state, user).await?.ok_or_else(|| {
        let most = state.config().policy.max_concurrent_runs_per_user;
        SessionError::Limit(format!(
            "You have {most} chats running at once, the most this server allows \
             (operator policy max_concurrent_runs_per_user); wait for one to finish."
        ))
    })
}

/// Renews `lease` every third of the lock TTL until `stop`.
async fn renew(state: Engine, lease: RunLease, stop: CancellationToken) {
    let ttl = state.config().lock_ttl;
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(ttl / 3) => {}
        }
        match state.bus().renew(&lease, ttl).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(key = lease.session_id, "a run slot expired");
                return;
            }
            Err(e) => {
                tracing::warn!(key = lease.session_id, error = %e, "renewing a run slot failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn a_user_gets_as_many_slots_as_the_policy_says_and_others_are_apart() {
        let dir = tempfile::tempdir().unwrap();
        let (state, _) = crate::testing::service_with(dir.path(), |mut c| {
            c.policy.max_concurrent_runs_per_user = 2;
            c
        })
        .await;
        let first = take_for_chat(&state, "u").await.unwrap();
        let _second = take_for_chat(&state, "u").await.unwrap();
        let refused = take_for_chat(&state, "u").await.unwrap_err();
        assert!(
            matches!(refused, crate::SessionError::Limit(_)),
            "{refused:?}"
        );
        assert!(
            refused.to_string().contains("max_concurrent_runs_per_user"),
            "{refused}"
        );
        assert!(try_take(&state, "v").await.unwrap().is_some());
        drop(first);
        // Let go of in the background.
        for _ in 0..100 {
            if try_take(&state, "u").await.unwrap().is_some() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the dropped slot was not let go of");
    }
}
