//! [`Engine`]: what every operation of the service shares.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use oxiscope_storage::{MessageBus, Storage};
use oxiscope_workspace::WorkspaceManager;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::Sealer;
use crate::config::{EngineConfig, WorkspaceMode};

/// A run in progress in this process.
#[derive(Debug)]
pub struct ActiveRun {
    /// Interrupts the run.
    pub cancel: CancellationToken,
    /// The task running it (taken when it is awaited).
    pub task: Option<JoinHandle<()>>,
}

/// The engine: stores, bus, sealer, config, the runs this process is
/// executing and its workspaces. Cheap to clone; every door into the
/// service (the HTTP routes, schedules, teams) shares one.
#[derive(Debug, Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    storage: Arc<dyn Storage>,
    bus: Arc<dyn MessageBus>,
    sealer: Sealer,
    config: EngineConfig,
    runs: Mutex<HashMap<String, ActiveRun>>,
    shutdown: CancellationToken,
    models: crate::models::ModelCache,
    workspaces: Arc<WorkspaceManager>,
    hubs: crate::hub::Hubs,
    metrics: crate::metrics::Metrics,
    knowledge: crate::knowledge::Runtime,
    background: crate::offload::BackgroundTasks,
}

impl Engine {
    /// State over the given stores.
    #[must_use]
    pub fn new(
        storage: Arc<dyn Storage>,
        bus: Arc<dyn MessageBus>,
        sealer: Sealer,
        config: EngineConfig,
    ) -> Self {
        let base = config.data_dir.join("workspaces");
        let workspaces = match &config.workspace {
            WorkspaceMode::Sandbox(sandbox) => {
                WorkspaceManager::sandbox(base, config.isolation, sandbox.clone())
            }
            WorkspaceMode::Local => WorkspaceManager::local(base, config.isolation),
        }
        .with_ttl(config.workspace_ttl)
        .with_max_live_per_user(config.policy.max_live_workspaces_per_user);
        let hubs = crate::hub::Hubs::new(config.hubs.clone(), config.hub_cache_ttl);
        let knowledge = crate::knowledge::Runtime::new(&config.knowledge);
        Self {
            inner: Arc::new(Inner {
                workspaces: Arc::new(workspaces),
                storage,
                bus,
                sealer,
                config,
                runs: Mutex::new(HashMap::new()),
                shutdown: CancellationToken::new(),
                models: crate::models::ModelCache::default(),
                hubs,
                metrics: crate::metrics::Metrics::default(),
                knowledge,
                background: crate::offload::BackgroundTasks::default(),
            }),
        }
    }

    /// The record store.
    #[must_use]
    pub fn storage(&self) -> &dyn Storage {
        &*self.inner.storage
    }

    /// The message bus.
    #[must_use]
    pub fn bus(&self) -> &dyn MessageBus {
        &*self.inner.bus
    }

    /// The credential sealer.
    #[must_use]
    pub fn sealer(&self) -> &Sealer {
        &self.inner.sealer
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// The workspaces of the users' agents.
    #[must_use]
    pub fn workspaces(&self) -> &Arc<WorkspaceManager> {
        &self.inner.workspaces
    }

    /// The configured hubs.
    pub fn hubs(&self) -> &crate::hub::Hubs {
        &self.inner.hubs
    }

    /// Reads every configured hub catalogue (as `oxiscope serve` does at
    /// startup); without this they are read on first use.
    ///
    /// # Errors
    /// A catalogue cannot be read or is invalid, or two hubs of one kind
    /// share an id.
    pub async fn load_hubs(&self) -> Result<(), crate::HubError> {
        self.inner.hubs.load().await
    }

    /// The service's counters (the service serves them as Prometheus text).
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.inner.metrics
    }

    /// What the knowledge-base operations share.
    pub fn knowledge(&self) -> &crate::knowledge::Runtime {
        &self.inner.knowledge
    }

    /// Indexes again, in the background, every document a stopped server
    /// left unfinished (as `serve` does at startup); returns how many.
    ///
    /// # Errors
    /// The store cannot be read.
    pub async fn resume_knowledge_indexing(&self) -> Result<usize, oxiscope_storage::Error> {
        crate::knowledge::resume(self).await
    }

    /// The tool calls this process runs in the background.
    pub fn background(&self) -> &crate::offload::BackgroundTasks {
        &self.inner.background
    }

    /// Takes over the background tool calls of processes that stopped (as
    /// `serve` does at startup and then periodically): calls cut off by
    /// the stop are reported to their sessions as lost, results never
    /// delivered are delivered; returns how many were taken over.
    ///
    /// # Errors
    /// The store cannot be read.
    pub async fn recover_background_tasks(&self) -> Result<usize, oxiscope_storage::Error> {
        crate::offload::recover(self).await
    }

    /// The service's counters and gauges in Prometheus' text format.
    #[must_use]
    pub fn metrics_text(&self) -> String {
        self.inner.metrics.render(&crate::metrics::Gauges {
            active_runs: self.runs().len(),
            bus: self.inner.bus.depth(),
        })
    }

    /// The chat models kept between runs.
    pub fn models(&self) -> &crate::models::ModelCache {
        &self.inner.models
    }

    /// The data directory.
    #[must_use]
    pub fn data_dir(&self) -> &Path {
        &self.inner.config.data_dir
    }

    /// Fires when the server shuts down: streams end, runs are interrupted.
    #[must_use]
    pub fn shutdown_token(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    /// The runs this process is executing, by session id.
    pub fn runs(&self) -> MutexGuard<'_, HashMap<String, ActiveRun>> {
        self.inner
            .runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Interrupts every run of this process and waits for each to persist
    /// its state.
    ///
    /// # Cancel safety
    /// Cancel safe: runs already told to stop keep stopping.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        let tasks: Vec<JoinHandle<()>> = {
            let mut runs = self.runs();
            runs.values_mut()
                .filter_map(|run| {
                    run.cancel.cancel();
                    run.task.take()
                })
                .collect()
        };
        for task in tasks {
            if let Err(e) = task.await {
                tracing::error!(error = %e, "a run task failed during shutdown");
            }
        }
        // Background tool calls were dropped: the next start takes them
        // over at once.
        crate::offload::abandon(self).await;
        // Stops every MCP server the workspaces started.
        self.inner.workspaces.close_all().await;
    }
}
