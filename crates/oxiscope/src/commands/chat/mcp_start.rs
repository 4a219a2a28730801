//! Starting the configured MCP servers in the background. Each enabled
//! server gets its place in the toolkit at once — a [`LateSource`], empty
//! until the server has started and listed its tools — so the console
//! never waits for a slow server; a status line on stderr says when it
//! connected or why it failed (once), and the chat goes on without it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use oxiscope_mcp::{McpClient, McpToolSource};
use oxiscope_tool::{BASIC_GROUP, ToolSet, ToolSource, Toolkit};
use tokio::task::JoinHandle;
use tracing::instrument::WithSubscriber as _;
use tracing::subscriber::NoSubscriber;

use super::mcp_config::ServerSpec;

/// How long closing the servers at exit may take.
const CLOSE_BUDGET: Duration = Duration::from_secs(5);

/// Starts `spec`'s server (stdio ones in `workdir`, or in its `cwd`
/// relative to it) and lists its tools, within its startup timeout. The
/// client's own warnings while it tries are kept off stderr (unless
/// `RUST_LOG` asks for logs): the error returned says it all, once.
///
/// # Errors
/// Why it failed, for a status line.
///
/// # Cancel safety
/// Dropping the future kills a half-started server.
pub(crate) async fn connect(spec: &ServerSpec, workdir: &Path) -> Result<McpToolSource, String> {
    let client = client_for(spec, workdir)?;
    let listed = quietly(tokio::time::timeout(
        spec.startup_timeout,
        McpToolSource::new(client.clone()),
    ))
    .await;
    let why = match listed {
        Ok(Ok(source)) => return Ok(source),
        Ok(Err(e)) => e.to_string(),
        Err(_) => timed_out(spec),
    };
    quietly(client.close()).await;
    Err(why)
}

/// Why a server that took too long failed.
pub(crate) fn timed_out(spec: &ServerSpec) -> String {
    format!(
        "it did not start and list its tools within {}",
        seconds(spec.startup_timeout)
    )
}

/// Runs `work` without logging, unless `RUST_LOG` asks for logs.
pub(crate) async fn quietly<F: Future>(work: F) -> F::Output {
    if std::env::var_os("RUST_LOG").is_some_and(|v| !v.is_empty()) {
        work.await
    } else {
        work.with_subscriber(NoSubscriber::default()).await
    }
}

/// The client of `spec`'s server, not started yet, with its startup
/// timeout; stdio servers run in `workdir` (or their `cwd`, relative to
/// it).
///
/// # Errors
/// The declaration cannot make a client (a bad header, say).
pub(crate) fn client_for(spec: &ServerSpec, workdir: &Path) -> Result<McpClient, String> {
    let decl = &spec.decl;
    let mut config = decl.host_config();
    if let oxiscope_mcp::McpConfig::Stdio(stdio) = &mut config {
        let cwd = match &stdio.cwd {
            Some(dir) => workdir.join(dir),
            None => workdir.to_path_buf(),
        };
        stdio.cwd = Some(cwd);
    }
    let mut timeouts = decl.timeouts();
    timeouts.startup = spec.startup_timeout;
    timeouts.list = timeouts.list.min(spec.startup_timeout);
    decl.client_with_timeouts(config, timeouts)
        .map_err(|e| e.to_string())
}

/// `30 s`, `2.5 s`.
fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// The tools of a server that may not have started yet: none until
/// [`set`](OnceLock::set) gives it its source, then the source's.
#[derive(Debug)]
struct LateSource {
    started: Arc<OnceLock<McpToolSource>>,
    /// The same empty set on every read, so the toolkit sees no change.
    empty: Arc<ToolSet>,
}

impl ToolSource for LateSource {
    fn snapshot(&self) -> Arc<ToolSet> {
        match self.started.get() {
            Some(source) => source.snapshot(),
            None => self.empty.clone(),
        }
    }
}

/// Which status lines are printed on stderr. A failure always is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatusLines {
    /// `mcp: NAME connected (N tools)` as well.
    All,
    /// Only `mcp: NAME failed: WHY`.
    Failures,
}

/// Where status lines go: straight to stderr, or, while held, into a
/// queue the console prints between prompts — a line written while the
/// user edits at the prompt would break the line being edited.
#[derive(Debug, Clone, Default)]
pub(crate) struct StatusSink(Arc<Mutex<Held>>);

#[derive(Debug, Default)]
struct Held {
    on: bool,
    lines: Vec<String>,
}

impl StatusSink {
    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues later lines until [`flush`](Self::flush).
    pub(crate) fn hold(&self) {
        self.held().on = true;
    }

    /// Prints the queued lines on stderr.
    pub(crate) fn flush(&self) {
        for line in std::mem::take(&mut self.held().lines) {
            eprintln!("{line}");
        }
    }

    fn print(&self, line: String) {
        let mut held = self.held();
        if held.on {
            held.lines.push(line);
        } else {
            eprintln!("{line}");
        }
    }
}

/// The servers being started for one agent.
#[derive(Debug, Default)]
pub(crate) struct Servers {
    tasks: Vec<JoinHandle<()>>,
    started: Vec<Arc<OnceLock<McpToolSource>>>,
    sink: StatusSink,
}

impl Servers {
    /// Registers every enabled server of `specs` in `toolkit` and starts
    /// them all in the background, on the current Tokio runtime.
    ///
    /// # Errors
    /// The toolkit refuses a source (it cannot: `basic` always exists).
    pub(crate) fn start(
        specs: &[ServerSpec],
        workdir: &Path,
        toolkit: &mut Toolkit,
        lines: StatusLines,
    ) -> anyhow::Result<Self> {
        let mut servers = Self::default();
        for spec in specs.iter().filter(|s| s.enabled) {
            let started = Arc::new(OnceLock::new());
            let late = LateSource {
                started: started.clone(),
                empty: Arc::new(ToolSet::empty()),
            };
            toolkit.register_source(Arc::new(late), BASIC_GROUP)?;
            let spec = spec.clone();
            let workdir: PathBuf = workdir.to_path_buf();
            let slot = started.clone();
            let sink = servers.sink.clone();
            servers.tasks.push(tokio::spawn(async move {
                match connect(&spec, &workdir).await {
                    Ok(source) => {
                        let count = source.tool_names().len();
                        if slot.set(source).is_err() {
                            tracing::warn!(server = %spec.name(), "MCP server started twice");
                        }
                        if lines == StatusLines::All {
                            sink.print(format!(
                                "mcp: {} connected ({})",
                                spec.name(),
                                tools(count)
                            ));
                        }
                    }
                    Err(why) => sink.print(format!("mcp: {} failed: {why}", spec.name())),
                }
            }));
            servers.started.push(started);
        }
        Ok(servers)
    }

    /// Where the status lines go.
    pub(crate) fn sink(&self) -> &StatusSink {
        &self.sink
    }

    /// Waits until every server has connected or failed, or `budget` has
    /// passed; the servers still starting go on in the background.
    pub(crate) async fn settle(&self, budget: Duration) {
        let deadline = tokio::time::Instant::now() + budget;
        while self.tasks.iter().any(|t| !t.is_finished()) {
            if tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until every server has connected or failed (each within its
    /// startup timeout).
    pub(crate) async fn wait(&mut self) {
        for task in self.tasks.drain(..) {
            // A task that panicked has printed nothing; the server is
            // simply missing.
            let _ = task.await;
        }
    }

    /// Stops the servers that started (a slow one still starting is
    /// abandoned, which kills it).
    pub(crate) async fn close(self) {
        for task in &self.tasks {
            task.abort();
        }
        let clients: Vec<_> = self
            .started
            .iter()
            .filter_map(|s| s.get().map(|s| s.client().clone()))
            .collect();
        let closing = futures_util::future::join_all(clients.iter().map(|c| c.close()));
        let _ = quietly(tokio::time::timeout(CLOSE_BUDGET, closing)).await;
    }
}

/// `1 tool`, `12 tools`.
pub(crate) fn tools(count: usize) -> String {
    if count == 1 {
        "1 tool".to_owned()
    } else {
        format!("{count} tools")
    }
}
