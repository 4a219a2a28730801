//! Short bus leases that serialise a read-modify-write of a stored record
//! across tasks and replicas: a schedule and its claims, a user's schedule
//! count, a team's roster.

use std::future::Future;
use std::time::Duration;

use oxiscope_storage::RunLease;

use crate::Engine;
use crate::error::SessionError;

/// How long a replica may hold an edit lease (it is released as soon as
/// the edit is done; this only bounds a replica that dies holding it).
const EDIT_TTL: Duration = Duration::from_secs(30);

/// A lease taken with [`take`]. [`Held::release`] lets go of it; dropped
/// without that (the task holding it was cancelled), it is let go of in
/// the background rather than left to expire.
#[derive(Debug)]
pub struct Held {
    state: Engine,
    lease: Option<RunLease>,
}

impl Held {
    /// Lets go of the lease; a failure is logged (the lease then expires
    /// on its own).
    pub async fn release(mut self) {
        if let Some(lease) = self.lease.take() {
            release(&self.state, &lease).await;
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(lease) = self.lease.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let state = self.state.clone();
            runtime.spawn(async move { release(&state, &lease).await });
        }
    }
}

/// Takes the bus lease `key`, waiting up to about 5 s when `wait`; `None`
/// when it is held and `wait` is off.
///
/// # Errors
/// 409 with `busy` when it stays held; the bus's failure.
pub async fn take(
    state: &Engine,
    key: &str,
    wait: bool,
    busy: &str,
) -> Result<Option<Held>, SessionError> {
    for _ in 0..250 {
        if let Some(lease) = state.bus().try_lock(key, EDIT_TTL).await? {
            return Ok(Some(Held {
                state: state.clone(),
                lease: Some(lease),
            }));
        }
        if !wait {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err(SessionError::Conflict(busy.to_owned()))
}

async fn release(state: &Engine, lease: &RunLease) {
    if let Err(e) = state.bus().unlock(lease).await {
        tracing::warn!(key = lease.session_id.as_str(), error = %e, "releasing an edit lease failed");
    }
}

/// Runs `work` holding the lease `key` (waiting for it as [`take`] does),
/// renewing it while `work` runs (an upload may take minutes), and
/// releases the lease whatever `work` returns.
///
/// # Errors
/// 409 with `busy` when the lease stays held; the bus's failure; `work`'s.
pub async fn under<T, E>(
    state: &Engine,
    key: &str,
    busy: &str,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, E>
where
    E: From<SessionError>,
{
    let Some(held) = take(state, key, true, busy).await? else {
        return Err(SessionError::Conflict(busy.to_owned()).into());
    };
    let renewing = async {
        loop {
            tokio::time::sleep(EDIT_TTL / 3).await;
            if let Some(lease) = &held.lease
                && let Err(e) = state.bus().renew(lease, EDIT_TTL).await
            {
                tracing::warn!(key, error = %e, "renewing an edit lease failed");
            }
        }
    };
    let outcome = tokio::select! {
        outcome = work => outcome,
        () = renewing => unreachable!("the renewal loop never ends"),
    };
    held.release().await;
    outcome
}

/// Runs `work` in a task of its own and waits for it: cancelling the
/// caller (an interrupted reply dropping its tool calls) does not stop
/// `work` halfway. For tools whose steps must not be cut apart (records
/// created, enlisted and deleted together).
///
/// # Errors
/// 500 when `work` panicked.
pub async fn detached<T: Send + 'static>(
    work: impl Future<Output = T> + Send + 'static,
) -> Result<T, SessionError> {
    tokio::spawn(work)
        .await
        .map_err(|e| SessionError::Internal(format!("a tool's task failed: {e}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_dropped_lease_is_let_go_of_and_detached_work_finishes() {
        let dir = tempfile::tempdir().unwrap();
        let (state, _) = crate::testing::service(dir.path()).await;
        let held = take(&state, "k", false, "busy").await.unwrap().unwrap();
        assert!(take(&state, "k", false, "busy").await.unwrap().is_none());
        drop(held);
        // Released in the background, well before the lease would expire.
        let again = take(&state, "k", true, "busy").await.unwrap();
        assert!(again.is_some());
        again.unwrap().release().await;

        // The caller gives up; the work goes on to its end.
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        let work = detached(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            flag.store(true, Ordering::SeqCst);
        });
        let gave_up = tokio::time::timeout(std::time::Duration::from_millis(5), work).await;
        assert!(gave_up.is_err());
        for _ in 0..500 {
            if done.load(Ordering::SeqCst) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(done.load(Ordering::SeqCst));
    }
}
