// The attack corpus every tier faces (included by `hostile.rs` with the
// tier as `TIER`): a tenant's commands try to read the server's key, its
// database, its environment and another tenant's files, to write outside,
// to escape through links, `..` and `/proc`, to exhaust processes and
// disk, and to reach loopback services and the cloud metadata address.
// Paths are the workspace's as the tier shows it (`ws.workdir()`).

use std::time::Duration;

use oxiscope_tool::{ExecOutput, ExecRequest};
use oxiscope_workspace::{Limits, SandboxConfig, SandboxWorkspace, Workspace};
use tokio_util::sync::CancellationToken;

use crate::suite::support::{Scratch, require_sandbox};

async fn run_for(ws: &SandboxWorkspace, command: &str, timeout: Duration) -> String {
    let out: ExecOutput = ws
        .backend()
        .exec(
            ExecRequest {
                command: command.to_owned(),
                cwd: ws.workdir().to_path_buf(),
                timeout,
                max_output: 64 * 1024,
            },
            CancellationToken::new(),
        )
        .await
        .unwrap();
    String::from_utf8_lossy(&out.output).into_owned()
}

async fn run(ws: &SandboxWorkspace, command: &str) -> String {
    run_for(ws, command, Duration::from_secs(30)).await
}

/// The server's key, its database and another tenant's file beside the
/// workspace, each holding a marker.
fn plant_host_files(scratch: &Scratch) {
    std::fs::write(scratch.path().join("server.db"), "HOST-DATABASE-ROW").unwrap();
    let other = scratch.path().join("other-tenant");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "OTHER-TENANT-NOTE").unwrap();
}

const MARKERS: [&str; 3] = ["HOST-SECRET-KEY", "HOST-DATABASE-ROW", "OTHER-TENANT-NOTE"];

fn assert_no_marker(seen: &str) {
    for marker in MARKERS {
        assert!(!seen.contains(marker), "{marker} was read:\n{seen}");
    }
}

#[tokio::test]
async fn the_key_the_database_and_other_tenants_files_are_out_of_reach() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    plant_host_files(&scratch);
    let host = scratch.path().display().to_string();
    let seen = run(
        &ws,
        &format!(
            "exec 2>&1; cat ../secret.key ../server.db ../other-tenant/notes.txt; \
             cat {host}/secret.key {host}/server.db {host}/other-tenant/notes.txt; \
             ls {host} ..; echo done"
        ),
    )
    .await;
    assert!(seen.ends_with("done\n"), "{seen}");
    assert_no_marker(&seen);
    assert!(
        !seen.contains("other-tenant\n"),
        "the host directory was listed:\n{seen}"
    );
}

#[tokio::test]
async fn links_dot_dot_and_proc_lead_nowhere() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    plant_host_files(&scratch);
    let host = scratch.path().display().to_string();
    let server = std::process::id();
    let seen = run(
        &ws,
        &format!(
            "exec 2>&1; ln -s {host}/secret.key key; ln -s / slash; ln -s .. up; \
             cat key slash{host}/server.db up/other-tenant/notes.txt ./../../{host}/secret.key; \
             cat /proc/{server}/environ /proc/{server}/cmdline /proc/1/root{host}/secret.key; \
             ls /proc/{server}/cwd/ ; echo done"
        ),
    )
    .await;
    assert!(seen.ends_with("done\n"), "{seen}");
    assert_no_marker(&seen);
    if let Some(pair) = oxiscope_test_support::leaked_env_pair(&seen) {
        panic!("the server's {pair:?} is visible inside:\n{seen}");
    }
}

#[tokio::test]
async fn the_servers_environment_is_not_inherited() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let seen = run(&ws, "env").await;
    if let Some(pair) = oxiscope_test_support::leaked_env_pair(&seen) {
        panic!("the server's {pair:?} is visible inside:\n{seen}");
    }
    assert!(!seen.contains("CARGO_"), "{seen}");
}

#[tokio::test]
async fn nothing_outside_the_workspace_is_writable() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let host = scratch.path().display().to_string();
    let marker = format!("planted-{}", std::process::id());
    let seen = run(
        &ws,
        &format!(
            "exec 2>&1; echo x > ../{marker}; echo x > {host}/{marker}; echo x > /usr/{marker}; \
             echo x > /etc/{marker}; echo x > /var/tmp/{marker}; echo x > /dev/shm/{marker}; \
             echo 61 > /proc/sys/vm/swappiness; ln -s ../secret.key k && echo x > k; echo done"
        ),
    )
    .await;
    assert!(seen.ends_with("done\n"), "{seen}");
    for place in [
        scratch.path().join(&marker),
        format!("/usr/{marker}").into(),
        format!("/etc/{marker}").into(),
        format!("/var/tmp/{marker}").into(),
        format!("/dev/shm/{marker}").into(),
    ] {
        assert!(!place.exists(), "{} was written", place.display());
    }
    assert_eq!(
        std::fs::read_to_string(scratch.path().join("secret.key")).unwrap(),
        "HOST-SECRET-KEY"
    );
}

#[tokio::test]
async fn a_fork_bomb_and_an_endless_writer_are_bounded() {
    let scratch = Scratch::new();
    let config = SandboxConfig {
        limits: Limits {
            processes: 64,
            file_size: 1 << 20,
            ..Limits::default()
        },
        ..SandboxConfig::default()
    };
    let ws = require_sandbox!(scratch, config);
    let started = std::time::Instant::now();
    let seen = run_for(
        &ws,
        "bomb() { bomb | bomb & }; bomb; sleep 1; echo still-here",
        Duration::from_secs(10),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        seen.contains("fork") || seen.contains("Resource temporarily unavailable"),
        "the process limit did not bite: {seen}"
    );
    // Under Landlock the process limit counts every process of the
    // sandbox user on the machine: the bomb's last processes (and other
    // tests' sandboxes) may hold it for a moment.
    let mut seen = String::new();
    for _ in 0..20 {
        seen = run_for(&ws, "yes > big; echo exit=$?", Duration::from_secs(20)).await;
        if !seen.contains("oxiscope-landlock: Resource temporarily unavailable") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(seen.contains("exit=153"), "{seen}");
    let size = std::fs::metadata(scratch.root().join("big")).unwrap().len();
    assert!(size <= 1 << 20, "{size}");
}

#[tokio::test]
async fn loopback_services_and_the_metadata_address_are_unreachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    for target in [format!("127.0.0.1/{port}"), "169.254.169.254/80".to_owned()] {
        let seen = run_for(
            &ws,
            &format!(
                "timeout 5 bash -c 'exec 3<>/dev/tcp/{target}' 2>/dev/null && echo reached || echo blocked"
            ),
            Duration::from_secs(20),
        )
        .await;
        assert_eq!(seen, "blocked\n", "{target}");
    }
}

#[tokio::test]
async fn no_new_namespace_can_be_made() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let seen = run(
        &ws,
        "unshare -Ur true 2>/dev/null; echo userns=$?; unshare -n true 2>/dev/null; echo netns=$?",
    )
    .await;
    assert!(!seen.contains("userns=0"), "{seen}");
    assert!(!seen.contains("netns=0"), "{seen}");
}
