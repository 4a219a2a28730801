//! The Bash tool and the `run_process` under it: exit codes, caps,
//! timeouts, process-tree kill.

use std::path::Path;
use std::time::Duration;

use oxiscope_message::{PermissionBehavior, ToolResultState};
use oxiscope_permission::{PermissionContext, PermissionMode};
use oxiscope_tool::{SessionState, ToolResponse, Toolkit, run_process};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::support::{builtin_toolkit, ctx, expect, run};

/// Whether a process exists and is not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next());
            state != Some("Z") && state != Some("X")
        }
        Err(_) => false,
    }
}

/// Whether `pid` is gone, allowing the kernel a moment to deliver the kill
/// on a busy machine (a bounded wait, not a timing assertion).
async fn gone(pid: u32) -> bool {
    for _ in 0..250 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

async fn bash(dir: &Path, command: &str) -> ToolResponse {
    let toolkit = builtin_toolkit(dir);
    run(
        &toolkit,
        "Bash",
        json!({"command": command}),
        ctx(dir, &SessionState::default()),
    )
    .await
}

#[tokio::test]
async fn a_command_runs_in_the_working_directory_and_reports_exit_code_zero() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker.txt"), "").unwrap();
    let response = bash(dir.path(), "ls; echo err >&2").await;
    let text = expect(&response, ToolResultState::Success);
    assert!(
        text.contains("marker.txt") && text.contains("err"),
        "{text}"
    );
    assert_eq!(response.metadata["exit_code"], json!(0));
}

#[tokio::test]
async fn a_failing_command_is_an_error_with_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let response = bash(dir.path(), "echo partial; exit 3").await;
    // AgentScope's header; stdout and stderr arrive interleaved, so one
    // `Output:` section, then the exit code AgentScope leaves out.
    assert_eq!(
        expect(&response, ToolResultState::Error),
        "Command failed: echo partial; exit 3\n\nOutput:\npartial\n\nExit code: 3"
    );
    assert_eq!(response.metadata["exit_code"], json!(3));
    let silent = bash(dir.path(), "exit 2").await;
    assert_eq!(
        expect(&silent, ToolResultState::Error),
        "Command failed: exit 2\n\nExit code: 2"
    );
}

#[tokio::test]
async fn a_silent_command_says_it_printed_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // AgentScope answers an empty text, which Anthropic's API refuses.
    let response = bash(dir.path(), "true").await;
    assert_eq!(expect(&response, ToolResultState::Success), "(no output)");
}

#[tokio::test]
async fn long_output_is_capped_and_reported_as_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let response = bash(dir.path(), "head -c 200000 /dev/zero | tr '\\0' 'a'").await;
    let text = expect(&response, ToolResultState::Success);
    assert_eq!(response.metadata["truncated"], json!(true));
    assert_eq!(
        text,
        format!("{}\n... (output truncated)", "a".repeat(30_000))
    );
}

#[tokio::test]
async fn non_utf8_output_is_decoded_lossily() {
    let dir = tempfile::tempdir().unwrap();
    let response = bash(dir.path(), "printf 'ok \\377\\376 end'").await;
    assert_eq!(
        expect(&response, ToolResultState::Success),
        "ok \u{fffd}\u{fffd} end"
    );
}

#[tokio::test]
async fn an_empty_command_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let response = bash(dir.path(), "   ").await;
    expect(&response, ToolResultState::Error);
}

async fn wait_for_pid(file: &Path) -> u32 {
    for _ in 0..500 {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the command never wrote its pid");
}

#[tokio::test]
async fn cancelling_kills_the_whole_process_tree() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let toolkit = std::sync::Arc::new(builtin_toolkit(dir.path()));
    let cancel = CancellationToken::new();
    let mut call_ctx = ctx(dir.path(), &SessionState::default());
    call_ctx.cancel = cancel.clone();
    // The grandchild `sleep` would outlive a kill of bash alone.
    let command = format!("sleep 300 & echo $! > '{}'; wait", pid_file.display());
    let task = tokio::spawn({
        let toolkit = toolkit.clone();
        async move { run(&toolkit, "Bash", json!({"command": command}), call_ctx).await }
    });
    let pid = wait_for_pid(&pid_file).await;
    assert!(alive(pid));
    cancel.cancel();
    let response = task.await.unwrap();
    assert_eq!(
        expect(&response, ToolResultState::Interrupted),
        "<system-reminder>The tool call has been interrupted by the user.</system-reminder>"
    );
    assert!(
        gone(pid).await,
        "the grandchild {pid} survived the cancellation"
    );
}

#[tokio::test]
async fn dropping_a_running_call_kills_the_whole_process_tree() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let toolkit = std::sync::Arc::new(builtin_toolkit(dir.path()));
    let call_ctx = ctx(dir.path(), &SessionState::default());
    let command = format!("sleep 300 & echo $! > '{}'; wait", pid_file.display());
    let task =
        tokio::spawn(
            async move { run(&toolkit, "Bash", json!({"command": command}), call_ctx).await },
        );
    let pid = wait_for_pid(&pid_file).await;
    assert!(alive(pid));
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    // SIGKILL is asynchronous: `gone` gives the kernel a moment.
    assert!(
        gone(pid).await,
        "the grandchild {pid} survived the dropped call"
    );
}

#[tokio::test]
async fn a_command_that_never_ends_is_killed_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let toolkit = builtin_toolkit(dir.path());
    let command = format!(
        "sleep 300 & echo $! > '{}'; echo started; wait",
        pid_file.display()
    );
    let response = run(
        &toolkit,
        "Bash",
        json!({"command": command, "timeout": 300}),
        ctx(dir.path(), &SessionState::default()),
    )
    .await;
    let text = expect(&response, ToolResultState::Error);
    assert_eq!(text, format!("Command timed out after 300ms: {command}"));
    assert_eq!(response.metadata["timed_out"], json!(true));
    assert!(gone(wait_for_pid(&pid_file).await).await);
}

#[tokio::test]
async fn background_children_do_not_keep_the_call_open_or_survive_it() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let command = format!("sleep 300 & echo $! > '{}'; echo done", pid_file.display());
    let response = bash(dir.path(), &command).await;
    assert_eq!(expect(&response, ToolResultState::Success).trim(), "done");
    assert!(gone(wait_for_pid(&pid_file).await).await);
}

fn decide(toolkit: &Toolkit, command: &str, mode: PermissionMode) -> PermissionBehavior {
    let perm = PermissionContext::new(mode);
    toolkit
        .decide("Bash", &json!({"command": command}), &perm)
        .unwrap()
        .behavior
}

#[test]
fn bash_permissions_come_from_the_permission_engine() {
    let dir = tempfile::tempdir().unwrap();
    let toolkit = builtin_toolkit(dir.path());
    let bash = toolkit.tool("Bash").unwrap();
    assert!(bash.check_read_only(&json!({"command": "ls -la"})));
    assert!(!bash.check_read_only(&json!({"command": "rm -rf build"})));
    assert_eq!(
        decide(&toolkit, "git status", PermissionMode::Default),
        PermissionBehavior::Allow
    );
    assert_eq!(
        decide(&toolkit, "rm -rf build", PermissionMode::Default),
        PermissionBehavior::Ask
    );
    let perm = PermissionContext::new(PermissionMode::Default);
    let suggestions = bash.generate_suggestions(&json!({"command": "npm run build"}), &perm);
    assert!(!suggestions.is_empty());
}

fn sh(script: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(script);
    command
}

#[tokio::test]
async fn run_process_runs_any_command_and_reports_its_exit_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = sh("pwd; echo err >&2; exit 3");
    command.current_dir(dir.path());
    let out = run_process(
        command,
        Duration::from_secs(30),
        1024,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let text = String::from_utf8(out.output.clone()).unwrap();
    assert!(
        text.contains(&dir.path().display().to_string()) && text.contains("err"),
        "{text}"
    );
    assert_eq!(
        (out.exit_code, out.timed_out, out.cancelled, out.truncated()),
        (Some(3), false, false, false)
    );
}

#[tokio::test]
async fn run_process_kills_a_command_at_its_timeout_and_keeps_the_output() {
    let started = std::time::Instant::now();
    let out = run_process(
        sh("echo hi; sleep 30"),
        Duration::from_millis(300),
        1024,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(out.output, b"hi\n");
    assert_eq!(
        (out.exit_code, out.timed_out, out.cancelled),
        (None, true, false)
    );
}

#[tokio::test]
async fn run_process_caps_output_and_kills_the_group_on_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let cancel = CancellationToken::new();
    let script = format!(
        "head -c 5000 /dev/zero; sleep 300 & echo $! > '{}'; wait",
        pid_file.display()
    );
    let task = tokio::spawn(run_process(
        sh(&script),
        Duration::from_secs(600),
        100,
        cancel.clone(),
    ));
    let pid = wait_for_pid(&pid_file).await;
    cancel.cancel();
    let out = task.await.unwrap().unwrap();
    assert_eq!(
        (
            out.output.len(),
            out.total_bytes,
            out.cancelled,
            out.exit_code
        ),
        (100, 5000, true, None)
    );
    assert!(out.truncated());
    assert!(gone(pid).await, "the grandchild {pid} survived the cancel");
}

#[tokio::test]
async fn run_process_names_a_program_that_cannot_start() {
    let mut command = tokio::process::Command::new("/nonexistent/program");
    command.current_dir("/");
    let err = run_process(
        command,
        Duration::from_secs(1),
        1024,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    assert!(
        err.to_string()
            .starts_with("cannot start /nonexistent/program in /: "),
        "{err}"
    );
}
