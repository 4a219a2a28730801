//! Sandboxes for the tests: skipped loudly where bubblewrap cannot run,
//! a failure in CI (`CI=true`), where `.ci/run` installs it.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use oxiscope_workspace::{Error, SandboxConfig, SandboxWorkspace, Workspace};

/// A private temporary directory (`0700`: when the tests run as root the
/// sandbox runs as `nobody`, who cannot pass through it, as under a
/// `0700` home), with a host "secret" beside the workspace.
pub(crate) struct Scratch {
    pub(crate) dir: tempfile::TempDir,
}

impl Scratch {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
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

/// How a test's sandbox is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tier {
    /// A fresh bubblewrap sandbox per command.
    Fresh,
    /// One warm bubblewrap sandbox per workspace.
    Warm,
    /// Landlock + seccomp, through this crate's launcher.
    Landlock,
}

impl Tier {
    /// `config` made for this tier.
    pub(crate) fn apply(self, mut config: SandboxConfig) -> SandboxConfig {
        config.warm = self == Self::Warm;
        if self == Self::Landlock {
            config.tier = oxiscope_workspace::SandboxTier::Landlock;
            config.launcher = Some(env!("CARGO_BIN_EXE_oxiscope-landlock").into());
        }
        config
    }
}

/// A sandboxed workspace of `tier` over `scratch`, or `None` (after a
/// loud skip) where it cannot run; in CI that is a failure.
pub(crate) async fn sandbox(
    scratch: &Scratch,
    config: SandboxConfig,
    tier: Tier,
) -> Option<SandboxWorkspace> {
    let config = tier.apply(config);
    if tier == Tier::Landlock {
        // Without a mount namespace the sandbox user must be able to pass
        // through the directories above the workspace: Landlock, not the
        // mode, keeps the secret beside it out of reach.
        std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    match SandboxWorkspace::create("ws", scratch.root(), config, Vec::new(), Vec::new()).await {
        Ok(workspace) => {
            workspace.initialize().await.unwrap();
            Some(workspace)
        }
        Err(e @ Error::SandboxUnavailable { .. }) => {
            oxiscope_test_support::skip(&format!("no sandbox ({tier:?}): {e}"));
            None
        }
        Err(e) => panic!("cannot make the sandbox: {e}"),
    }
}

/// Returns from the test when no sandbox can run; the tier is the `TIER`
/// in scope where it is used, else the default (warm).
macro_rules! require_sandbox {
    ($scratch:expr, $config:expr, $tier:expr) => {
        match $crate::suite::support::sandbox(&$scratch, $config, $tier).await {
            Some(workspace) => workspace,
            None => return,
        }
    };
    ($scratch:expr, $config:expr) => {
        require_sandbox!($scratch, $config, TIER)
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
        return Some(visible_to_sandbox(&dir));
    }
    let why = format!(
        "the MCP test server is not installed ({} missing); run `npm ci --prefix crates/mcp/tests/servers`",
        script.display()
    );
    oxiscope_test_support::skip(&why);
    None
}

/// `dir` itself when anyone may pass through its parents (a sandbox
/// started by root runs as `nobody`), else a copy of it under the
/// temporary directory (a checkout under a private home, say).
fn visible_to_sandbox(dir: &Path) -> PathBuf {
    use std::os::unix::fs::MetadataExt as _;
    let passable = dir
        .ancestors()
        .skip(1)
        .all(|d| std::fs::metadata(d).is_ok_and(|m| m.mode() & 0o001 != 0));
    if passable {
        return dir.to_path_buf();
    }
    static COPY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    COPY.get_or_init(|| {
        let to = std::env::temp_dir().join(format!("oxiscope-mcp-servers-{}", std::process::id()));
        copy_tree(dir, &to);
        to
    })
    .clone()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let target = to.join(entry.file_name());
        if kind.is_symlink() {
            let link = std::fs::read_link(entry.path()).unwrap();
            let _ = std::os::unix::fs::symlink(link, &target);
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
