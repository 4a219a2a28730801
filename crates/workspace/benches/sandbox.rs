//! What the sandbox costs: a trivial Bash call (`true`) and a 64 KiB Read
//! in a `SandboxWorkspace` (warm: one sandbox per workspace, entered by
//! each command; fresh: a sandbox per command; Landlock + seccomp)
//! against the same in a `LocalWorkspace`, in one run. Without bubblewrap the sandbox benchmarks
//! say so and measure nothing.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use divan::Bencher;
use oxiscope_tool::ExecRequest;
use oxiscope_workspace::{LocalWorkspace, SandboxConfig, SandboxTier, SandboxWorkspace, Workspace};
use tokio_util::sync::CancellationToken;

fn main() {
    divan::main();
}

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
});

static DIR: LazyLock<tempfile::TempDir> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    dir
});

const FILE: &str = "read-me.txt";

fn seed(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join(FILE), vec![b'x'; 64 * 1024]).unwrap();
}

static LOCAL: LazyLock<Arc<dyn Workspace>> = LazyLock::new(|| {
    let root = DIR.path().join("local");
    seed(&root);
    let ws = LocalWorkspace::new("local", &root).unwrap();
    RUNTIME.block_on(ws.initialize()).unwrap();
    Arc::new(ws)
});

fn sandbox(name: &str, config: SandboxConfig) -> Option<Arc<dyn Workspace>> {
    let root = DIR.path().join(name);
    seed(&root);
    let made = RUNTIME.block_on(SandboxWorkspace::create(
        name,
        &root,
        config,
        Vec::new(),
        Vec::new(),
    ));
    match made {
        Ok(ws) => {
            RUNTIME.block_on(ws.initialize()).unwrap();
            Some(Arc::new(ws))
        }
        Err(e) => {
            eprintln!("!!! no sandbox, nothing measured: {e}");
            None
        }
    }
}

static WARM: LazyLock<Option<Arc<dyn Workspace>>> =
    LazyLock::new(|| sandbox("warm", SandboxConfig::default()));

static FRESH: LazyLock<Option<Arc<dyn Workspace>>> = LazyLock::new(|| {
    sandbox(
        "fresh",
        SandboxConfig {
            warm: false,
            ..SandboxConfig::default()
        },
    )
});

static LANDLOCK: LazyLock<Option<Arc<dyn Workspace>>> = LazyLock::new(|| {
    sandbox(
        "landlock",
        SandboxConfig {
            tier: SandboxTier::Landlock,
            launcher: Some(env!("CARGO_BIN_EXE_oxiscope-landlock").into()),
            ..SandboxConfig::default()
        },
    )
});

fn bash_true(ws: &dyn Workspace) {
    let out = RUNTIME
        .block_on(ws.backend().exec(
            ExecRequest {
                command: "true".into(),
                cwd: ws.workdir().to_path_buf(),
                timeout: Duration::from_secs(30),
                max_output: 1024,
            },
            CancellationToken::new(),
        ))
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
}

fn read(ws: &dyn Workspace) {
    let data = RUNTIME
        .block_on(ws.backend().read(&ws.workdir().join(FILE), 1 << 20))
        .unwrap();
    assert_eq!(data.len(), 64 * 1024);
}

#[divan::bench(sample_count = 50)]
fn bash_local(bencher: Bencher<'_, '_>) {
    let ws = LOCAL.clone();
    bencher.bench(|| bash_true(&*ws));
}

#[divan::bench(sample_count = 50)]
fn bash_warm_sandbox(bencher: Bencher<'_, '_>) {
    let Some(ws) = WARM.clone() else { return };
    bencher.bench(|| bash_true(&*ws));
}

#[divan::bench(sample_count = 50)]
fn bash_fresh_sandbox(bencher: Bencher<'_, '_>) {
    let Some(ws) = FRESH.clone() else { return };
    bencher.bench(|| bash_true(&*ws));
}

#[divan::bench(sample_count = 50)]
fn bash_landlock_sandbox(bencher: Bencher<'_, '_>) {
    let Some(ws) = LANDLOCK.clone() else { return };
    bencher.bench(|| bash_true(&*ws));
}

#[divan::bench]
fn read_local(bencher: Bencher<'_, '_>) {
    let ws = LOCAL.clone();
    bencher.bench(|| read(&*ws));
}

#[divan::bench]
fn read_sandbox(bencher: Bencher<'_, '_>) {
    let Some(ws) = WARM.clone() else { return };
    bencher.bench(|| read(&*ws));
}
