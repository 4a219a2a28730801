//! `oxiscope serve`: the agent service with the embedded defaults (SQLite
//! in the data directory, the in-process message bus), or shared backends
//! for several replicas (`--redis-url` for the message bus).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;
use oxiscope_permission::PermissionMode;
use oxiscope_server::{
    AppState, AuthMode, HubSource, OtlpConfig, OtlpExporter, Sealer, ServerConfig, SessionTitles,
    TenantPolicy, WorkspaceMode,
};
use oxiscope_storage::{InMemoryBus, is_postgres_url};

#[cfg(test)]
use super::store::describe_store;
use super::store::{data_dir, database_url, open_storage, prepare_data_dir, without_password};
use oxiscope_workspace::{Isolation, SandboxConfig};

#[path = "serve_jwt.rs"]
mod jwt;

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8000")]
    addr: SocketAddr,
    /// Where the database, the key file and the agents' workspaces live
    /// (default: the user data directory's `oxiscope/service`).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Where records are kept: `postgres://USER:PASSWORD@HOST:PORT/DB` (or
    /// `postgresql://...`) for a PostgreSQL database several replicas
    /// share (schema created at start), or `sqlite://DIR` for the SQLite
    /// file `oxiscope.db` in DIR. Default: `OXISCOPE_DATABASE_URL`, else
    /// SQLite in the data directory.
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
    /// The Redis server (`redis://[USER:PASSWORD@]HOST:PORT[/DB]`) that
    /// carries run locks, replay logs, live events, inboxes and wakeups
    /// between replicas. Default: `OXISCOPE_REDIS_URL`, else the
    /// in-process bus (one replica only).
    #[arg(long, value_name = "URL")]
    redis_url: Option<String>,
    /// Where knowledge-base vectors are kept: `postgres://…` for a
    /// PostgreSQL with the pgvector extension, `http(s)://HOST:6333` for a
    /// Qdrant server (its API key, if any, in `OXISCOPE_QDRANT_API_KEY`);
    /// replicas share either.
    /// Default: `OXISCOPE_VECTOR_STORE_URL`, else the embedded store in
    /// the data directory (`knowledge/vectors.sqlite`).
    #[arg(long, value_name = "URL")]
    vector_store_url: Option<String>,
    /// The key that seals stored credentials: a file holding the base64 of
    /// 32 random bytes (`head -c 32 /dev/urandom | base64 > FILE`, mode
    /// 0600); it must exist. Replicas sharing a database must share this
    /// key. Default: `OXISCOPE_KEY_FILE`, else `OXISCOPE_SECRET_KEY` (the
    /// key itself), else `secret.key` in the data directory (created on
    /// first start).
    #[arg(long, value_name = "PATH")]
    key_file: Option<PathBuf>,
    /// Development only: trust the X-User-ID header instead of API keys.
    #[arg(long)]
    dev_auth: bool,
    /// Allow browser calls from this origin (repeatable; `*` for any).
    /// CORS is off without it.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    cors_origins: Vec<String>,
    /// Where agents' tools run: `sandbox` (bubblewrap; each workspace
    /// confined to its own directory, no host environment, no network
    /// unless `--sandbox-network`) or `local` (unconfined on this machine:
    /// only for tenants you trust).
    #[arg(long, value_enum, default_value_t = WorkspaceArg::Sandbox)]
    workspace: WorkspaceArg,
    /// Give sandboxed commands the host's network namespace: they then
    /// reach whatever this machine reaches, its loopback services and
    /// cloud metadata addresses included. Off by default.
    #[arg(long)]
    sandbox_network: bool,
    /// Which sandbox confines tools: `auto` (the strongest that works
    /// here), `bwrap`, `landlock` or `none` (unconfined).
    #[arg(long, value_enum, default_value_t)]
    sandbox: super::sandbox_tier::SandboxArg,
    /// The operator's tenant policy, a TOML file: `allowed_modes`
    /// (permission modes tenants may use), `max_confirm_rules` (rules one
    /// confirmed call may add; each must be one suggested for it),
    /// `remote_media` (whether messages may name http(s) media for the
    /// server to fetch), `private_model_endpoints` (whether model
    /// credentials may point at non-public addresses), `user_token_quota`
    /// and `user_token_quota_window` (see the flags). The flags below
    /// override it.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// A permission mode tenants may use (repeatable; replaces the
    /// default set: every mode but `bypass`).
    #[arg(long = "allow-mode", value_name = "MODE", value_parser = parse_mode)]
    allow_modes: Vec<PermissionMode>,
    /// The most rules one confirmed call may add (default 4).
    #[arg(long, value_name = "N")]
    max_confirm_rules: Option<usize>,
    /// Refuse http(s) media URLs in tenants' messages (by default the
    /// server fetches them from public addresses only).
    #[arg(long)]
    no_remote_media: bool,
    /// Let tenants' model credentials point at non-public addresses
    /// (loopback, a private network, link-local): needed for a local
    /// Ollama or vLLM server on this machine or a private network. By
    /// default the server calls model endpoints at public addresses only,
    /// so a tenant cannot make it reach internal services or cloud
    /// metadata — except under `--dev-auth` without `--policy`: one person
    /// on their own machine, who already controls the server, reaches
    /// their local model server without this flag.
    #[arg(long)]
    allow_private_model_endpoints: bool,
    /// The most tokens (input plus output) one user may spend in the
    /// quota window; a chat sent at or over it is answered 429 before any
    /// model is called (a reply that crosses it still finishes). No quota
    /// by default.
    #[arg(long, value_name = "N")]
    user_token_quota: Option<u64>,
    /// What `--user-token-quota` counts over: `total` (the default), the
    /// current UTC `day` or `month`.
    #[arg(long, value_name = "WINDOW")]
    user_token_quota_window: Option<oxiscope_server::QuotaWindow>,
    /// Serve Prometheus metrics (`GET /metrics`, text format) on
    /// `--metrics-addr`, a listener of its own: the metrics count every
    /// tenant's activity, so they are never served on the tenants' address.
    #[arg(long)]
    metrics: bool,
    /// Where `--metrics` listens; unauthenticated, so keep it on loopback
    /// or a network only the scraper reaches.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9464")]
    metrics_addr: std::net::SocketAddr,
    /// Events kept per session for late SSE subscribers (the oldest go
    /// first).
    #[arg(long, value_name = "N", default_value_t = 4096)]
    replay_limit: usize,
    /// The most event payload kept per session for late SSE subscribers,
    /// in MiB, beside `--replay-limit` (the oldest events go first).
    #[arg(long, value_name = "MIB", default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=4096))]
    replay_log_mib: u64,
    /// The most a session's model may write into one reply, in MiB: that
    /// much text (and thinking), and that much tool-call arguments. A
    /// model that goes on is cut off and the reply ends with an error.
    #[arg(long, value_name = "MIB", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=1024))]
    max_reply_mib: u64,
    /// Inputs that may wait per session while a run is active; one more
    /// is answered 429.
    #[arg(long, value_name = "N", default_value_t = 64)]
    inbox_limit: usize,
    /// How long a run's lock lives without renewal (renewed every third of
    /// it): when a replica dies, another one ends its running replies with
    /// a retryable error after at most about this long.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    lock_ttl_secs: u64,
    /// The largest knowledge-base document upload, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=4096))]
    kb_max_upload_mib: u64,
    /// The most knowledge bases one user may have.
    #[arg(long, value_name = "N", default_value_t = 100)]
    kb_max_bases_per_user: usize,
    /// The most knowledge-base documents one user may keep.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    kb_max_documents_per_user: usize,
    /// The most MiB of uploaded knowledge-base files one user may keep.
    #[arg(long, value_name = "MIB", default_value_t = 1024)]
    kb_max_mib_per_user: u64,
    /// How long indexing one knowledge-base document may take once it
    /// holds a slot; past it the document is marked as an error.
    #[arg(long, value_name = "SECS", default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    kb_document_time_limit_secs: u64,
    /// How long one skill install request may take in all, the wait for
    /// a free install slot included; past it the request is answered 503.
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    skill_install_time_limit_secs: u64,
    /// How long a tool call may run before it is moved to the background:
    /// the reply goes on with a placeholder result, and the call's result
    /// arrives later in the session as a message (a call cut off by a
    /// restart is reported to its session). `0` turns this off.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    tool_offload_secs: u64,
    /// Long-term memory for every agent: Markdown files in the session's
    /// workspace (`Memory/`, indexed by `Memory/MEMORY.md`) that the agent
    /// writes and reads itself. `agent-control` offers a `memory_search`
    /// tool; `static-control` has the model pick relevant memories at the
    /// start of every reply (one more model call per reply); `both` does
    /// both. Off unless given.
    #[arg(long, value_enum)]
    agentic_memory: Option<MemoryArg>,
    /// A token budget for every reply: once a reply's model calls have
    /// used this many tokens (prompt tokens plus completion tokens times
    /// `--reply-output-token-weight`), the model is told to give its final
    /// answer without more tool calls. No budget unless given.
    #[arg(long, value_name = "TOKENS")]
    reply_token_budget: Option<f64>,
    /// How much a completion token counts against `--reply-token-budget`
    /// (a prompt token counts 1).
    #[arg(long, value_name = "WEIGHT", default_value_t = 1.0)]
    reply_output_token_weight: f64,
    /// The bubblewrap program (default: `bwrap` on `PATH`).
    #[arg(long, value_name = "PATH", default_value = "bwrap")]
    bwrap: PathBuf,
    /// How workspaces are shared: one per agent of a user (`per-agent`),
    /// per session, or one per user.
    #[arg(long, default_value = "per-agent", value_parser = parse_isolation)]
    isolation: Isolation,
    /// A hub users install MCP servers or skills from (repeatable): a
    /// catalogue JSON file, a directory holding `hub.json`, or an
    /// `https://` URL of one. Each names its `hub_id` and `kind` (`mcp` or
    /// `skill`); two hubs of one kind with the same id are an error.
    #[arg(long = "hub", value_name = "FILE_OR_URL")]
    hubs: Vec<String>,
    /// Where titles of sessions created without a name come from after
    /// their first reply: `model` (the session's own model writes a short
    /// title; an excerpt of the opening message if that fails) or
    /// `excerpt` (no model call).
    #[arg(long, value_enum, default_value_t = TitlesArg::Model)]
    session_titles: TitlesArg,
    /// A directory of sub-agent templates for agent teams: each `*.json`
    /// file is one template (`type`, `description`,
    /// `system_prompt_template`, optional `permission_context`, ...); the
    /// leader picks one with `AgentCreate`'s `subagent_type`. A `default`
    /// one replaces the built-in template.
    #[arg(long, value_name = "DIR")]
    team_templates: Option<PathBuf>,
    /// Export traces of the agents' runs (GenAI spans) to the OTLP/HTTP
    /// collector at this base URL (spans go to `URL/v1/traces`, JSON).
    /// Without it, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` turn tracing on; `OTEL_EXPORTER_OTLP_HEADERS`
    /// and `OTEL_SERVICE_NAME` apply either way.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// Hang each `POST /chat/` span under the caller's W3C `traceparent`
    /// header. Off by default: tenants are not trusted, and the header
    /// would put the server's spans into a trace of their choosing; turn it
    /// on behind a gateway that sets the header itself.
    #[arg(long)]
    otlp_trust_traceparent: bool,
    #[command(flatten)]
    jwt: jwt::JwtArgs,
    #[command(flatten)]
    listen: ListenArgs,
    #[command(flatten)]
    log: crate::logging::LogArgs,
}

/// The listener's limits (see `oxiscope_server::ListenLimits`).
#[derive(Debug, Args)]
struct ListenArgs {
    /// The most connections open at once, from all clients together; one
    /// more is closed as soon as it is accepted.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: u64,
    /// The most connections open at once from one client address (behind
    /// a reverse proxy every client has the proxy's: raise it there).
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    max_connections_per_ip: u64,
    /// How long a client may take to send a request's head (from the
    /// connection's accept, or the first byte of a later request).
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    header_timeout_secs: u64,
    /// How long a kept-alive connection may wait for its next request.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    idle_timeout_secs: u64,
    /// How long a request may take to be answered (`503` after that);
    /// session event streams are not bounded, uploads have
    /// `--upload-timeout-secs`.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    request_timeout_secs: u64,
    /// How long a knowledge-base document or skill upload may take.
    #[arg(long, value_name = "SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    upload_timeout_secs: u64,
}

impl ListenArgs {
    fn limits(&self) -> oxiscope_server::ListenLimits {
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let secs = std::time::Duration::from_secs;
        oxiscope_server::ListenLimits {
            max_connections: count(self.max_connections),
            max_connections_per_ip: count(self.max_connections_per_ip),
            header_timeout: secs(self.header_timeout_secs),
            idle_timeout: secs(self.idle_timeout_secs),
            request_timeout: secs(self.request_timeout_secs),
            upload_timeout: secs(self.upload_timeout_secs),
        }
    }
}

/// `--agentic-memory`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum MemoryArg {
    AgentControl,
    StaticControl,
    Both,
}

/// `--session-titles`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TitlesArg {
    Model,
    Excerpt,
}

/// `--workspace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum WorkspaceArg {
    Sandbox,
    Local,
}

/// `--allow-mode`: a permission mode, `-` or `_` between words.
fn parse_mode(value: &str) -> Result<PermissionMode, String> {
    let wanted = value.replace('-', "_");
    PermissionMode::ALL
        .into_iter()
        .find(|m| m.as_str() == wanted)
        .ok_or_else(|| {
            let names: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
            format!(
                "unknown permission mode {value:?}: expected one of {}",
                names.join(", ")
            )
        })
}

/// The tenant policy: the file, then the flags.
fn tenant_policy(args: &ServeArgs) -> anyhow::Result<TenantPolicy> {
    let mut policy = match &args.policy {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the policy file {}", path.display()))?;
            toml::from_str(&text).with_context(|| format!("the policy file {}", path.display()))?
        }
        None => TenantPolicy::default(),
    };
    if !args.allow_modes.is_empty() {
        policy.allowed_modes.clone_from(&args.allow_modes);
    }
    if let Some(max) = args.max_confirm_rules {
        policy.max_confirm_rules = max;
    }
    if args.no_remote_media {
        policy.remote_media = false;
    }
    // Under dev auth anyone who reaches the port is any user already:
    // the endpoint rule would protect nothing, and would only stop a
    // local model server (a policy file still decides, when given).
    if args.allow_private_model_endpoints || (args.dev_auth && args.policy.is_none()) {
        policy.private_model_endpoints = true;
    }
    if let Some(quota) = args.user_token_quota {
        policy.user_token_quota = Some(quota);
    }
    if let Some(window) = args.user_token_quota_window {
        policy.user_token_quota_window = window;
    }
    Ok(policy)
}

/// `--isolation`: `per-agent`, `per-session` or `per-user` (`_` works too).
fn parse_isolation(value: &str) -> Result<Isolation, String> {
    match value.replace('_', "-").as_str() {
        "per-agent" => Ok(Isolation::PerAgent),
        "per-session" => Ok(Isolation::PerSession),
        "per-user" => Ok(Isolation::PerUser),
        _ => Err(format!(
            "unknown isolation {value:?}: expected per-agent, per-session or per-user"
        )),
    }
}

/// The environment variable `--key-file` defaults to.
const KEY_FILE_ENV: &str = "OXISCOPE_KEY_FILE";
/// The environment variable `--redis-url` defaults to.
const REDIS_URL_ENV: &str = "OXISCOPE_REDIS_URL";

/// The message bus: Redis at `url` (else `OXISCOPE_REDIS_URL`), or the
/// in-process bus; either keeps replay logs as `retention` says.
async fn open_bus(
    url: Option<&str>,
    retention: oxiscope_storage::Retention,
) -> anyhow::Result<Arc<dyn oxiscope_storage::MessageBus>> {
    let from_env = std::env::var(REDIS_URL_ENV).ok();
    match url.or(from_env.as_deref()).filter(|u| !u.trim().is_empty()) {
        // The URL may carry a password: the error does not repeat it.
        Some(url) => {
            let options = oxiscope_storage::RedisBusOptions::default().with_retention(retention);
            let bus = oxiscope_storage::RedisBus::connect(url, options)
                .await
                .context("connecting to Redis (--redis-url)")?;
            Ok(Arc::new(bus))
        }
        None => Ok(Arc::new(InMemoryBus::with_retention(retention))),
    }
}

/// MiB as bytes (the flags' ranges keep them far from overflowing).
fn mib(n: u64) -> usize {
    usize::try_from(n.saturating_mul(1 << 20)).unwrap_or(usize::MAX)
}

/// The `oxiscope keys create` command that writes to the database this
/// server reads, as the operator can paste it.
fn keys_create_command(args: &ServeArgs, dir: &Path) -> String {
    let mut command = "oxiscope keys create --user NAME".to_owned();
    match args.database_url.as_deref() {
        // From the environment: `keys` reads the same variable.
        None if database_url(None).is_some() => {}
        Some(url) if is_postgres_url(url) => {
            command.push_str(" --database-url '");
            command.push_str(&without_password(url).replacen('@', ":PASSWORD@", 1));
            command.push('\'');
        }
        _ => {
            command.push_str(" --data-dir '");
            command.push_str(&dir.display().to_string().replace('\'', "'\\''"));
            command.push('\'');
        }
    }
    command
}

/// The credential sealer: `--key-file` (else `OXISCOPE_KEY_FILE`), which
/// must exist, else the data directory's key (or `OXISCOPE_SECRET_KEY`).
fn load_sealer(
    key_file: Option<&Path>,
    dir: &Path,
    shared_database: bool,
) -> anyhow::Result<Sealer> {
    let from_env = std::env::var_os(KEY_FILE_ENV).map(PathBuf::from);
    match key_file.map(Path::to_path_buf).or(from_env) {
        Some(path) => {
            let text = std::fs::read_to_string(&path).with_context(|| {
                format!(
                    "reading the key file {} (--key-file; create it once with \
                     `head -c 32 /dev/urandom | base64 > FILE` and give every replica the same)",
                    path.display()
                )
            })?;
            Sealer::from_base64(&text).with_context(|| format!("the key file {}", path.display()))
        }
        None => {
            let own_key = std::env::var_os(oxiscope_server::KEY_ENV).is_none();
            if shared_database && own_key {
                eprintln!(
                    "WARNING: the database is shared but the credential key is this replica's \
                     own ({}): give every replica the same --key-file, or credentials stored \
                     through one cannot be read through another.",
                    dir.join(oxiscope_server::KEY_FILE).display()
                );
            }
            Sealer::load_or_create(dir).context("loading the credential key")
        }
    }
}

pub(crate) fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    crate::logging::init_service(&args.log)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(args))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    let policy = tenant_policy(args)?;
    // Every connection takes a file descriptor: the connection limits, not
    // a low soft limit, are what turn clients away.
    match oxiscope_server::raise_open_file_limit() {
        Ok((before, after)) if before != after => {
            tracing::info!(?before, ?after, "raised the soft open-file limit");
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "cannot raise the soft open-file limit"),
    }
    let workspace = match args.workspace {
        WorkspaceArg::Sandbox => {
            let config = SandboxConfig {
                bwrap: args.bwrap.clone(),
                network: args.sandbox_network,
                ..SandboxConfig::default()
            };
            match super::sandbox_tier::choose(args.sandbox, config).await? {
                Some(config) => WorkspaceMode::Sandbox(config),
                None => WorkspaceMode::Local,
            }
        }
        WorkspaceArg::Local => {
            eprintln!(
                "WARNING: --workspace local: agents' tools run UNCONFINED on this machine, as \
                 this user, with this process's environment (API keys included). Any tenant \
                 can read and change whatever this user can. Use it only when every user of \
                 this server is trusted."
            );
            WorkspaceMode::Local
        }
    };
    let dir = prepare_data_dir(&data_dir(args.data_dir.as_ref()))?;
    // Once, with a real workspace where the workspaces live: a sandbox
    // that cannot work there stops the server now, with the reason,
    // instead of failing every chat.
    if let WorkspaceMode::Sandbox(config) = &workspace {
        oxiscope_workspace::probe_sandbox_at(config, &dir.join("workspaces"))
            .await
            .with_context(|| {
                format!(
                    "oxiscope serve runs every tool in a sandbox, and none works over {}",
                    dir.join("workspaces").display()
                )
            })?;
    }
    let storage = open_storage(args.database_url.as_deref(), &dir).await?;
    let shared = database_url(args.database_url.as_deref()).is_some_and(|u| is_postgres_url(&u));
    let sealer = load_sealer(args.key_file.as_deref(), &dir, shared)?;
    let jwt = args.jwt.verifier(args.dev_auth)?;
    let auth = if args.dev_auth {
        eprintln!(
            "WARNING: --dev-auth is on: every request may claim any user with the X-User-ID \
             header. Never expose this server to others."
        );
        AuthMode::DevHeader
    } else {
        AuthMode::ApiKeys
    };
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("listening on {}", args.addr))?;
    let addr = listener.local_addr()?;
    let mut config = ServerConfig::new(&dir);
    config.engine.replay_limit = args.replay_limit;
    config.engine.reply_limits = oxiscope_agent::ReplyLimits {
        max_text_bytes: mib(args.max_reply_mib),
        max_tool_input_bytes: mib(args.max_reply_mib),
    };
    config.engine.inbox_limit = args.inbox_limit;
    config.engine.lock_ttl = std::time::Duration::from_secs(args.lock_ttl_secs);
    config.engine.takeover_interval = config.engine.lock_ttl / 3;
    config.engine.tool_offload = std::time::Duration::from_secs(args.tool_offload_secs);
    if let Some(budget) = args.reply_token_budget {
        anyhow::ensure!(
            budget.is_finite() && budget > 0.0,
            "--reply-token-budget must be a positive number, got {budget}"
        );
        anyhow::ensure!(
            args.reply_output_token_weight.is_finite() && args.reply_output_token_weight >= 0.0,
            "--reply-output-token-weight must be a number from 0 up, got {}",
            args.reply_output_token_weight
        );
        config.engine.reply_budget = Some(oxiscope_agent::ReplyBudgetControlMiddleware {
            output_token_weight: args.reply_output_token_weight,
            ..oxiscope_agent::ReplyBudgetControlMiddleware::new(budget)
        });
    }
    config.engine.agentic_memory = args.agentic_memory.map(|mode| oxiscope_memory::Parameters {
        mode: match mode {
            MemoryArg::AgentControl => oxiscope_memory::MemoryMode::AgentControl,
            MemoryArg::StaticControl => oxiscope_memory::MemoryMode::StaticControl,
            MemoryArg::Both => oxiscope_memory::MemoryMode::Both,
        },
        ..oxiscope_memory::Parameters::default()
    });
    config.engine.session_titles = match args.session_titles {
        TitlesArg::Model => SessionTitles::Model,
        TitlesArg::Excerpt => SessionTitles::Excerpt,
    };
    if let Some(dir) = &args.team_templates {
        let templates = oxiscope_server::TeamTemplates::load_dir(dir)
            .with_context(|| format!("the team templates in {}", dir.display()))?;
        config = config.with_team_templates(templates);
    }
    config.engine.knowledge = config
        .engine
        .knowledge
        .with_max_upload_bytes(usize::try_from(args.kb_max_upload_mib << 20).unwrap_or(usize::MAX))
        .with_quotas(
            args.kb_max_bases_per_user,
            args.kb_max_documents_per_user,
            args.kb_max_mib_per_user.saturating_mul(1 << 20),
        )
        .with_document_time_limit(std::time::Duration::from_secs(
            args.kb_document_time_limit_secs,
        ));
    config.engine.skill_install_limit =
        std::time::Duration::from_secs(args.skill_install_time_limit_secs);
    let vector_store_url = args
        .vector_store_url
        .clone()
        .or_else(|| std::env::var("OXISCOPE_VECTOR_STORE_URL").ok())
        .filter(|u| !u.trim().is_empty());
    if let Some(url) = vector_store_url {
        let qdrant_key = std::env::var("OXISCOPE_QDRANT_API_KEY").ok();
        let store = oxiscope_server::open_vector_store(&url, qdrant_key)
            .await
            .context("opening the vector store (--vector-store-url)")?;
        config.engine.knowledge = config.engine.knowledge.with_vector_store(store);
    }
    let config = config
        .with_workspace(workspace)
        .with_isolation(args.isolation)
        .with_policy(policy)
        .with_auth(auth)
        .with_cors_origins(args.cors_origins.clone())
        .with_hubs(args.hubs.iter().map(|h| HubSource::parse(h)).collect())
        .with_channels(channel_types())
        .with_listen_addr(addr);
    let config = match jwt {
        Some(jwt) => {
            eprintln!(
                "oxiscope serve: accepting JWTs of {} for audience {}",
                jwt.config().issuer,
                jwt.config().audience
            );
            config.with_jwt(jwt)
        }
        None => config,
    };
    let otlp = match OtlpConfig::from_env(args.otlp_endpoint.as_deref()) {
        Some(otlp) => {
            eprintln!(
                "oxiscope serve: exporting traces to {}",
                otlp.traces_endpoint
            );
            Some(OtlpExporter::start(otlp).context("starting the OTLP exporter")?)
        }
        None => None,
    };
    let config = match &otlp {
        Some(exporter) => config
            .with_span_exporter(exporter.clone())
            .with_trust_traceparent(args.otlp_trust_traceparent),
        None => config,
    };
    let state = AppState::new(
        storage,
        open_bus(
            args.redis_url.as_deref(),
            oxiscope_storage::Retention {
                log_bytes: mib(args.replay_log_mib),
                ..oxiscope_storage::Retention::default()
            },
        )
        .await?,
        sealer,
        config,
    );
    state
        .load_hubs()
        .await
        .context("loading the hub catalogues (--hub)")?;
    eprintln!(
        "oxiscope serve: listening on http://{addr} (data in {})",
        dir.display()
    );
    if !args.dev_auth {
        eprintln!(
            "oxiscope serve: requests need `Authorization: Bearer <key>`; create a key with: {}",
            keys_create_command(args, &dir)
        );
    }
    if args.metrics {
        let metrics = tokio::net::TcpListener::bind(args.metrics_addr)
            .await
            .with_context(|| format!("listening on {} (--metrics-addr)", args.metrics_addr))?;
        eprintln!(
            "oxiscope serve: metrics on http://{}/metrics (unauthenticated)",
            metrics.local_addr()?
        );
        let metrics_state = state.clone();
        tokio::spawn(async move {
            if let Err(e) = oxiscope_server::serve_metrics(metrics, metrics_state).await {
                tracing::error!(error = %e, "the metrics listener failed");
            }
        });
    }
    let served =
        oxiscope_server::serve(listener, state, args.listen.limits(), shutdown_signal()).await;
    if let Some(exporter) = otlp {
        exporter.shutdown().await;
    }
    served?;
    eprintln!("oxiscope serve: stopped");
    Ok(())
}

/// Ctrl-C, or SIGTERM on Unix.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    eprintln!("oxiscope serve: shutting down (interrupting running replies)");
}

/// The IM channel types tenants may connect.
fn channel_types() -> oxiscope_server::channel::Registry {
    oxiscope_server::channel::Registry::new()
        .with(oxiscope_server::channel::telegram::Telegram::new())
        .with(oxiscope_server::channel::slack::Slack::new())
        .with(oxiscope_server::channel::discord::Discord::new())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn policy(args: &[&str]) -> anyhow::Result<TenantPolicy> {
        let cli = Cli::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))?;
        tenant_policy(&cli.serve)
    }

    #[test]
    fn the_policy_comes_from_the_file_then_the_flags() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("policy.toml");
        std::fs::write(
            &file,
            "allowed_modes = [\"default\", \"bypass\"]\nmax_confirm_rules = 2\nremote_media = true\n\
             private_model_endpoints = true\n",
        )
        .unwrap();
        let from_file = policy(&["--policy", file.to_str().unwrap()]).unwrap();
        assert_eq!(
            from_file.allowed_modes,
            [PermissionMode::Default, PermissionMode::Bypass]
        );
        assert_eq!(from_file.max_confirm_rules, 2);
        assert!(from_file.private_model_endpoints);
        let flags = policy(&[
            "--policy",
            file.to_str().unwrap(),
            "--allow-mode",
            "accept-edits",
            "--max-confirm-rules",
            "0",
            "--no-remote-media",
        ])
        .unwrap();
        assert_eq!(flags.allowed_modes, [PermissionMode::AcceptEdits]);
        assert_eq!(flags.max_confirm_rules, 0);
        assert!(!flags.remote_media);
        assert!(!policy(&[]).unwrap().private_model_endpoints);
        assert_eq!(
            without_password("postgres://ox:s3cret@db:5432/ox?sslmode=require"),
            "postgres://ox@db:5432/ox?sslmode=require"
        );
        assert_eq!(without_password("postgres://db/ox"), "postgres://db/ox");
        assert_eq!(
            describe_store(Some("sqlite:///srv/d"), Path::new("/x")),
            "the SQLite database in /srv/d"
        );
        assert!(policy(&["--dev-auth"]).unwrap().private_model_endpoints);
        assert!(
            policy(&["--allow-private-model-endpoints"])
                .unwrap()
                .private_model_endpoints
        );
        assert_eq!(policy(&[]).unwrap(), TenantPolicy::default());
        assert!(policy(&["--allow-mode", "yolo"]).is_err());
        std::fs::write(&file, "allowed_mode = [\"default\"]\n").unwrap();
        let err = policy(&["--policy", file.to_str().unwrap()]).unwrap_err();
        assert!(format!("{err:#}").contains("allowed_mode"), "{err:#}");
    }

    #[test]
    fn the_listener_flags_default_to_the_library_limits_and_refuse_zero() {
        let cli = Cli::try_parse_from(["serve"]).unwrap();
        assert_eq!(
            cli.serve.listen.limits(),
            oxiscope_server::ListenLimits::default()
        );
        let cli = Cli::try_parse_from([
            "serve",
            "--max-connections-per-ip",
            "3",
            "--header-timeout-secs",
            "2",
        ])
        .unwrap();
        let limits = cli.serve.listen.limits();
        assert_eq!(limits.max_connections_per_ip, 3);
        assert_eq!(limits.header_timeout, std::time::Duration::from_secs(2));
        assert!(Cli::try_parse_from(["serve", "--max-connections", "0"]).is_err());
        assert!(Cli::try_parse_from(["serve", "--idle-timeout-secs", "0"]).is_err());
    }

    #[test]
    fn hubs_are_catalogue_files_or_urls() {
        let cli = Cli::try_parse_from([
            "serve",
            "--hub",
            "hubs/mcp.json",
            "--hub",
            "https://hub.example.com/skills.json",
        ])
        .unwrap();
        let sources: Vec<HubSource> = cli.serve.hubs.iter().map(|h| HubSource::parse(h)).collect();
        assert_eq!(
            sources,
            [
                HubSource::Local("hubs/mcp.json".into()),
                HubSource::Remote("https://hub.example.com/skills.json".into()),
            ]
        );
    }

    #[test]
    fn the_token_quota_comes_from_the_file_then_the_flags() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("policy.toml");
        std::fs::write(
            &file,
            "user_token_quota = 5000\nuser_token_quota_window = \"day\"\n",
        )
        .unwrap();
        let from_file = policy(&["--policy", file.to_str().unwrap()]).unwrap();
        assert_eq!(from_file.user_token_quota, Some(5000));
        assert_eq!(
            from_file.user_token_quota_window,
            oxiscope_server::QuotaWindow::Day
        );
        let flags = policy(&[
            "--policy",
            file.to_str().unwrap(),
            "--user-token-quota",
            "10",
            "--user-token-quota-window",
            "month",
        ])
        .unwrap();
        assert_eq!(flags.user_token_quota, Some(10));
        assert_eq!(
            flags.user_token_quota_window,
            oxiscope_server::QuotaWindow::Month
        );
        assert_eq!(policy(&[]).unwrap().user_token_quota, None);
        assert!(policy(&["--user-token-quota-window", "week"]).is_err());
        assert!(policy(&["--user-token-quota", "-1"]).is_err());
    }
}
