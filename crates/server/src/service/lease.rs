//! Short bus leases that serialise a read-modify-write of a stored record
//! across tasks and replicas: a schedule and its claims, a user's schedule
//! count, a team's roster.

use std::future::Future;
use std::time::Duration;

use oxiscope_storage::RunLease;

use crate::error::ApiError;
use crate::state::AppState;

/// How long a replica may hold an edit lease (it is released as soon as
/// the edit is done; this only bounds a replica that dies holding it).
const EDIT_TTL: Duration = Duration::from_secs(30);

/// Takes the bus lease `key`, waiting up to about 2 s when `wait`; `None`
/// when it is held and `wait` is off.
///
/// # Errors
/// 409 with `busy` when it stays held; the bus's failure.
pub(crate) async fn take(
    state: &AppState,
    key: &str,
    wait: bool,
    busy: &str,
) -> Result<Option<RunLease>, ApiError> {
    for _ in 0..100 {
        if let Some(lease) = state.bus().try_lock(key, EDIT_TTL).await? {
            return Ok(Some(lease));
        }
        if !wait {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err(ApiError::Conflict(busy.to_owned()))
}

/// Lets go of a lease taken with [`take`]; a failure is logged (the lease
/// then expires on its own).
pub(crate) async fn release(state: &AppState, lease: &RunLease) {
    if let Err(e) = state.bus().unlock(lease).await {
        tracing::warn!(key = lease.session_id.as_str(), error = %e, "releasing an edit lease failed");
    }
}

/// Runs `work` holding the lease `key` (waiting for it as [`take`] does),
/// and releases the lease whatever `work` returns.
///
/// # Errors
/// 409 with `busy` when the lease stays held; the bus's failure; `work`'s.
pub(crate) async fn under<T, E>(
    state: &AppState,
    key: &str,
    busy: &str,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, E>
where
    E: From<ApiError>,
{
    let Some(lease) = take(state, key, true, busy).await? else {
        return Err(ApiError::Conflict(busy.to_owned()).into());
    };
    let outcome = work.await;
    release(state, &lease).await;
    outcome
}
