//! [`AppState`]: what every handler shares.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use oxiscope_storage::{MessageBus, Storage};
use oxiscope_workspace::{Isolation, SandboxConfig, WorkspaceManager};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::auth::AuthMode;
use oxiscope_session::Sealer;

/// Where agents' tools run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceMode {
    /// Each workspace in a bubblewrap sandbox (the default): tenants'
    /// commands, MCP servers and file tools are confined to their own
    /// directory.
    Sandbox(SandboxConfig),
    /// Unconfined on the host: only for tenants the operator trusts.
    Local,
}

/// How the service is set up.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where the data lives; workspaces are under
    /// `<data_dir>/workspaces/<user>/<workspace_id>`.
    pub data_dir: PathBuf,
    /// Where agents' tools run.
    pub workspace: WorkspaceMode,
    /// How workspaces are shared between sessions.
    pub isolation: Isolation,
    /// How long an unused workspace stays live (its MCP servers running).
    pub workspace_ttl: Duration,
    /// What tenants may choose (permission modes, confirmation rules,
    /// remote media).
    pub policy: oxiscope_session::TenantPolicy,
    /// How callers authenticate.
    pub auth: AuthMode,
    /// Origins allowed by CORS; empty means CORS is off.
    pub cors_origins: Vec<String>,
    /// Where the server listens. Under [`AuthMode::DevHeader`] a request's
    /// `Host` and `Origin` must name it (as `localhost`, `127.0.0.1`,
    /// `[::1]` or this address, with its port) or a CORS origin; `None`:
    /// any port of a loopback name.
    pub listen_addr: Option<std::net::SocketAddr>,
    /// Time between SSE heartbeats.
    pub heartbeat: Duration,
    /// How long a run lock lives without renewal.
    pub lock_ttl: Duration,
    /// How often each replica looks for runs whose runner died (their lock
    /// expired before their reply ended) and ends them; a third of
    /// `lock_ttl` by default.
    pub takeover_interval: Duration,
    /// Events of a run kept for late SSE subscribers; older ones leave the
    /// replay log.
    pub replay_limit: usize,
    /// Inputs a session may queue while a run is active; more get 429.
    pub inbox_limit: usize,
    /// The catalogues of MCP servers and skills users install from.
    pub hubs: Vec<crate::service::HubSource>,
    /// How long a hub's catalogue is used before it is read again.
    pub hub_cache_ttl: Duration,
    /// How long one skill install request may take in all (from a
    /// workspace folder, an upload or the library): the wait for one of
    /// the shared install slots, the download or copy, and the copy into
    /// the workspace. Past it the request is answered 503 (408 while the
    /// client's upload was still arriving), its slot is freed and nothing
    /// is installed. 5 minutes by default.
    pub skill_install_limit: Duration,
    /// Where the titles of automatically named sessions come from.
    pub session_titles: crate::service::SessionTitles,
    /// How long a workspace file download token is accepted.
    pub download_token_ttl: Duration,
    /// Knowledge bases: upload limit, indexing concurrency, the offline
    /// embedding model.
    pub knowledge: crate::service::knowledge::KnowledgeSettings,
    /// Where the agents' trace spans go (`None`: no tracing, no cost).
    pub span_exporter: Option<std::sync::Arc<dyn oxiscope_agent::otel::SpanExporter>>,
    /// Whether a caller's W3C `traceparent` parents the request's span.
    /// Off by default: a tenant's header would otherwise put the server's
    /// spans into a trace of its choosing (another tenant's, or the
    /// operator's); turn it on behind a gateway that sets the header.
    pub trust_traceparent: bool,
    /// How long a tool call may run before it is moved to the background
    /// and the reply goes on (its result arrives later as a message; see
    /// `service::offload`); zero turns offloading off. 10 s by default.
    pub tool_offload: Duration,
    /// The sub-agent templates team workers are made from (the built-in
    /// `default` unless the operator adds some; see `TeamTemplates`).
    pub team_templates: std::sync::Arc<crate::TeamTemplates>,
    /// Long-term memory for every session's agent: the agentic Markdown
    /// memory (`oxiscope_memory::AgenticMemoryMiddleware`) in the
    /// session's workspace, with these parameters (`None`: off, the
    /// default). AgentScope's service adds it through the operator's
    /// middleware factory; this is that choice as a setting.
    pub agentic_memory: Option<oxiscope_memory::Parameters>,
    /// A weighted token budget for every reply of every session
    /// (`oxiscope_agent::ReplyBudgetControlMiddleware`): past it, the model
    /// is told to answer without more tool calls. `None`: no budget.
    pub reply_budget: Option<oxiscope_agent::ReplyBudgetControlMiddleware>,
    /// The most the session's model may write into one reply (text and
    /// tool-call arguments, in bytes): past it the reply ends with an
    /// error. [`oxiscope_agent::ReplyLimits::default`] (4 MiB each) by
    /// default.
    pub reply_limits: oxiscope_agent::ReplyLimits,
}

impl ServerConfig {
    /// Defaults for `data_dir`: API keys, CORS off, 30 s heartbeats, 60 s
    /// locks.
    #[must_use]
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            workspace: WorkspaceMode::Sandbox(SandboxConfig::default()),
            isolation: Isolation::PerAgent,
            workspace_ttl: Duration::from_secs(3600),
            policy: oxiscope_session::TenantPolicy::default(),
            auth: AuthMode::ApiKeys,
            cors_origins: Vec::new(),
            listen_addr: None,
            heartbeat: Duration::from_secs(30),
            lock_ttl: Duration::from_secs(60),
            takeover_interval: Duration::from_secs(20),
            replay_limit: 4096,
            inbox_limit: 64,
            hubs: Vec::new(),
            hub_cache_ttl: Duration::from_secs(300),
            skill_install_limit: Duration::from_secs(300),
            session_titles: crate::service::SessionTitles::Model,
            download_token_ttl: Duration::from_secs(60),
            span_exporter: None,
            trust_traceparent: false,
            knowledge: crate::service::knowledge::KnowledgeSettings::default(),
            tool_offload: Duration::from_secs(10),
            team_templates: std::sync::Arc::default(),
            agentic_memory: None,
            reply_budget: None,
            reply_limits: oxiscope_agent::ReplyLimits::default(),
        }
    }

    /// Team workers are made from `templates`.
    #[must_use]
    pub fn with_team_templates(mut self, templates: crate::TeamTemplates) -> Self {
        self.team_templates = std::sync::Arc::new(templates);
        self
    }

    /// Other knowledge-base settings.
    #[must_use]
    pub fn with_knowledge(
        mut self,
        knowledge: crate::service::knowledge::KnowledgeSettings,
    ) -> Self {
        self.knowledge = knowledge;
        self
    }

    /// Traces the agents' runs into `exporter` (see
    /// [`OtlpExporter`](crate::OtlpExporter)).
    #[must_use]
    pub fn with_span_exporter(
        mut self,
        exporter: std::sync::Arc<dyn oxiscope_agent::otel::SpanExporter>,
    ) -> Self {
        self.span_exporter = Some(exporter);
        self
    }

    /// Lets callers' W3C `traceparent` headers parent the requests' spans
    /// (see [`ServerConfig::trust_traceparent`]).
    #[must_use]
    pub fn with_trust_traceparent(mut self, trust: bool) -> Self {
        self.trust_traceparent = trust;
        self
    }

    /// How long workspace file download tokens are accepted.
    #[must_use]
    pub fn with_download_token_ttl(mut self, ttl: Duration) -> Self {
        self.download_token_ttl = ttl;
        self
    }

    /// Another source of session titles.
    #[must_use]
    pub fn with_session_titles(mut self, titles: crate::service::SessionTitles) -> Self {
        self.session_titles = titles;
        self
    }

    /// How long one skill install request may take (see
    /// [`ServerConfig::skill_install_limit`]).
    #[must_use]
    pub fn with_skill_install_limit(mut self, limit: Duration) -> Self {
        self.skill_install_limit = limit;
        self
    }

    /// The hubs users install MCP servers and skills from.
    #[must_use]
    pub fn with_hubs(mut self, hubs: Vec<crate::service::HubSource>) -> Self {
        self.hubs = hubs;
        self
    }

    /// Another authentication mode.
    #[must_use]
    pub fn with_auth(mut self, auth: AuthMode) -> Self {
        self.auth = auth;
        self
    }

    /// Where agents' tools run.
    #[must_use]
    pub fn with_workspace(mut self, workspace: WorkspaceMode) -> Self {
        self.workspace = workspace;
        self
    }

    /// What tenants may choose.
    #[must_use]
    pub fn with_policy(mut self, policy: oxiscope_session::TenantPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// How workspaces are shared between sessions.
    #[must_use]
    pub fn with_isolation(mut self, isolation: Isolation) -> Self {
        self.isolation = isolation;
        self
    }

    /// Another heartbeat interval.
    #[must_use]
    pub fn with_heartbeat(mut self, heartbeat: Duration) -> Self {
        self.heartbeat = heartbeat;
        self
    }

    /// Allow these CORS origins (`*` for any).
    #[must_use]
    pub fn with_cors_origins(mut self, origins: Vec<String>) -> Self {
        self.cors_origins = origins;
        self
    }

    /// The address the server listens on (see [`Self::listen_addr`]).
    #[must_use]
    pub fn with_listen_addr(mut self, addr: std::net::SocketAddr) -> Self {
        self.listen_addr = Some(addr);
        self
    }
}

/// A run in progress in this process.
#[derive(Debug)]
pub(crate) struct ActiveRun {
    pub(crate) cancel: CancellationToken,
    pub(crate) task: Option<JoinHandle<()>>,
}

/// The shared state of the app: stores, bus, sealer, config and the runs
/// this process is executing. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    storage: Arc<dyn Storage>,
    bus: Arc<dyn MessageBus>,
    sealer: Sealer,
    config: ServerConfig,
    runs: Mutex<HashMap<String, ActiveRun>>,
    shutdown: CancellationToken,
    models: crate::service::models::ModelCache,
    workspaces: Arc<WorkspaceManager>,
    hubs: crate::service::hub::Hubs,
    metrics: crate::metrics::Metrics,
    knowledge: crate::service::knowledge::Runtime,
    background: crate::service::offload::BackgroundTasks,
}

impl AppState {
    /// State over the given stores.
    #[must_use]
    pub fn new(
        storage: Arc<dyn Storage>,
        bus: Arc<dyn MessageBus>,
        sealer: Sealer,
        config: ServerConfig,
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
        let hubs = crate::service::hub::Hubs::new(config.hubs.clone(), config.hub_cache_ttl);
        let knowledge = crate::service::knowledge::Runtime::new(&config.knowledge);
        Self {
            inner: Arc::new(Inner {
                workspaces: Arc::new(workspaces),
                storage,
                bus,
                sealer,
                config,
                runs: Mutex::new(HashMap::new()),
                shutdown: CancellationToken::new(),
                models: crate::service::models::ModelCache::default(),
                hubs,
                metrics: crate::metrics::Metrics::default(),
                knowledge,
                background: crate::service::offload::BackgroundTasks::default(),
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
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// The workspaces of the users' agents.
    #[must_use]
    pub fn workspaces(&self) -> &Arc<WorkspaceManager> {
        &self.inner.workspaces
    }

    /// The configured hubs.
    pub(crate) fn hubs(&self) -> &crate::service::hub::Hubs {
        &self.inner.hubs
    }

    /// Reads every configured hub catalogue (as `oxiscope serve` does at
    /// startup); without this they are read on first use.
    ///
    /// # Errors
    /// A catalogue cannot be read or is invalid, or two hubs of one kind
    /// share an id.
    pub async fn load_hubs(&self) -> Result<(), crate::service::HubError> {
        self.inner.hubs.load().await
    }

    /// The service's counters (served by [`crate::metrics_app`]).
    pub(crate) fn metrics(&self) -> &crate::metrics::Metrics {
        &self.inner.metrics
    }

    /// What the knowledge-base routes share.
    pub(crate) fn knowledge(&self) -> &crate::service::knowledge::Runtime {
        &self.inner.knowledge
    }

    /// Indexes again, in the background, every document a stopped server
    /// left unfinished (as `serve` does at startup); returns how many.
    ///
    /// # Errors
    /// The store cannot be read.
    pub async fn resume_knowledge_indexing(&self) -> Result<usize, oxiscope_storage::Error> {
        crate::service::knowledge::resume(self).await
    }

    /// The tool calls this process runs in the background.
    pub(crate) fn background(&self) -> &crate::service::offload::BackgroundTasks {
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
        crate::service::offload::recover(self).await
    }

    /// The chat models kept between runs.
    pub(crate) fn models(&self) -> &crate::service::models::ModelCache {
        &self.inner.models
    }

    /// The data directory.
    #[must_use]
    pub fn data_dir(&self) -> &Path {
        &self.inner.config.data_dir
    }

    pub(crate) fn auth_mode(&self) -> AuthMode {
        self.inner.config.auth
    }

    /// Fires when the server shuts down: streams end, runs are interrupted.
    #[must_use]
    pub fn shutdown_token(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    pub(crate) fn runs(&self) -> MutexGuard<'_, HashMap<String, ActiveRun>> {
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
        crate::service::offload::abandon(self).await;
        // Stops every MCP server the workspaces started.
        self.inner.workspaces.close_all().await;
    }
}
