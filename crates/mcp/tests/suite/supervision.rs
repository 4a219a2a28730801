//! Lifecycle and supervision: a killed server restarts on the next use,
//! `connect` after `close` starts a fresh one, a server that never answers
//! `initialize` or cannot start is a typed error and an error result.

use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use oxiscope_mcp::{Error, McpClient, McpConfig, RestartPolicy, Timeouts};
use oxiscope_message::ToolResultState;
use oxiscope_tool::{Tool, ToolCallContext, collect};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    eventually, read_pid, require_everything, stdio_config_with_pidfile, temp_path, timeouts,
};

fn ctx() -> ToolCallContext {
    ToolCallContext::local(std::env::temp_dir())
}

fn short_startup() -> Timeouts {
    Timeouts {
        startup: Duration::from_millis(700),
        ..timeouts()
    }
}

#[tokio::test]
async fn a_killed_stdio_server_is_restarted_on_the_next_use() {
    let script = require_everything!();
    let pidfile = temp_path("pid");
    let client = McpClient::builder("everything", stdio_config_with_pidfile(&script, &pidfile))
        .timeouts(timeouts())
        .build()
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    let echo = tools
        .iter()
        .find(|t| t.remote_name() == "echo")
        .unwrap()
        .clone();
    let first = collect(echo.call(json!({"message": "one"}), ctx())).await;
    assert_eq!(first.text(), "Echo: one");
    let pid = read_pid(&pidfile).await;
    std::fs::remove_file(&pidfile).unwrap();

    kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    eventually("the client noticed the death", || {
        let client = client.clone();
        async move { !client.is_connected().await }
    })
    .await;

    // The tool obtained before the death still works: a new server answers.
    let second = collect(echo.call(json!({"message": "two"}), ctx())).await;
    assert_eq!(second.state, ToolResultState::Success, "{}", second.text());
    assert_eq!(second.text(), "Echo: two");
    assert_eq!(client.restarts(), 1);
    let new_pid = read_pid(&pidfile).await;
    assert_ne!(new_pid, pid);
    client.close().await;
    let _ = std::fs::remove_file(&pidfile);
}

#[tokio::test]
async fn connect_after_close_starts_a_fresh_server() {
    let script = require_everything!();
    let pidfile = temp_path("pid");
    let client = McpClient::builder("everything", stdio_config_with_pidfile(&script, &pidfile))
        .timeouts(timeouts())
        .build()
        .unwrap();
    client.connect().await.unwrap();
    assert!(client.is_connected().await);
    // connect() on a live client keeps the same server.
    client.connect().await.unwrap();
    let first = read_pid(&pidfile).await;
    std::fs::remove_file(&pidfile).unwrap();
    let echo = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.remote_name() == "echo")
        .unwrap();

    client.close().await;
    assert!(!client.is_connected().await);
    // The old process is gone.
    eventually("the closed server exited", || async move {
        kill(Pid::from_raw(first), None).is_err()
            || std::fs::read_to_string(format!("/proc/{first}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    })
    .await;
    // A closed client refuses calls instead of silently restarting.
    let refused = collect(echo.call(json!({"message": "x"}), ctx())).await;
    assert_eq!(refused.state, ToolResultState::Error);
    assert!(refused.text().contains("closed"), "{}", refused.text());
    let err = client.list_tools().await.unwrap_err();
    assert!(matches!(err, Error::Closed { .. }), "{err}");

    client.connect().await.unwrap();
    let second = read_pid(&pidfile).await;
    assert_ne!(first, second);
    let again = collect(echo.call(json!({"message": "back"}), ctx())).await;
    assert_eq!(again.text(), "Echo: back");
    assert_eq!(client.restarts(), 0, "a close is not a death");
    client.close().await;
    let _ = std::fs::remove_file(&pidfile);
}

#[tokio::test]
async fn a_server_that_never_answers_initialize_times_out() {
    // `sleep` never reads the request nor writes a response.
    let client = McpClient::builder("mute", McpConfig::stdio("sleep", ["60"]))
        .timeouts(short_startup())
        .restart_policy(RestartPolicy::once())
        .build()
        .unwrap();
    let err = client.connect().await.unwrap_err();
    assert!(
        matches!(&err, Error::StartupTimeout { server, after } if server == "mute" && *after == Duration::from_millis(700)),
        "{err}"
    );
    assert!(err.is_connection_failure());
    assert!(!client.is_connected().await);
    // A lazy start on use fails the same way.
    let err = client.list_tools().await.unwrap_err();
    assert!(matches!(err, Error::StartupTimeout { .. }), "{err}");
}

#[tokio::test]
async fn a_server_that_cannot_start_is_retried_then_reported() {
    let client = McpClient::builder(
        "ghost",
        McpConfig::stdio("/nonexistent/oxiscope-mcp-server", Vec::<String>::new()),
    )
    .restart_policy(RestartPolicy {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(20),
    })
    .build()
    .unwrap();
    // An explicit connect tries once.
    let err = client.connect().await.unwrap_err();
    assert!(
        matches!(&err, Error::Spawn { command, .. } if command.contains("nonexistent")),
        "{err}"
    );
    // A lazy start on use goes through the restart policy.
    let err = client.list_tools().await.unwrap_err();
    let Error::RestartsExhausted { attempts, last, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(*attempts, 3);
    assert!(matches!(**last, Error::Spawn { .. }), "{last}");
}

#[tokio::test]
async fn a_server_that_exits_during_the_handshake_reports_its_stderr() {
    let client = McpClient::builder(
        "broken",
        McpConfig::stdio("sh", ["-c", "echo 'fatal: no config' >&2; exit 3"]),
    )
    .timeouts(timeouts())
    .build()
    .unwrap();
    let err = client.connect().await.unwrap_err();
    let Error::Initialize { reason, .. } = &err else {
        panic!("{err}");
    };
    assert!(reason.contains("fatal: no config"), "{reason}");
}

#[tokio::test]
async fn an_endless_stderr_line_is_cut_not_buffered() {
    // 20 MB on stderr without a newline, then a short last word.
    let client = McpClient::builder(
        "noisy",
        McpConfig::stdio(
            "sh",
            [
                "-c",
                "head -c 20000000 /dev/zero | tr '\\0' a >&2; echo >&2; echo 'last words' >&2; exit 3",
            ],
        ),
    )
    .timeouts(timeouts())
    .build()
    .unwrap();
    let err = client.connect().await.unwrap_err();
    let Error::Initialize { reason, .. } = &err else {
        panic!("{err}");
    };
    assert!(
        reason.contains("last words"),
        "{}",
        &reason[..200.min(reason.len())]
    );
    assert!(reason.len() < 64 * 1024, "{} bytes kept", reason.len());
}

#[tokio::test]
async fn stdio_clients_have_no_headers_and_cannot_be_stateless() {
    let client = McpClient::new("s", McpConfig::stdio("true", Vec::<String>::new()), true).unwrap();
    let err = client.set_runtime_headers([("x-a", "b")]).unwrap_err();
    assert!(matches!(err, Error::NotHttp { .. }), "{err}");
    let err =
        McpClient::new("s", McpConfig::stdio("true", Vec::<String>::new()), false).unwrap_err();
    assert!(matches!(err, Error::StatelessStdio { .. }), "{err}");
}

#[tokio::test]
async fn a_call_that_outlives_the_call_timeout_is_an_error_result_and_the_session_survives() {
    let script = require_everything!();
    let client = McpClient::builder("everything", super::support::stdio_config(&script))
        .timeouts(Timeouts {
            call: Duration::from_millis(800),
            ..timeouts()
        })
        .build()
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    let find = |name: &str| tools.iter().find(|t| t.remote_name() == name).unwrap();
    let slow = find("trigger-long-running-operation");
    let response = collect(slow.call(json!({"duration": 30, "steps": 3}), ctx())).await;
    assert_eq!(response.state, ToolResultState::Error);
    assert!(
        response.text().contains("within 800ms"),
        "{}",
        response.text()
    );
    // A timeout is not a death: the same server answers the next call.
    let echo = collect(find("echo").call(json!({"message": "after"}), ctx())).await;
    assert_eq!(echo.text(), "Echo: after");
    assert_eq!(client.restarts(), 0);
    client.close().await;
}

#[tokio::test]
async fn a_server_killed_during_a_call_gives_an_error_result_then_restarts() {
    let script = require_everything!();
    let pidfile = temp_path("pid");
    let client = McpClient::builder("everything", stdio_config_with_pidfile(&script, &pidfile))
        .timeouts(timeouts())
        .build()
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    let find = |name: &str| {
        tools
            .iter()
            .find(|t| t.remote_name() == name)
            .unwrap()
            .clone()
    };
    let pid = read_pid(&pidfile).await;
    std::fs::remove_file(&pidfile).unwrap();
    let slow = find("trigger-long-running-operation");
    let call = tokio::spawn(async move {
        collect(slow.call(json!({"duration": 60, "steps": 2}), ctx())).await
    });
    // Give the request time to reach the server, then kill it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    let response = call.await.unwrap();
    assert_eq!(response.state, ToolResultState::Error);
    assert!(
        response.text().contains("disconnected"),
        "{}",
        response.text()
    );
    let echo = collect(find("echo").call(json!({"message": "reborn"}), ctx())).await;
    assert_eq!(echo.text(), "Echo: reborn");
    assert_eq!(client.restarts(), 1);
    assert_ne!(read_pid(&pidfile).await, pid);
    client.close().await;
    let _ = std::fs::remove_file(&pidfile);
}

#[tokio::test]
async fn cancelling_a_call_interrupts_it() {
    let script = require_everything!();
    let client = super::support::stdio_client(&script);
    let tools = client.list_tools().await.unwrap();
    let slow = tools
        .iter()
        .find(|t| t.remote_name() == "trigger-long-running-operation")
        .unwrap();
    let context = ctx();
    let cancel = context.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let response = collect(slow.call(json!({"duration": 60, "steps": 2}), context)).await;
    assert_eq!(
        response.state,
        ToolResultState::Interrupted,
        "{}",
        response.text()
    );
    client.close().await;
}
