//! Putting MCP servers' tools into a [`Toolkit`] and keeping them current.
//!
//! Each server becomes one [`McpToolSource`], a dynamic
//! [`ToolSource`] of the toolkit. When a stateful client's server sends
//! `notifications/tools/list_changed`, the notification handler spawns a
//! task (on the runtime running the session) that lists the tools again
//! and swaps the source's snapshot; the toolkit shows the new list on its
//! next [`schemas`](Toolkit::schemas) or call. Bursts of notifications
//! coalesce: one listing runs at a time per server, and one more follows
//! if a notification came in during it.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use oxiscope_tool::{DynamicTools, Tool, ToolSet, ToolSource, Toolkit};

use crate::client::McpClient;
use crate::error::{Error, Result};

/// What [`register_mcp`] did with each client.
#[derive(Debug, Default)]
pub struct McpRegistration {
    /// Per server that was added: its name and the names of its tools at
    /// registration (the list changes later as the server announces).
    pub registered: Vec<(String, Vec<String>)>,
    /// Per server that was skipped: its name and why.
    pub failed: Vec<(String, Error)>,
    /// The sources registered, one per server in `registered`, in the same
    /// order.
    pub sources: Vec<McpToolSource>,
}

impl McpRegistration {
    /// The tool names registered for `server`.
    #[must_use]
    pub fn tools_of(&self, server: &str) -> Option<&[String]> {
        self.registered
            .iter()
            .find(|(s, _)| s == server)
            .map(|(_, tools)| tools.as_slice())
    }

    /// The source registered for `server`.
    #[must_use]
    pub fn source(&self, server: &str) -> Option<&McpToolSource> {
        self.sources.iter().find(|s| s.client().name() == server)
    }
}

/// Lists the tools of every client — all at once, so a slow server delays
/// no other — and registers each server as an [`McpToolSource`] in `group`
/// (`basic`, or a group declared with [`Toolkit::add_group`]).
///
/// A server whose first listing fails (it does not start, times out,
/// errors) is skipped with a warning and contributes no tools; so is a
/// server one of whose tool names is already taken at registration. The
/// other servers are registered in the order given. Stateful servers are
/// started here if they were not connected yet.
///
/// Afterwards the tools follow the servers: see [`McpToolSource`]. A name
/// clash that appears later (a server adding a tool named like another
/// tool) hides the newcomer with a warning; the tool registered first
/// wins.
///
/// # Cancel safety
///
/// Dropping the future abandons the listings; the toolkit is only changed
/// after all of them finished.
pub async fn register_mcp(
    toolkit: &mut Toolkit,
    clients: &[McpClient],
    group: &str,
) -> McpRegistration {
    let sources = join_all(clients.iter().cloned().map(McpToolSource::new)).await;
    let mut report = McpRegistration::default();
    for (client, source) in clients.iter().zip(sources) {
        let server = client.name().to_owned();
        match source.and_then(|source| add_source(toolkit, source, group)) {
            Ok(source) => {
                report.registered.push((server, source.tool_names()));
                report.sources.push(source);
            }
            Err(e) => {
                tracing::warn!(server = %server, "skipping MCP server: {e}");
                report.failed.push((server, e));
            }
        }
    }
    report
}

/// Registers one server's source, unless one of its tool names is taken.
fn add_source(toolkit: &mut Toolkit, source: McpToolSource, group: &str) -> Result<McpToolSource> {
    let fail = |e| Error::Toolkit {
        server: source.client().name().to_owned(),
        source: e,
    };
    let set = source.inner.tools.current();
    if let Some(taken) = set.names().into_iter().find(|n| toolkit.tool(n).is_some()) {
        return Err(fail(oxiscope_tool::Error::DuplicateTool {
            name: taken.to_owned(),
        }));
    }
    toolkit
        .register_source(Arc::new(source.clone()), group)
        .map_err(fail)?;
    Ok(source)
}

/// The tools of one MCP server as a [`ToolSource`] that follows the
/// server's `notifications/tools/list_changed`.
///
/// Cheap to clone: clones share the tools. [`new`](Self::new) lists the
/// tools once. Then, for a stateful client, every tool list change the
/// server announces makes the notification handler spawn a background task
/// (on the runtime running the session) that lists the tools again and
/// swaps the snapshot the toolkit reads; the toolkit never waits for it and
/// never holds a lock across the listing. When a listing fails (the server
/// errors, times out or cannot be restarted), the source withdraws all of
/// its tools with a warning — other servers' tools stay — until a later
/// listing succeeds: the next announced change, [`refresh`](Self::refresh),
/// or the retry a later read of the source starts once the backoff (1 s,
/// doubling to a minute) has passed; that retry also restarts a dead
/// stateful server, so a server that crashed comes back without announcing.
/// A change announced while no notification listener could run (e.g. just
/// before the source existed) is picked up the next time the toolkit reads
/// the source. The client's enable / disable filters apply to every
/// listing.
///
/// A stateless client opens a session per request, so its server cannot
/// announce changes in between: its tools are listed again only by
/// [`refresh`](Self::refresh) (or the retry after a failed listing).
#[derive(Clone)]
pub struct McpToolSource {
    inner: Arc<SourceInner>,
}

struct SourceInner {
    client: McpClient,
    tools: DynamicTools,
    /// The client's `tools_changed` count when the last listing started.
    seen: AtomicU64,
    /// Whether a background listing task runs.
    refreshing: AtomicBool,
    /// One listing at a time, so an older listing never replaces a newer
    /// one. Held across the listing (bounded by the client's timeouts);
    /// nothing else is locked while waiting for it.
    listing: tokio::sync::Mutex<()>,
    /// After a failed listing: when to try again, and the current backoff.
    retry: std::sync::Mutex<Retry>,
}

/// The backoff of listings after a failure: 1 s, doubling up to a minute.
#[derive(Debug, Default)]
struct Retry {
    due: Option<Instant>,
    backoff: Duration,
}

const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(60);

impl fmt::Debug for McpToolSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpToolSource")
            .field("server", &self.inner.client.name())
            .field("tools", &self.tool_names())
            .finish()
    }
}

impl McpToolSource {
    /// Lists `client`'s tools (starting a stateful server if needed) and
    /// follows its tool list changes from then on.
    ///
    /// # Errors
    ///
    /// The first listing fails.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the listing; nothing is left behind.
    pub async fn new(client: McpClient) -> Result<Self> {
        let inner = Arc::new(SourceInner {
            client,
            tools: DynamicTools::new(),
            seen: AtomicU64::new(0),
            refreshing: AtomicBool::new(false),
            listing: tokio::sync::Mutex::new(()),
            retry: std::sync::Mutex::new(Retry::default()),
        });
        inner.list().await?;
        if inner.client.is_stateful() {
            let weak: Weak<SourceInner> = Arc::downgrade(&inner);
            inner
                .client
                .on_tools_changed(Box::new(move || match weak.upgrade() {
                    Some(inner) => {
                        inner.spawn_refresh();
                        true
                    }
                    None => false,
                }));
            // A change announced during the first listing.
            if inner.behind() {
                inner.spawn_refresh();
            }
        }
        Ok(Self { inner })
    }

    /// The client the tools are listed and called through.
    #[must_use]
    pub fn client(&self) -> &McpClient {
        &self.inner.client
    }

    /// The names of the tools offered now.
    #[must_use]
    pub fn tool_names(&self) -> Vec<String> {
        self.inner
            .tools
            .current()
            .names()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// Lists the tools now (always asking the server) and swaps them in;
    /// returns the new names.
    ///
    /// # Errors
    ///
    /// The listing failed; the source's tools were withdrawn.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the listing and keeps the current
    /// tools.
    pub async fn refresh(&self) -> Result<Vec<String>> {
        self.inner.list().await?;
        Ok(self.tool_names())
    }
}

impl ToolSource for McpToolSource {
    fn snapshot(&self) -> Arc<ToolSet> {
        if (self.inner.client.is_stateful() && self.inner.behind()) || self.inner.retry_due() {
            self.inner.spawn_refresh();
        }
        self.inner.tools.current()
    }
}

impl SourceInner {
    /// Whether the server announced a change after the last listing began.
    fn behind(&self) -> bool {
        self.client.tools_changed() != self.seen.load(Ordering::SeqCst)
    }

    fn retry(&self) -> std::sync::MutexGuard<'_, Retry> {
        self.retry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether a failed listing is due to be tried again (a dead stateful
    /// server is restarted by that listing).
    fn retry_due(&self) -> bool {
        self.retry().due.is_some_and(|due| Instant::now() >= due)
    }

    /// Lists the tools and swaps the snapshot; on failure withdraws them
    /// and schedules another try (made on a later read of the source).
    async fn list(&self) -> Result<()> {
        let _turn = self.listing.lock().await;
        self.seen
            .store(self.client.tools_changed(), Ordering::SeqCst);
        match self.client.fetch_tools().await {
            Ok(tools) => {
                let set = self
                    .tools
                    .replace(tools.into_iter().map(|t| Arc::new(t) as Arc<dyn Tool>));
                tracing::debug!(
                    server = %self.client.name(), tools = ?set.names(),
                    "MCP tools listed"
                );
                *self.retry() = Retry::default();
                Ok(())
            }
            Err(e) => {
                if !self.tools.current().is_empty() {
                    tracing::warn!(
                        server = %self.client.name(),
                        "MCP tool listing failed; the server's tools are withdrawn until a \
                         listing succeeds: {e}"
                    );
                }
                self.tools.clear();
                let mut retry = self.retry();
                retry.backoff = (retry.backoff * 2).clamp(FIRST_RETRY, MAX_RETRY);
                retry.due = Some(Instant::now() + retry.backoff);
                Err(e)
            }
        }
    }

    /// Starts a background listing unless one runs; the running one lists
    /// once more when a change came in meanwhile.
    fn spawn_refresh(self: &Arc<Self>) {
        if self.refreshing.swap(true, Ordering::SeqCst) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime here; the next read from one tries again.
            self.refreshing.store(false, Ordering::SeqCst);
            return;
        };
        let mut running = Running {
            inner: self.clone(),
            armed: true,
        };
        runtime.spawn(async move {
            loop {
                // A failure is logged and withdraws the tools.
                let _ = running.inner.list().await;
                running.inner.refreshing.store(false, Ordering::SeqCst);
                running.armed = false;
                if !running.inner.behind() || running.inner.refreshing.swap(true, Ordering::SeqCst)
                {
                    break;
                }
                running.armed = true;
            }
        });
    }
}

/// The background listing task's hold on the "refreshing" flag: dropping
/// the task mid-listing (its runtime shutting down) clears the flag, so a
/// later change can start a new task.
struct Running {
    inner: Arc<SourceInner>,
    armed: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.armed {
            self.inner.refreshing.store(false, Ordering::SeqCst);
        }
    }
}
