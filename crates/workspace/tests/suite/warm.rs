//! What is particular to the warm sandbox: commands share one sandbox per
//! workspace, which ends with the workspace and is replaced when it dies.

use std::time::Duration;

use oxiscope_tool::{ExecBackend, ExecOutput, ExecRequest};
use oxiscope_workspace::Workspace;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::support::{Scratch, Tier, require_sandbox};

const TIER: Tier = Tier::Warm;

async fn run(backend: &dyn ExecBackend, command: &str) -> ExecOutput {
    backend
        .exec(
            ExecRequest {
                command: command.to_owned(),
                cwd: "/workspace".into(),
                timeout: Duration::from_secs(30),
                max_output: 64 * 1024,
            },
            CancellationToken::new(),
        )
        .await
        .unwrap()
}

fn text(out: &ExecOutput) -> String {
    String::from_utf8_lossy(&out.output).into_owned()
}

/// The host's processes whose command line holds `marker`.
fn host_processes(marker: &str) -> String {
    let ps = std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .unwrap();
    String::from_utf8_lossy(&ps.stdout).trim().to_owned()
}

/// Waits (bounded) until no host process holds `marker`.
async fn gone(marker: &str) -> bool {
    for _ in 0..100 {
        if host_processes(marker).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn commands_of_a_workspace_share_one_sandbox() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let backend = ws.backend();
    let out = run(&*backend, "echo kept > /tmp/shared; echo $$").await;
    assert_eq!(out.exit_code, Some(0), "{}", text(&out));
    let out = run(&*backend, "cat /tmp/shared; ls /proc | grep -c '^[0-9]'").await;
    let seen = text(&out);
    let mut lines = seen.lines();
    assert_eq!(lines.next(), Some("kept"), "{seen}");
    // The sandbox's init, its holder and this command's shell and pipe:
    // never a host process.
    let processes: usize = lines.next().unwrap().trim().parse().unwrap();
    assert!(processes < 8, "{processes} processes visible:\n{seen}");
}

#[tokio::test]
async fn a_warm_sandbox_killed_from_inside_is_replaced_by_the_next_command() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let backend = ws.backend();
    let out = run(&*backend, "echo old > /tmp/mark; cat /proc/2/comm").await;
    assert_eq!(text(&out), "cat\n", "pid 2 is the holder");
    // Killing the holder ends the sandbox, this command with it.
    let out = run(&*backend, "kill -KILL 2; sleep 5; echo survived").await;
    assert!(!text(&out).contains("survived"), "{}", text(&out));
    let out = run(
        &*backend,
        "cat /tmp/mark 2>/dev/null || echo new; echo alive",
    )
    .await;
    assert_eq!(text(&out), "new\nalive\n");
    assert_eq!(out.exit_code, Some(0));
}

#[tokio::test]
async fn a_process_that_leaves_its_call_lives_until_the_workspace_closes() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let backend = ws.backend();
    // (Retried: parallel tests' fork bombs can hold the sandbox user's
    // process count for a moment.)
    for _ in 0..20 {
        let out = run(
            &*backend,
            "setsid sleep 613.25 </dev/null >/dev/null 2>&1 & sleep 0.5; echo started",
        )
        .await;
        assert_eq!(text(&out), "started\n");
        if !host_processes("sleep 613.25").is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        !host_processes("sleep 613.25").is_empty(),
        "the escaped process was expected alive until the close"
    );
    ws.close().await;
    assert!(gone("sleep 613.25").await, "the close left it running");
    // A closed workspace starts a sandbox again when used.
    let out = run(&*backend, "echo again").await;
    assert_eq!(text(&out), "again\n");
    let out = run(
        &*backend,
        "setsid sleep 613.75 </dev/null >/dev/null 2>&1 & sleep 0.5; echo started",
    )
    .await;
    assert_eq!(text(&out), "started\n");
    drop(backend);
    drop(ws);
    assert!(
        gone("sleep 613.75").await,
        "dropping the workspace left it running"
    );
}
