//! [`WorkspaceManager`]: which request gets which workspace, caching live
//! ones and closing idle ones.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::error::{Result, validate_id};
use crate::local::LocalWorkspace;
use crate::sandbox::{SandboxConfig, SandboxWorkspace};
use crate::workspace::Workspace;

/// How workspaces are shared across users, agents and sessions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// All sessions of one agent of one user share a workspace.
    #[default]
    PerAgent,
    /// Every session has its own workspace.
    PerSession,
    /// All sessions of one user share a workspace, whatever the agent.
    PerUser,
}

/// What a factory is asked to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceSpec {
    /// The owner.
    pub user_id: String,
    /// The workspace id (validated).
    pub workspace_id: String,
    /// Its directory: `<base>/<user>/<workspace_id>`.
    pub dir: PathBuf,
}

/// Makes (and initialises) a workspace for a spec.
pub type WorkspaceFactory =
    Arc<dyn Fn(WorkspaceSpec) -> BoxFuture<'static, Result<Arc<dyn Workspace>>> + Send + Sync>;

/// A workspace's key: its user and its id.
type Key = (String, String);

struct Entry {
    workspace: Arc<dyn Workspace>,
    last_used: Instant,
}

/// Hands out workspaces under a base directory, one directory per user
/// and workspace id: `<base>/<user>/<workspace_id>`.
///
/// Every id is validated (`[A-Za-z0-9_-]{1,64}`; a user id that is not
/// such a name is encoded as `=` and its bytes in hex), so no request can
/// name another user's directory, whatever ids it sends: two users using
/// the same workspace id get two directories.
///
/// Live workspaces are cached; one not asked for during the TTL (an hour
/// by default) and held by nobody else is closed (its MCP servers
/// stopped) and dropped, at the next [`get`](Self::get) or by the sweeper
/// ([`spawn_sweeper`](Self::spawn_sweeper)). Its directory stays: the next
/// request opens it again.
pub struct WorkspaceManager {
    base: PathBuf,
    isolation: Isolation,
    ttl: Duration,
    factory: WorkspaceFactory,
    cache: tokio::sync::Mutex<HashMap<Key, Entry>>,
    /// One lock per workspace being made, so two requests for one id make
    /// it once while requests for other ids go on.
    making: std::sync::Mutex<HashMap<Key, Arc<tokio::sync::Mutex<()>>>>,
    /// The most workspaces one user may have live (`None`: no limit).
    max_live_per_user: Option<usize>,
    /// Per user, the workspaces being made now: counted with the live ones.
    pending: std::sync::Mutex<HashMap<String, usize>>,
}

impl fmt::Debug for WorkspaceManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkspaceManager")
            .field("base", &self.base)
            .field("isolation", &self.isolation)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// The directory name of a user: the id itself when it is a plain name,
/// else `=` and its bytes in hex (`=` never starts a plain name).
#[must_use]
pub fn user_dir_name(user_id: &str) -> String {
    if validate_id("user id", user_id).is_ok() {
        return user_id.to_owned();
    }
    let mut name = String::with_capacity(1 + user_id.len() * 2);
    name.push('=');
    for byte in user_id.bytes() {
        name.push_str(&format!("{byte:02x}"));
    }
    name
}

/// Creates a user's directory, private: a sandbox started by root reaches
/// its workspace through a mount made for it, not by passing through.
fn private_user_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let fail = |e| crate::Error::io(format!("creating {}", dir.display()), e);
    std::fs::create_dir_all(dir).map_err(fail)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(fail)
}

impl WorkspaceManager {
    /// A manager making workspaces with `factory` under `base`.
    pub fn new(base: impl Into<PathBuf>, isolation: Isolation, factory: WorkspaceFactory) -> Self {
        let base = base.into();
        Self {
            base: std::path::absolute(&base).unwrap_or(base),
            isolation,
            ttl: Duration::from_secs(3600),
            factory,
            cache: tokio::sync::Mutex::default(),
            making: std::sync::Mutex::default(),
            max_live_per_user: None,
            pending: std::sync::Mutex::default(),
        }
    }

    /// Lets one user have at most `max` workspaces live at once (each may
    /// hold MCP server processes and, with the warm sandbox, a sandbox): a
    /// request for another one fails with
    /// [`Error::TooManyLive`](crate::Error::TooManyLive) until one has been
    /// idle for the TTL and is closed.
    #[must_use]
    pub fn with_max_live_per_user(mut self, max: usize) -> Self {
        self.max_live_per_user = Some(max.max(1));
        self
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts one more workspace of `user` being made, unless the user is
    /// at the limit (its live ones and those being made).
    async fn reserve(&self, user: &str) -> Result<()> {
        let Some(limit) = self.max_live_per_user else {
            return Ok(());
        };
        let cache = self.cache.lock().await;
        let live = cache.keys().filter(|(u, _)| u == user).count();
        let mut pending = self.pending();
        let making = pending.entry(user.to_owned()).or_default();
        if live + *making >= limit {
            return Err(crate::Error::TooManyLive { limit });
        }
        *making += 1;
        Ok(())
    }

    fn release(&self, user: &str) {
        if self.max_live_per_user.is_none() {
            return;
        }
        let mut pending = self.pending();
        if let Some(n) = pending.get_mut(user) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                pending.remove(user);
            }
        }
    }

    /// Unconfined [`LocalWorkspace`]s.
    pub fn local(base: impl Into<PathBuf>, isolation: Isolation) -> Self {
        let factory: WorkspaceFactory = Arc::new(|spec: WorkspaceSpec| {
            async move {
                let workspace = LocalWorkspace::new(spec.workspace_id, spec.dir)?;
                workspace.initialize().await?;
                Ok(Arc::new(workspace) as Arc<dyn Workspace>)
            }
            .boxed()
        });
        Self::new(base, isolation, factory)
    }

    /// [`SandboxWorkspace`]s made with `config`.
    pub fn sandbox(base: impl Into<PathBuf>, isolation: Isolation, config: SandboxConfig) -> Self {
        let config = Arc::new(config);
        let factory: WorkspaceFactory = Arc::new(move |spec: WorkspaceSpec| {
            let config = (*config).clone();
            async move {
                let workspace = SandboxWorkspace::create(
                    spec.workspace_id,
                    spec.dir,
                    config,
                    Vec::new(),
                    Vec::new(),
                )
                .await?;
                workspace.initialize().await?;
                Ok(Arc::new(workspace) as Arc<dyn Workspace>)
            }
            .boxed()
        });
        Self::new(base, isolation, factory)
    }

    /// Closes workspaces unused for `ttl`.
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The isolation grain.
    #[must_use]
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// The id of the workspace a new session gets under the isolation
    /// grain: the agent's, the session's or the user's id.
    #[must_use]
    pub fn assign_workspace_id(&self, user_id: &str, agent_id: &str, session_id: &str) -> String {
        match self.isolation {
            Isolation::PerAgent => agent_id,
            Isolation::PerSession => session_id,
            // The directory is the user's already; a user id that is no
            // plain name cannot be a workspace id.
            Isolation::PerUser if validate_id("user id", user_id).is_err() => "user",
            Isolation::PerUser => user_id,
        }
        .to_owned()
    }

    /// The directory of `workspace_id` of `user_id`.
    ///
    /// # Errors
    /// [`Error::InvalidId`](crate::Error::InvalidId) for a workspace id
    /// that is not a plain name.
    pub fn dir(&self, user_id: &str, workspace_id: &str) -> Result<PathBuf> {
        validate_id("workspace id", workspace_id)?;
        Ok(self.base.join(user_dir_name(user_id)).join(workspace_id))
    }

    /// The base directory.
    #[must_use]
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The workspace of a session: `workspace_id` when the session has
    /// one, else the one the isolation grain assigns; made and initialised
    /// on first use, cached afterwards.
    ///
    /// # Errors
    /// An invalid id; the workspace cannot be made (no sandbox, say).
    pub async fn get(
        &self,
        user_id: &str,
        agent_id: &str,
        session_id: &str,
        workspace_id: Option<&str>,
    ) -> Result<Arc<dyn Workspace>> {
        let id = match workspace_id {
            Some(id) => id.to_owned(),
            None => self.assign_workspace_id(user_id, agent_id, session_id),
        };
        let dir = self.dir(user_id, &id)?;
        if let Some(user_dir) = dir.parent() {
            private_user_dir(user_dir)?;
        }
        self.evict_idle().await;
        let key = (user_id.to_owned(), id.clone());
        if let Some(hit) = self.hit(&key).await {
            return Ok(hit);
        }
        let lock = self.making_lock(&key);
        let made = {
            let _making = lock.lock().await;
            // Someone else may have made it while this request waited.
            match self.hit(&key).await {
                Some(hit) => Ok(hit),
                None => match self.reserve(user_id).await {
                    Err(e) => Err(e),
                    Ok(()) => {
                        let made = (self.factory)(WorkspaceSpec {
                            user_id: user_id.to_owned(),
                            workspace_id: id,
                            dir,
                        })
                        .await;
                        let mut cache = self.cache.lock().await;
                        if let Ok(workspace) = &made {
                            cache.insert(
                                key.clone(),
                                Entry {
                                    workspace: Arc::clone(workspace),
                                    last_used: Instant::now(),
                                },
                            );
                        }
                        self.release(user_id);
                        drop(cache);
                        made
                    }
                },
            }
        };
        drop(lock);
        self.making
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|_, l| Arc::strong_count(l) > 1);
        made
    }

    /// The live workspace of `key`, marked used.
    async fn hit(&self, key: &(String, String)) -> Option<Arc<dyn Workspace>> {
        let mut cache = self.cache.lock().await;
        let entry = cache.get_mut(key)?;
        entry.last_used = Instant::now();
        Some(Arc::clone(&entry.workspace))
    }

    /// The lock that making the workspace of `key` holds.
    fn making_lock(&self, key: &(String, String)) -> Arc<tokio::sync::Mutex<()>> {
        let mut making = self
            .making
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(making.entry(key.clone()).or_default())
    }

    /// How many workspaces are live.
    pub async fn live(&self) -> usize {
        self.cache.lock().await.len()
    }

    /// Closes and drops the workspaces idle for the TTL that nobody else
    /// holds; returns how many.
    pub async fn evict_idle(&self) -> usize {
        let now = Instant::now();
        let expired: Vec<Arc<dyn Workspace>> = {
            let mut cache = self.cache.lock().await;
            let keys: Vec<(String, String)> = cache
                .iter()
                .filter(|(_, e)| {
                    now.duration_since(e.last_used) >= self.ttl
                        && Arc::strong_count(&e.workspace) == 1
                })
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter()
                .filter_map(|k| cache.remove(k).map(|e| e.workspace))
                .collect()
        };
        let count = expired.len();
        for workspace in expired {
            tracing::debug!(workspace = workspace.id(), "closing an idle workspace");
            workspace.close().await;
        }
        count
    }

    /// Closes and drops one workspace (its directory stays).
    pub async fn close(&self, user_id: &str, workspace_id: &str) {
        let entry = self
            .cache
            .lock()
            .await
            .remove(&(user_id.to_owned(), workspace_id.to_owned()));
        if let Some(entry) = entry {
            entry.workspace.close().await;
        }
    }

    /// Closes and drops every workspace (at shutdown).
    pub async fn close_all(&self) {
        let all: Vec<Entry> = self.cache.lock().await.drain().map(|(_, e)| e).collect();
        for entry in all {
            entry.workspace.close().await;
        }
    }

    /// Runs [`evict_idle`](Self::evict_idle) every `every` until `stop`.
    pub fn spawn_sweeper(
        self: &Arc<Self>,
        every: Duration,
        stop: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let manager = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(every) => {
                        manager.evict_idle().await;
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names_that_are_not_plain_are_encoded_without_collisions() {
        assert_eq!(user_dir_name("alice"), "alice");
        assert_eq!(user_dir_name("../x"), "=2e2e2f78");
        assert_eq!(user_dir_name("a@b.c"), "=6140622e63");
        assert_ne!(user_dir_name("=41"), user_dir_name("A"));
    }

    #[test]
    fn the_isolation_grain_picks_the_id() {
        let make = |isolation| WorkspaceManager::local("/tmp/x", isolation);
        assert_eq!(
            make(Isolation::PerAgent).assign_workspace_id("u", "a", "s"),
            "a"
        );
        assert_eq!(
            make(Isolation::PerSession).assign_workspace_id("u", "a", "s"),
            "s"
        );
        assert_eq!(
            make(Isolation::PerUser).assign_workspace_id("u", "a", "s"),
            "u"
        );
    }

    #[test]
    fn ids_that_climb_or_nest_are_refused() {
        let manager = WorkspaceManager::local("/tmp/base", Isolation::PerAgent);
        assert!(manager.dir("alice", "../bob").is_err());
        assert!(manager.dir("alice", "x/y").is_err());
        assert_eq!(
            manager.dir("alice", "w1").unwrap(),
            Path::new("/tmp/base/alice/w1")
        );
        assert_ne!(
            manager.dir("alice", "w1").unwrap(),
            manager.dir("bob", "w1").unwrap()
        );
    }
}
