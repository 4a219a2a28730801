//! [`EngineConfig`]: how the engine is set up (the HTTP edge adds its own
//! settings: authentication, CORS, heartbeats).

use std::path::PathBuf;
use std::time::Duration;

use oxiscope_workspace::{Isolation, SandboxConfig};

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

/// How the engine is set up.
#[derive(Debug, Clone)]
pub struct EngineConfig {
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
    pub policy: crate::TenantPolicy,
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
    pub hubs: Vec<crate::hub::HubSource>,
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
    pub session_titles: crate::naming::SessionTitles,
    /// Knowledge bases: upload limit, indexing concurrency, the offline
    /// embedding model.
    pub knowledge: crate::knowledge::KnowledgeSettings,
    /// Where the agents' trace spans go (`None`: no tracing, no cost).
    pub span_exporter: Option<std::sync::Arc<dyn oxiscope_agent::otel::SpanExporter>>,
    /// How long a tool call may run before it is moved to the background
    /// and the reply goes on (its result arrives later as a message; see
    /// `service::offload`); zero turns offloading off. 10 s by default.
    pub tool_offload: Duration,
    /// The sub-agent templates team workers are made from (the built-in
    /// `default` unless the operator adds some; see `TeamTemplates`).
    pub team_templates: std::sync::Arc<crate::team::TeamTemplates>,
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
    /// What the embedding application adds to its sessions' agents (see
    /// [`crate::recipe`]); none by default.
    pub recipes: crate::recipe::Recipes,
    /// Who may see, use and change other users' credentials, agents and
    /// knowledge bases ([`crate::access::OwnerOnly`], sharing nothing, by
    /// default).
    pub resource_access: crate::access::SharedAccess,
}

impl EngineConfig {
    /// Defaults for `data_dir`: sandboxed workspaces, 60 s locks, 64 queued
    /// inputs per session.
    #[must_use]
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            workspace: WorkspaceMode::Sandbox(SandboxConfig::default()),
            isolation: Isolation::PerAgent,
            workspace_ttl: Duration::from_secs(3600),
            policy: crate::TenantPolicy::default(),
            lock_ttl: Duration::from_secs(60),
            takeover_interval: Duration::from_secs(20),
            replay_limit: 4096,
            inbox_limit: 64,
            hubs: Vec::new(),
            hub_cache_ttl: Duration::from_secs(300),
            skill_install_limit: Duration::from_secs(300),
            session_titles: crate::naming::SessionTitles::Model,
            span_exporter: None,
            knowledge: crate::knowledge::KnowledgeSettings::default(),
            tool_offload: Duration::from_secs(10),
            team_templates: std::sync::Arc::default(),
            agentic_memory: None,
            reply_budget: None,
            reply_limits: oxiscope_agent::ReplyLimits::default(),
            recipes: crate::recipe::Recipes::default(),
            resource_access: crate::access::owner_only(),
        }
    }

    /// Defaults for `data_dir`: API keys, CORS off, 30 s heartbeats, 60 s
    /// The sessions' agents get `recipes`.
    #[must_use]
    pub fn with_recipes(mut self, recipes: crate::recipe::Recipes) -> Self {
        self.recipes = recipes;
        self
    }

    /// Shares resources between users as `policy` says.
    #[must_use]
    pub fn with_resource_access(mut self, policy: crate::access::SharedAccess) -> Self {
        self.resource_access = policy;
        self
    }

    /// Team workers are made from `templates`.
    #[must_use]
    pub fn with_team_templates(mut self, templates: crate::team::TeamTemplates) -> Self {
        self.team_templates = std::sync::Arc::new(templates);
        self
    }

    /// Other knowledge-base settings.
    #[must_use]
    pub fn with_knowledge(mut self, knowledge: crate::knowledge::KnowledgeSettings) -> Self {
        self.knowledge = knowledge;
        self
    }

    /// Traces the agents' runs into `exporter` (see
    /// [`OtlpExporter`](crate::otel::OtlpExporter)).
    #[must_use]
    pub fn with_span_exporter(
        mut self,
        exporter: std::sync::Arc<dyn oxiscope_agent::otel::SpanExporter>,
    ) -> Self {
        self.span_exporter = Some(exporter);
        self
    }

    /// Lets callers' W3C `traceparent` headers parent the requests' spans
    /// Another source of session titles.
    #[must_use]
    pub fn with_session_titles(mut self, titles: crate::naming::SessionTitles) -> Self {
        self.session_titles = titles;
        self
    }

    /// How long one skill install request may take (see
    /// [`EngineConfig::skill_install_limit`]).
    #[must_use]
    pub fn with_skill_install_limit(mut self, limit: Duration) -> Self {
        self.skill_install_limit = limit;
        self
    }

    /// The hubs users install MCP servers and skills from.
    #[must_use]
    pub fn with_hubs(mut self, hubs: Vec<crate::hub::HubSource>) -> Self {
        self.hubs = hubs;
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
    pub fn with_policy(mut self, policy: crate::TenantPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// How workspaces are shared between sessions.
    #[must_use]
    pub fn with_isolation(mut self, isolation: Isolation) -> Self {
        self.isolation = isolation;
        self
    }
}
