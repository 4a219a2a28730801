//! Real MCP servers for the tests: `@modelcontextprotocol/server-everything`
//! from npm (installed by `.ci/run` into `tests/servers/`), over stdio and
//! streamable HTTP; our own `dynamic-tools.mjs` on the MCP SDK from the
//! same install, whose tool list changes on request; a recording TCP proxy
//! and a server that never answers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oxiscope_mcp::{McpClient, McpConfig, RestartPolicy, Timeouts};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};

/// The entry point of server-everything, if it and `node` are installed.
///
/// Missing servers skip the test loudly on a developer's machine and fail
/// it in CI (`CI=true`), where `.ci/run` must have installed them.
pub(crate) fn everything() -> Option<PathBuf> {
    let script = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    ));
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if script.is_file() && node {
        return Some(script);
    }
    let why = format!(
        "the MCP test server is not installed (node on PATH: {node}; {} exists: {}); \
         run `npm ci --prefix crates/mcp/tests/servers`",
        script.display(),
        script.is_file()
    );
    oxiscope_test_support::skip(&why);
    None
}

/// Returns from the test when the server is missing (see [`everything`]).
macro_rules! require_everything {
    () => {
        match $crate::suite::support::everything() {
            Some(script) => script,
            None => return,
        }
    };
}
pub(crate) use require_everything;

/// Our own server whose tool list changes on request
/// (`tests/servers/dynamic-tools.mjs`, on the MCP SDK installed next to
/// it), if it, the SDK and `node` are installed; skips or fails like
/// [`everything`].
pub(crate) fn dynamic_tools() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/servers"));
    let script = dir.join("dynamic-tools.mjs");
    let sdk = dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if script.is_file() && sdk.is_file() && node {
        return Some(script);
    }
    let why = format!(
        "the dynamic-tools MCP test server cannot run (node on PATH: {node}; {} exists: {}); \
         run `npm ci --prefix crates/mcp/tests/servers`",
        sdk.display(),
        sdk.is_file()
    );
    oxiscope_test_support::skip(&why);
    None
}

/// Returns from the test when the dynamic-tools server cannot run (see
/// [`dynamic_tools`]).
macro_rules! require_dynamic_tools {
    () => {
        match $crate::suite::support::dynamic_tools() {
            Some(script) => script,
            None => return,
        }
    };
}
pub(crate) use require_dynamic_tools;

/// A stateful stdio client named `name` of the dynamic-tools server.
pub(crate) fn dynamic_client(script: &Path, name: &str) -> McpClient {
    McpClient::builder(
        name,
        McpConfig::stdio("node", [script.display().to_string()]),
    )
    .timeouts(timeouts())
    .build()
    .unwrap()
}

/// Short timeouts so a broken test fails quickly, long enough for node.
pub(crate) fn timeouts() -> Timeouts {
    Timeouts {
        startup: Duration::from_secs(30),
        call: Duration::from_secs(30),
        list: Duration::from_secs(30),
        connect: Duration::from_secs(5),
    }
}

/// server-everything over stdio.
pub(crate) fn stdio_config(script: &Path) -> McpConfig {
    McpConfig::stdio("node", [script.display().to_string(), "stdio".to_owned()])
}

/// server-everything over stdio through `sh`, which first writes the
/// server's pid to `pidfile` (the shell `exec`s node, so the pid is node's).
pub(crate) fn stdio_config_with_pidfile(script: &Path, pidfile: &Path) -> McpConfig {
    let line = format!(
        "echo $$ > '{}'; exec node '{}' stdio",
        pidfile.display(),
        script.display()
    );
    McpConfig::stdio("sh", ["-c".to_owned(), line])
}

/// A stateful stdio client of server-everything named `everything`.
pub(crate) fn stdio_client(script: &Path) -> McpClient {
    McpClient::builder("everything", stdio_config(script))
        .timeouts(timeouts())
        .build()
        .unwrap()
}

/// Reads the pid a [`stdio_config_with_pidfile`] server wrote.
pub(crate) async fn read_pid(pidfile: &Path) -> i32 {
    for _ in 0..200 {
        if let Ok(text) = tokio::fs::read_to_string(pidfile).await
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no pid in {}", pidfile.display());
}

/// A fresh path in the temp dir.
pub(crate) fn temp_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "oxiscope-mcp-{tag}-{}-{}",
        std::process::id(),
        oxiscope_message::stamp::new_id()
    ))
}

/// Polls `check` every 50 ms for up to 20 s.
pub(crate) async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..400 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting until {what}");
}

/// A port on 127.0.0.1 that was free a moment ago.
async fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

/// server-everything's streamable-HTTP transport on a local port; killed
/// on drop.
pub(crate) struct HttpServer {
    _child: Child,
    pub(crate) port: u16,
}

impl HttpServer {
    pub(crate) async fn start(script: &Path) -> Self {
        Self::start_on(script, free_port().await).await
    }

    /// Starts the server on `port` (to bring a killed one back).
    pub(crate) async fn start_on(script: &Path, port: u16) -> Self {
        let child = Command::new("node")
            .arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let server = Self {
            _child: child,
            port,
        };
        eventually("the HTTP MCP server listens", || async move {
            TcpStream::connect(("127.0.0.1", port)).await.is_ok()
        })
        .await;
        server
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

/// A stateful or stateless HTTP client of `url` named `everything`.
pub(crate) fn http_client(url: &str, stateful: bool) -> McpClient {
    McpClient::builder("everything", McpConfig::http(url))
        .stateful(stateful)
        .timeouts(timeouts())
        .restart_policy(RestartPolicy::once())
        .build()
        .unwrap()
}

/// A TCP proxy to `upstream` that records every byte clients send.
pub(crate) struct RecordingProxy {
    pub(crate) port: u16,
    sent: Arc<Mutex<Vec<u8>>>,
}

impl RecordingProxy {
    pub(crate) async fn start(upstream: u16) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let sent = Arc::new(Mutex::new(Vec::new()));
        let record = sent.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                    continue;
                };
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                let record = record.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n) = client_read.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        record.lock().unwrap().extend_from_slice(&buf[..n]);
                        if server_write.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = server_write.shutdown().await;
                });
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
                });
            }
        });
        Self { port, sent }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// What clients sent since the last call, as text.
    pub(crate) fn take(&self) -> String {
        let bytes = std::mem::take(&mut *self.sent.lock().unwrap());
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// A TCP server on 127.0.0.1 that accepts connections and never answers.
pub(crate) async fn silent_http_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    port
}
