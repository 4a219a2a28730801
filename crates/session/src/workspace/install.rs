//! The shared side of a skill install, whatever its source: a turn (one
//! per user, within the server's few slots), the time limit of the whole
//! request, and the final copy into the workspace.
//!
//! A request past [`EngineConfig::skill_install_limit`] is cut off: it
//! answers at once and drops its turn, so a stalled hub, upload or copy
//! holds a slot for at most that long. Blocking work it started finishes
//! on its own thread and removes its staging; a copy into the workspace
//! that ends after the cut-off takes its skill back out, so a request
//! that was cut off installs nothing.
//!
//! [`EngineConfig::skill_install_limit`]: crate::EngineConfig::skill_install_limit

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use oxiscope_workspace::Workspace;
use tokio::time::Instant;

use super::{SessionError, SessionResult};
use crate::Engine;

/// Skills staged at once in this process (each may hold up to the
/// skill limits on disk); more installs wait their turn.
static INSTALL_SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(4);

/// One lock per user with an install under way or waiting: a user stages
/// one skill at a time, so one tenant's stalled uploads hold at most one
/// of the [`INSTALL_SLOTS`] and never all of them.
static USER_TURNS: LazyLock<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> =
    LazyLock::new(Mutex::default);

/// A user's turn to stage a skill: their own lock, then a slot.
#[allow(missing_debug_implementations)] // holds a semaphore permit
pub struct InstallTurn {
    _slot: tokio::sync::SemaphorePermit<'static>,
    user: String,
    mine: tokio::sync::OwnedMutexGuard<()>,
}

impl Drop for InstallTurn {
    fn drop(&mut self) {
        let mut turns = USER_TURNS.lock().unwrap_or_else(PoisonError::into_inner);
        // Held by the map and this guard only: nobody waits behind it.
        if Arc::strong_count(tokio::sync::OwnedMutexGuard::mutex(&self.mine)) <= 2 {
            turns.remove(&self.user);
        }
    }
}

/// Waits for `user`'s turn to stage a skill.
///
/// # Errors
/// 500 if the slots were closed (they never are).
///
/// # Cancel safety
/// Dropping the future leaves the queue; run it within an
/// [`InstallDeadline`].
pub async fn install_turn(user: &str) -> SessionResult<InstallTurn> {
    let lock = Arc::clone(
        USER_TURNS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(user.to_owned())
            .or_default(),
    );
    let mine = lock.lock_owned().await;
    let slot = INSTALL_SLOTS
        .acquire()
        .await
        .map_err(|e| SessionError::Internal(format!("the install slots: {e}")))?;
    Ok(InstallTurn {
        _slot: slot,
        user: user.to_owned(),
        mine,
    })
}

/// The end of one install request's time: it starts when the request
/// does, and every stage (the wait for a turn included) runs within it.
#[derive(Debug, Clone, Copy)]
pub struct InstallDeadline {
    at: Instant,
    limit: Duration,
}

/// A stage that ran past the request's [`InstallDeadline`].
#[derive(Debug, Clone, Copy)]
pub struct Expired {
    limit: Duration,
}

impl Expired {
    /// What the caller reads: the limit, and that nothing was installed.
    pub fn reason(self) -> String {
        format!(
            "the skill install did not finish within the server's time limit of {} s \
             (waiting for a free install slot included); nothing was installed, try again later",
            self.limit.as_secs()
        )
    }

    /// 503: the server's own limit cut the request off.
    pub fn unavailable(self) -> SessionError {
        SessionError::Unavailable(capitalised(&self.reason()))
    }

    /// 408: the client's own upload was still arriving.
    pub fn client_too_slow(self) -> SessionError {
        SessionError::Timeout(format!(
            "The upload's files did not arrive within the server's skill-install time limit \
             of {} s; nothing was installed.",
            self.limit.as_secs()
        ))
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        format!("{}{}.", first.to_uppercase(), chars.as_str())
    })
}

impl InstallDeadline {
    /// The deadline of a request starting now.
    pub fn start(state: &Engine) -> Self {
        let limit = state.config().skill_install_limit;
        Self {
            at: Instant::now() + limit,
            limit,
        }
    }

    /// Runs `stage` until the deadline.
    ///
    /// # Errors
    /// `Expired` when the deadline passes first; `stage` is dropped.
    pub async fn run<T>(self, stage: impl Future<Output = T>) -> Result<T, Expired> {
        tokio::time::timeout_at(self.at, stage)
            .await
            .map_err(|_| Expired { limit: self.limit })
    }
}

/// Copies the staged skill `dir` into the partition of `agent_id`; its
/// name.
///
/// The copy runs in a task of its own that holds `staging` (removed when
/// it is dropped) until the copy ends. When the caller stops waiting (its
/// deadline passed, or its client left), the task takes the skill it
/// added back out.
///
/// # Errors
/// As [`Workspace::add_skill`].
///
/// # Cancel safety
/// Cancel-safe: dropped, nothing stays installed.
pub async fn commit_skill<G: Send + 'static>(
    workspace: Arc<dyn Workspace>,
    agent_id: &str,
    dir: PathBuf,
    staging: G,
) -> Result<String, oxiscope_workspace::Error> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let agent_id = agent_id.to_owned();
    tokio::spawn(async move {
        let added = workspace.add_skill(dir, &agent_id).await;
        drop(staging);
        if let Err(Ok(name)) = tx.send(added) {
            tracing::warn!(skill = %name, agent = %agent_id, "a skill install was cut off after its copy; removing the skill again");
            if let Err(e) = workspace.remove_skill(&name, &agent_id).await {
                tracing::warn!(skill = %name, "cannot remove a skill whose install was cut off: {e}");
            }
        }
    });
    rx.await.unwrap_or_else(|_| {
        Err(oxiscope_workspace::Error::Io {
            context: "copying a skill".to_owned(),
            source: std::io::Error::other("the copy task ended without an answer"),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_off_install_is_unavailable_naming_the_limit() {
        let expired = Expired {
            limit: Duration::from_secs(300),
        };
        let crate::SessionError::Unavailable(detail) = expired.unavailable() else {
            panic!("not unavailable");
        };
        assert!(
            detail.starts_with("The skill install did not finish"),
            "{detail}"
        );
        assert!(detail.contains("time limit of 300 s"), "{detail}");
        assert!(detail.ends_with("try again later."), "{detail}");
    }
}
