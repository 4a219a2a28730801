//! Sandboxes for the tests: skipped loudly where bubblewrap cannot run,
//! a failure in CI (`CI=true`), where `.ci/run` installs it.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use oxiscope_workspace::{Error, SandboxConfig, SandboxWorkspace, Workspace};

/// A temporary directory the sandbox user can traverse (the sandbox runs
/// as `nobody` when the tests run as root), with a host "secret" beside
/// the workspace.
pub(crate) struct Scratch {
    pub(crate) dir: tempfile::TempDir,
}

impl Scratch {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        std::fs::write(dir.path().join("secret.key"), "HOST-SECRET-KEY").unwrap();
        Self { dir }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.dir.path().join("ws")
    }
}

/// A sandboxed workspace over `scratch`, or `None` (after a loud skip)
/// where bubblewrap cannot run; in CI that is a failure.
pub(crate) async fn sandbox(scratch: &Scratch, config: SandboxConfig) -> Option<SandboxWorkspace> {
    match SandboxWorkspace::create("ws", scratch.root(), config, Vec::new(), Vec::new()).await {
        Ok(workspace) => {
            workspace.initialize().await.unwrap();
            Some(workspace)
        }
        Err(e @ Error::SandboxUnavailable { .. }) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI must run the sandbox tests: {e}"
            );
            let _ = writeln!(std::io::stderr(), "\n!!! SKIPPED (no sandbox): {e}\n");
            None
        }
        Err(e) => panic!("cannot make the sandbox: {e}"),
    }
}

/// Returns from the test when no sandbox can run.
macro_rules! require_sandbox {
    ($scratch:expr, $config:expr) => {
        match $crate::suite::support::sandbox(&$scratch, $config).await {
            Some(workspace) => workspace,
            None => return,
        }
    };
    ($scratch:expr) => {
        require_sandbox!($scratch, oxiscope_workspace::SandboxConfig::default())
    };
}
pub(crate) use require_sandbox;

/// The MCP test servers' directory (installed by `npm ci`), when present;
/// skips loudly or fails in CI like the sandbox.
pub(crate) fn mcp_servers() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../mcp/tests/servers"));
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let script = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if script.is_file() {
        return Some(dir);
    }
    let why = format!(
        "the MCP test server is not installed ({} missing); run `npm ci --prefix crates/mcp/tests/servers`",
        script.display()
    );
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI must run the MCP servers: {why}"
    );
    let _ = writeln!(std::io::stderr(), "\n!!! SKIPPED: {why}\n");
    None
}
