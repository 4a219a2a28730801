//! [`AppState`]: what every handler shares — the engine, and the edge's
//! own settings (authentication, CORS, heartbeats, download links).

use std::sync::Arc;
use std::time::Duration;

use oxiscope_session::{Engine, EngineConfig, Sealer};
use oxiscope_storage::{MessageBus, Storage};

use crate::auth::{ApiKeys, AuthMode, DevHeader, DynAuth, Jwt};

/// How the service is set up: the engine's settings and the edge's.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The engine's settings (data directory, workspaces, policy, limits).
    pub engine: EngineConfig,
    /// How callers authenticate.
    pub auth: AuthMode,
    /// Under [`AuthMode::ApiKeys`], JWT bearer tokens verified by this
    /// are accepted besides API keys.
    pub jwt: Option<Arc<Jwt>>,
    /// Origins allowed by CORS; empty means CORS is off.
    pub cors_origins: Vec<String>,
    /// Where the server listens. Under [`AuthMode::DevHeader`] a request's
    /// `Host` and `Origin` must name it (as `localhost`, `127.0.0.1`,
    /// `[::1]` or this address, with its port) or a CORS origin; `None`:
    /// any port of a loopback name.
    pub listen_addr: Option<std::net::SocketAddr>,
    /// Time between SSE heartbeats.
    pub heartbeat: Duration,
    /// How long a workspace file download token is accepted.
    pub download_token_ttl: Duration,
    /// Whether a caller's W3C `traceparent` parents the request's span.
    /// Off by default: a tenant's header would otherwise put the server's
    /// spans into a trace of its choosing (another tenant's, or the
    /// operator's); turn it on behind a gateway that sets the header.
    pub trust_traceparent: bool,
    /// The IM channel types tenants may connect (none: channels are off).
    pub channels: oxiscope_channel::Registry,
}

impl ServerConfig {
    /// Defaults for `data_dir`: API keys, CORS off, 30 s heartbeats, 60 s
    /// locks.
    #[must_use]
    pub fn new(data_dir: impl Into<std::path::PathBuf>) -> Self {
        Self {
            engine: EngineConfig::new(data_dir),
            auth: AuthMode::ApiKeys,
            jwt: None,
            cors_origins: Vec::new(),
            listen_addr: None,
            heartbeat: Duration::from_secs(30),
            download_token_ttl: Duration::from_secs(60),
            trust_traceparent: false,
            channels: oxiscope_channel::Registry::new(),
        }
    }

    /// Tenants may connect channels of the types in `registry`.
    #[must_use]
    pub fn with_channels(mut self, registry: oxiscope_channel::Registry) -> Self {
        self.channels = registry;
        self
    }

    /// Changes the engine's settings.
    #[must_use]
    pub fn with_engine(mut self, change: impl FnOnce(EngineConfig) -> EngineConfig) -> Self {
        self.engine = change(self.engine);
        self
    }

    /// The sessions' agents get `recipes`: the embedding application's
    /// tools and middleware, for every agent or by name (see
    /// [`oxiscope_session::recipe`]).
    #[must_use]
    pub fn with_recipes(self, recipes: oxiscope_session::Recipes) -> Self {
        self.with_engine(|c| c.with_recipes(recipes))
    }

    /// Team workers are made from `templates`.
    #[must_use]
    pub fn with_team_templates(self, templates: oxiscope_session::team::TeamTemplates) -> Self {
        self.with_engine(|c| c.with_team_templates(templates))
    }

    /// Other knowledge-base settings.
    #[must_use]
    pub fn with_knowledge(self, knowledge: oxiscope_session::knowledge::KnowledgeSettings) -> Self {
        self.with_engine(|c| c.with_knowledge(knowledge))
    }

    /// Traces the agents' runs into `exporter` (see
    /// [`OtlpExporter`](crate::OtlpExporter)).
    #[must_use]
    pub fn with_span_exporter(self, exporter: Arc<dyn oxiscope_agent::otel::SpanExporter>) -> Self {
        self.with_engine(|c| c.with_span_exporter(exporter))
    }

    /// Another source of session titles.
    #[must_use]
    pub fn with_session_titles(self, titles: oxiscope_session::SessionTitles) -> Self {
        self.with_engine(|c| c.with_session_titles(titles))
    }

    /// How long one skill install request may take (see
    /// [`EngineConfig::skill_install_limit`]).
    #[must_use]
    pub fn with_skill_install_limit(self, limit: Duration) -> Self {
        self.with_engine(|c| c.with_skill_install_limit(limit))
    }

    /// The hubs users install MCP servers and skills from.
    #[must_use]
    pub fn with_hubs(self, hubs: Vec<oxiscope_session::HubSource>) -> Self {
        self.with_engine(|c| c.with_hubs(hubs))
    }

    /// Where agents' tools run.
    #[must_use]
    pub fn with_workspace(self, workspace: oxiscope_session::WorkspaceMode) -> Self {
        self.with_engine(|c| c.with_workspace(workspace))
    }

    /// What tenants may choose.
    #[must_use]
    pub fn with_policy(self, policy: oxiscope_session::TenantPolicy) -> Self {
        self.with_engine(|c| c.with_policy(policy))
    }

    /// How workspaces are shared between sessions.
    #[must_use]
    pub fn with_isolation(self, isolation: oxiscope_workspace::Isolation) -> Self {
        self.with_engine(|c| c.with_isolation(isolation))
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

    /// Another authentication mode.
    #[must_use]
    pub fn with_auth(mut self, auth: AuthMode) -> Self {
        self.auth = auth;
        self
    }

    /// Accepts JWT bearer tokens that `jwt` verifies, besides API keys
    /// (under [`AuthMode::ApiKeys`]).
    #[must_use]
    pub fn with_jwt(mut self, jwt: Arc<Jwt>) -> Self {
        self.jwt = Some(jwt);
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

/// The edge's settings, as [`AppState`] keeps them.
#[derive(Debug)]
pub(crate) struct Edge {
    pub(crate) auth: AuthMode,
    /// Who a request's headers name.
    pub(crate) provider: DynAuth,
    /// Whether JWT bearer tokens are accepted.
    pub(crate) jwt: bool,
    pub(crate) cors_origins: Vec<String>,
    pub(crate) listen_addr: Option<std::net::SocketAddr>,
    pub(crate) heartbeat: Duration,
    pub(crate) download_token_ttl: Duration,
    pub(crate) trust_traceparent: bool,
    pub(crate) channels: oxiscope_channel::ChannelHost,
}

/// What every handler shares: the [`Engine`] (reached through `Deref`)
/// and the edge's settings. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    engine: Engine,
    edge: Arc<Edge>,
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
        let ServerConfig {
            engine,
            auth,
            jwt,
            cors_origins,
            listen_addr,
            heartbeat,
            download_token_ttl,
            trust_traceparent,
            channels,
        } = config;
        let accepts_jwt = jwt.is_some() && auth == AuthMode::ApiKeys;
        let provider: DynAuth = match auth {
            AuthMode::ApiKeys => Arc::new(ApiKeys::new(Arc::clone(&storage), jwt)),
            AuthMode::DevHeader => Arc::new(DevHeader),
        };
        let engine = Engine::new(storage, bus, sealer, engine);
        let channels = oxiscope_channel::ChannelHost::new(
            engine.clone(),
            oxiscope_channel::Channels::new(engine.clone(), channels),
        );
        Self {
            engine,
            edge: Arc::new(Edge {
                auth,
                provider,
                jwt: accepts_jwt,
                cors_origins,
                listen_addr,
                heartbeat,
                download_token_ttl,
                trust_traceparent,
                channels,
            }),
        }
    }

    /// The channels this replica runs.
    #[must_use]
    pub fn channels(&self) -> &oxiscope_channel::ChannelHost {
        &self.edge.channels
    }

    /// The engine behind the routes.
    #[must_use]
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The edge's settings.
    pub(crate) fn edge(&self) -> &Edge {
        &self.edge
    }

    /// Who a request's headers name.
    pub(crate) fn auth(&self) -> &DynAuth {
        &self.edge.provider
    }
}

impl std::ops::Deref for AppState {
    type Target = Engine;

    fn deref(&self) -> &Engine {
        &self.engine
    }
}
