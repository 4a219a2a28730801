//! Opening one MCP session: spawning a stdio server or dialling a
//! streamable-HTTP one, then the `initialize` handshake, all within the
//! startup timeout.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;

use crate::config::{HttpConfig, McpConfig, StdioConfig, Timeouts};
use crate::error::{Error, Result};
use crate::headers::{HeaderClient, Headers, reqwest_client};

/// A live session with one server.
pub(crate) type Session = RunningService<RoleClient, Handler>;

/// How many stderr lines of a stdio server are kept for error messages.
const STDERR_TAIL: usize = 20;

/// Told about each `notifications/tools/list_changed`, after the count
/// went up; returns `false` once it wants no more calls (it is dropped).
///
/// Runs on the session's message loop: it must return at once (spawn any
/// work) and must never wait for the session.
pub(crate) type ToolsChangedListener = Box<dyn Fn() -> bool + Send + Sync>;

/// What the server tells the client between requests.
#[derive(Default)]
pub(crate) struct Events {
    tools_changed: AtomicU64,
    listeners: Mutex<Vec<ToolsChangedListener>>,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events")
            .field("tools_changed", &self.tools_changed())
            .finish_non_exhaustive()
    }
}

impl Events {
    pub(crate) fn tools_changed(&self) -> u64 {
        // SeqCst with the increment below: a toolkit source checks the count
        // right after clearing its "refreshing" flag and must not miss a
        // change whose listener saw the flag still set.
        self.tools_changed.load(Ordering::SeqCst)
    }

    /// Adds a listener for tool list changes.
    pub(crate) fn listen(&self, listener: ToolsChangedListener) {
        self.lock_listeners().push(listener);
    }

    /// Counts a tool list change and tells the listeners, dropping those
    /// that are done.
    pub(crate) fn tool_list_changed(&self) {
        self.tools_changed.fetch_add(1, Ordering::SeqCst);
        self.lock_listeners().retain(|listener| listener());
    }

    fn lock_listeners(&self) -> std::sync::MutexGuard<'_, Vec<ToolsChangedListener>> {
        match self.listeners.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

/// The client side of a session: announces Oxiscope, counts
/// `notifications/tools/list_changed` and tells the listeners (the toolkit
/// sources of the client, which re-list in a task of their own).
#[derive(Debug, Clone)]
pub(crate) struct Handler {
    server: Arc<str>,
    events: Arc<Events>,
}

impl Handler {
    pub(crate) fn new(server: Arc<str>, events: Arc<Events>) -> Self {
        Self { server, events }
    }
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "MCP server changed its tool list");
        self.events.tool_list_changed();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("oxiscope", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// The HTTP headers of a client, shared with every session it opens.
#[derive(Debug, Clone, Default)]
pub(crate) struct HttpHeaders {
    pub(crate) fixed: Arc<Headers>,
    pub(crate) runtime: Arc<RwLock<Headers>>,
}

/// Opens a session to the server `config` describes.
///
/// # Errors
///
/// [`Error::Spawn`] when the process cannot start, [`Error::StartupTimeout`]
/// when the handshake does not finish in `timeouts.startup`,
/// [`Error::Initialize`] when it fails.
///
/// # Cancel safety
///
/// Dropping the future kills a half-started process.
pub(crate) async fn open(
    server: &Arc<str>,
    config: &McpConfig,
    timeouts: &Timeouts,
    headers: &HttpHeaders,
    events: &Arc<Events>,
) -> Result<Session> {
    let handler = Handler::new(server.clone(), events.clone());
    match config {
        McpConfig::Stdio(stdio) => open_stdio(server, stdio, timeouts.startup, handler).await,
        McpConfig::Http(http) => open_http(server, http, timeouts, headers, handler).await,
    }
}

async fn open_stdio(
    server: &Arc<str>,
    config: &StdioConfig,
    startup: Duration,
    handler: Handler,
) -> Result<Session> {
    let spawn_error = |source| Error::Spawn {
        server: server.to_string(),
        command: config.command.clone(),
        source,
    };
    let mut command = tokio::process::Command::new(&config.command);
    if config.clear_env {
        command.env_clear();
    }
    command.args(&config.args).envs(&config.env);
    if let Some(cwd) = &config.cwd {
        command.current_dir(cwd);
    }
    for (fd, data) in &config.data_fds {
        oxiscope_tool::pass_data_fd(&mut command, *fd, data).map_err(spawn_error)?;
    }
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let reader =
        stderr.map(|stderr| tokio::spawn(forward_stderr(server.clone(), stderr, tail.clone())));
    match tokio::time::timeout(startup, handler.serve(transport)).await {
        Ok(Ok(session)) => Ok(session),
        Ok(Err(e)) => {
            // The process is gone or going; let its last words arrive.
            if let Some(reader) = reader {
                let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
            }
            let lines: Vec<String> = match tail.lock() {
                Ok(t) => t.iter().cloned().collect(),
                Err(p) => p.into_inner().iter().cloned().collect(),
            };
            let mut reason = e.to_string();
            if !lines.is_empty() {
                reason.push_str("; stderr: ");
                reason.push_str(&lines.join(" | "));
            }
            Err(Error::Initialize {
                server: server.to_string(),
                reason,
            })
        }
        Err(_) => Err(Error::StartupTimeout {
            server: server.to_string(),
            after: startup,
        }),
    }
}

/// The longest stderr line kept (and logged); the rest of a longer line
/// is read and dropped, so a server writing endless output without a
/// newline costs no memory.
const STDERR_LINE: usize = 4096;

/// Logs a stdio server's stderr and keeps its last lines.
async fn forward_stderr(server: Arc<str>, stderr: ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut reader = BufReader::new(stderr);
    let mut line: Vec<u8> = Vec::with_capacity(256);
    loop {
        let (used, ended) = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(chunk) => match chunk.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    take_upto(&mut line, &chunk[..at]);
                    (at + 1, true)
                }
                None => {
                    take_upto(&mut line, chunk);
                    (chunk.len(), false)
                }
            },
        };
        reader.consume(used);
        if ended {
            let text = String::from_utf8_lossy(&line).into_owned();
            line.clear();
            tracing::debug!(server = %server, "MCP server stderr: {text}");
            let mut tail = match tail.lock() {
                Ok(t) => t,
                Err(p) => p.into_inner(),
            };
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(text);
        }
    }
}

/// Appends what fits of `bytes` to `line` (at most [`STDERR_LINE`]).
fn take_upto(line: &mut Vec<u8>, bytes: &[u8]) {
    let room = STDERR_LINE.saturating_sub(line.len());
    line.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

async fn open_http(
    server: &Arc<str>,
    config: &HttpConfig,
    timeouts: &Timeouts,
    headers: &HttpHeaders,
    handler: Handler,
) -> Result<Session> {
    let client = HeaderClient::new(
        reqwest_client(server, timeouts.connect)?,
        headers.fixed.clone(),
        headers.runtime.clone(),
    );
    let transport_config = StreamableHttpClientTransportConfig::with_uri(config.url.as_str())
        .reinit_on_expired_session(true);
    let transport = StreamableHttpClientTransport::with_client(client, transport_config);
    match tokio::time::timeout(timeouts.startup, handler.serve(transport)).await {
        Ok(Ok(session)) => Ok(session),
        Ok(Err(e)) => Err(Error::Initialize {
            server: server.to_string(),
            reason: e.to_string(),
        }),
        Err(_) => Err(Error::StartupTimeout {
            server: server.to_string(),
            after: timeouts.startup,
        }),
    }
}
