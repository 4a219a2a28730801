//! [`McpClient`]: one MCP server, its configuration, its supervised
//! connection and its tools.

mod supervise;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use oxiscope_tool::ToolChunk;
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use self::supervise::Slot;
use crate::config::{McpConfig, RestartPolicy, Timeouts, ToolFilter};
use crate::convert::result_to_chunk;
use crate::error::{Error, Result};
use crate::headers;
use crate::tool::McpTool;
use crate::transport::{Events, HttpHeaders};

/// A client of one MCP server.
///
/// Cheap to clone: clones share the connection. A *stateful* client keeps
/// one session open: it starts the server lazily on first use (or on
/// [`connect`](Self::connect)), restarts it on the next use after it died
/// (within its [`RestartPolicy`]), and stops it on [`close`](Self::close);
/// `connect()` after `close()` opens a fresh transport. A *stateless*
/// client (streamable HTTP only) opens a session for each request and has
/// no lifecycle to manage.
///
/// Every request is bounded by the [`Timeouts`]; a server that does not
/// start, dies or hangs gives a typed [`Error`], logged as a warning.
#[derive(Clone)]
pub struct McpClient {
    inner: Arc<Inner>,
}

struct Inner {
    name: Arc<str>,
    config: McpConfig,
    stateful: bool,
    filter: ToolFilter,
    timeouts: Timeouts,
    restart: RestartPolicy,
    headers: HttpHeaders,
    events: Arc<Events>,
    slot: tokio::sync::Mutex<Slot>,
    generation: AtomicU64,
    restarts: AtomicU64,
    /// The last tool list and the `tools_changed` count it was fetched at.
    cache: Mutex<Option<(u64, Vec<rmcp::model::Tool>)>>,
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("name", &self.inner.name)
            .field("config", &self.inner.config)
            .field("stateful", &self.inner.stateful)
            .finish_non_exhaustive()
    }
}

/// Builds an [`McpClient`]; see [`McpClient::builder`].
#[derive(Debug, Clone)]
pub struct McpClientBuilder {
    name: String,
    config: McpConfig,
    stateful: bool,
    filter: ToolFilter,
    timeouts: Timeouts,
    restart: RestartPolicy,
}

impl McpClientBuilder {
    /// Stateful (one long-lived session, the default) or stateless (a
    /// session per request; streamable HTTP only).
    #[must_use]
    pub fn stateful(mut self, stateful: bool) -> Self {
        self.stateful = stateful;
        self
    }

    /// Exposes only these tools (by the server's names).
    #[must_use]
    pub fn enable_tools(mut self, tools: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.filter.enable = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Hides these tools (by the server's names).
    #[must_use]
    pub fn disable_tools(mut self, tools: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.filter.disable = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the timeouts.
    #[must_use]
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Sets how a dead server is restarted.
    #[must_use]
    pub fn restart_policy(mut self, restart: RestartPolicy) -> Self {
        self.restart = restart;
        self
    }

    /// Builds the client; nothing is started yet.
    ///
    /// # Errors
    ///
    /// A static header is invalid or hop-by-hop ([`Error::InvalidHeader`],
    /// [`Error::ForbiddenHeader`]), or a stdio client was made stateless
    /// ([`Error::StatelessStdio`]).
    pub fn build(self) -> Result<McpClient> {
        let fixed = match &self.config {
            McpConfig::Http(http) => headers::parse(&http.headers)?,
            McpConfig::Stdio(_) if !self.stateful => {
                return Err(Error::StatelessStdio { server: self.name });
            }
            McpConfig::Stdio(_) => headers::Headers::new(),
        };
        Ok(McpClient {
            inner: Arc::new(Inner {
                name: self.name.into(),
                config: self.config,
                stateful: self.stateful,
                filter: self.filter,
                timeouts: self.timeouts,
                restart: self.restart,
                headers: HttpHeaders {
                    fixed: Arc::new(fixed),
                    runtime: Arc::default(),
                },
                events: Arc::default(),
                slot: tokio::sync::Mutex::new(Slot::Idle),
                generation: AtomicU64::new(0),
                restarts: AtomicU64::new(0),
                cache: Mutex::new(None),
            }),
        })
    }
}

impl McpClient {
    /// A builder for the server `name` reached through `config`; stateful
    /// by default, all tools exposed, default timeouts and restart policy.
    pub fn builder(name: impl Into<String>, config: McpConfig) -> McpClientBuilder {
        McpClientBuilder {
            name: name.into(),
            config,
            stateful: true,
            filter: ToolFilter::default(),
            timeouts: Timeouts::default(),
            restart: RestartPolicy::default(),
        }
    }

    /// A client with the defaults.
    ///
    /// # Errors
    ///
    /// As [`McpClientBuilder::build`].
    pub fn new(name: impl Into<String>, config: McpConfig, is_stateful: bool) -> Result<Self> {
        Self::builder(name, config).stateful(is_stateful).build()
    }

    /// The server's name (the middle part of its tools' names).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// How the server is reached.
    #[must_use]
    pub fn config(&self) -> &McpConfig {
        &self.inner.config
    }

    /// Whether the client keeps one session open.
    #[must_use]
    pub fn is_stateful(&self) -> bool {
        self.inner.stateful
    }

    /// Starts the server and runs the handshake now (stateful clients; a
    /// no-op for stateless ones). Does nothing when already connected; after
    /// [`close`](Self::close) it opens a fresh transport.
    ///
    /// # Errors
    ///
    /// [`Error::Spawn`], [`Error::StartupTimeout`] or [`Error::Initialize`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future kills a half-started server; the client stays
    /// usable.
    pub async fn connect(&self) -> Result<()> {
        if self.inner.stateful {
            self.inner.connect().await?;
        }
        Ok(())
    }

    /// Stops the server (stateful clients); later uses fail with
    /// [`Error::Closed`] until [`connect`](Self::connect).
    pub async fn close(&self) {
        if self.inner.stateful {
            self.inner.close().await;
            self.invalidate_tools();
        }
    }

    /// Whether a stateful client has a live session now (always `false` for
    /// a stateless one).
    pub async fn is_connected(&self) -> bool {
        self.inner.stateful && self.inner.is_connected().await
    }

    /// How many times a dead server was found and retired.
    #[must_use]
    pub fn restarts(&self) -> u64 {
        self.inner.restarts.load(Ordering::Acquire)
    }

    /// How many `notifications/tools/list_changed` the server sent.
    #[must_use]
    pub fn tools_changed(&self) -> u64 {
        self.inner.events.tools_changed()
    }

    /// Replaces the runtime headers of a streamable-HTTP client: every later
    /// request carries them (over the static headers of the same name);
    /// an empty map leaves only the static headers.
    ///
    /// # Errors
    ///
    /// [`Error::NotHttp`] for a stdio client, [`Error::ForbiddenHeader`] for
    /// a hop-by-hop header, [`Error::InvalidHeader`]; the old headers stay.
    pub fn set_runtime_headers<K, V>(&self, headers: impl IntoIterator<Item = (K, V)>) -> Result<()>
    where
        K: Into<String>,
        V: Into<String>,
    {
        if !matches!(self.inner.config, McpConfig::Http(_)) {
            return Err(Error::NotHttp {
                server: self.inner.name.to_string(),
            });
        }
        let raw: BTreeMap<String, String> = headers
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let parsed = headers::parse(&raw)?;
        match self.inner.headers.runtime.write() {
            Ok(mut guard) => *guard = parsed,
            Err(poisoned) => *poisoned.into_inner() = parsed,
        }
        Ok(())
    }

    /// The server's tools (after the enable / disable filters) as
    /// [`McpTool`]s, usable with or without a toolkit. The list is cached
    /// until the server announces a change.
    ///
    /// # Errors
    ///
    /// The server cannot be reached or fails `tools/list`.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the request; the client stays usable.
    pub async fn list_tools(&self) -> Result<Vec<McpTool>> {
        let tools = self.raw_tools(false).await?;
        Ok(self.wrap(tools))
    }

    /// Like [`list_tools`](Self::list_tools), but always asks the server
    /// (and refreshes the cache).
    pub(crate) async fn fetch_tools(&self) -> Result<Vec<McpTool>> {
        let tools = self.raw_tools(true).await?;
        Ok(self.wrap(tools))
    }

    /// Filters and wraps listed tools.
    fn wrap(&self, tools: Vec<rmcp::model::Tool>) -> Vec<McpTool> {
        tools
            .into_iter()
            .filter(|t| self.inner.filter.allows(&t.name))
            .map(|t| McpTool::new(self.clone(), &t))
            .collect()
    }

    /// Calls `listener` on every `notifications/tools/list_changed` (after
    /// [`tools_changed`](Self::tools_changed) went up) until it returns
    /// `false`. It runs on the session's message loop: it must not block.
    pub(crate) fn on_tools_changed(&self, listener: crate::transport::ToolsChangedListener) {
        self.inner.events.listen(listener);
    }

    async fn raw_tools(&self, fresh: bool) -> Result<Vec<rmcp::model::Tool>> {
        let changes = self.tools_changed();
        if !fresh
            && let Some((seen, tools)) = &*self.lock_cache()
            && *seen == changes
        {
            return Ok(tools.clone());
        }
        let after = self.inner.timeouts.list;
        let tools = self
            .request("tools/list", after, |peer| async move {
                peer.list_all_tools().await
            })
            .await?;
        *self.lock_cache() = Some((changes, tools.clone()));
        Ok(tools)
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, Option<(u64, Vec<rmcp::model::Tool>)>> {
        match self.inner.cache.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn invalidate_tools(&self) {
        *self.lock_cache() = None;
    }

    /// Calls the server's tool `tool` (its own name, not the prefixed one)
    /// and converts the result: an `isError` result is an `Ok` error chunk.
    ///
    /// # Errors
    ///
    /// The server cannot be reached, dies, does not answer within the call
    /// timeout ([`Error::RequestTimeout`]), rejects the request, or `cancel`
    /// fires ([`Error::Cancelled`]).
    ///
    /// # Cancel safety
    ///
    /// Cancelling `cancel` or dropping the future sends the server a
    /// cancellation for the request.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<ToolChunk> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let after = self.inner.timeouts.call;
        let call = self.request("tools/call", after, move |peer| async move {
            peer.call_tool(params).await
        });
        let result = tokio::select! {
            () = cancel.cancelled() => Err(Error::Cancelled { server: self.inner.name.to_string() }),
            result = call => result,
        }?;
        match serde_json::to_value(&result) {
            Ok(json) => Ok(result_to_chunk(&json)),
            Err(e) => Err(Error::Request {
                server: self.inner.name.to_string(),
                method: "tools/call".to_owned(),
                reason: format!("unreadable result: {e}"),
            }),
        }
    }

    /// Runs one request on a leased session within `after`.
    async fn request<T, F, Fut>(&self, method: &str, after: std::time::Duration, f: F) -> Result<T>
    where
        F: FnOnce(rmcp::Peer<rmcp::RoleClient>) -> Fut,
        Fut: Future<Output = std::result::Result<T, ServiceError>>,
    {
        let (peer, lease) = self.inner.lease().await?;
        let result = match tokio::time::timeout(after, f(peer)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(self.service_error(method, e)),
            Err(_) => Err(Error::RequestTimeout {
                server: self.inner.name.to_string(),
                method: method.to_owned(),
                after,
            }),
        };
        if let Err(e) = &result {
            tracing::warn!(server = %self.inner.name, "MCP {method} failed: {e}");
        }
        self.inner.release(lease, result.as_ref().err()).await;
        result
    }

    fn service_error(&self, method: &str, error: ServiceError) -> Error {
        let server = self.inner.name.to_string();
        match error {
            ServiceError::TransportSend(e) => Error::Disconnected {
                server,
                reason: e.to_string(),
            },
            ServiceError::TransportClosed => Error::Disconnected {
                server,
                reason: "the connection closed".to_owned(),
            },
            ServiceError::Timeout { timeout } => Error::RequestTimeout {
                server,
                method: method.to_owned(),
                after: timeout,
            },
            ServiceError::Cancelled { .. } => Error::Cancelled { server },
            ServiceError::McpError(e) => Error::Request {
                server,
                method: method.to_owned(),
                reason: e.message.to_string(),
            },
            other => Error::Request {
                server,
                method: method.to_owned(),
                reason: other.to_string(),
            },
        }
    }
}
