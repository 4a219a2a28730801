//! `/health` checks its components for real, and every response carries a
//! request id.

use std::time::Duration;

use oxiscope_server::{AuthMode, WorkspaceMode};
use oxiscope_workspace::SandboxConfig;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::Harness;

#[tokio::test]
async fn a_healthy_server_reports_each_component_ok() {
    let h = Harness::start().await;
    let (code, health) = h.get("/health", "u").await;
    assert_eq!(code, 200, "{health}");
    assert_eq!(health["status"], "ok");
    assert_eq!(
        health["components"],
        json!({"chat": "ok", "message_bus": "ok", "storage": "ok", "workspace": "ok"})
    );
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    // The bus round trip can be repeated (and runs concurrently).
    let (a, b) = tokio::join!(h.get("/health", "u"), h.get("/health", "u"));
    assert_eq!((a.0, b.0), (200, 200));
}

#[tokio::test]
async fn a_sandbox_that_no_longer_runs_makes_the_server_not_ready() {
    let broken = SandboxConfig {
        bwrap: "/nonexistent/bwrap".into(),
        ..SandboxConfig::default()
    };
    let h = Harness::start_full(
        AuthMode::DevHeader,
        Duration::from_secs(30),
        WorkspaceMode::Sandbox(broken),
    )
    .await;
    let (code, health) = h.get("/health", "u").await;
    assert_eq!(code, 503, "{health}");
    assert_eq!(
        health,
        json!({"status": "not_ready", "version": env!("CARGO_PKG_VERSION"), "components":
            {"chat": "ok", "message_bus": "ok", "storage": "ok", "workspace": "not_ready"}})
    );
    // The answer is remembered for a while, and stays the same.
    let (code, again) = h.get("/health", "u").await;
    assert_eq!((code, again), (503, health));
}

#[tokio::test]
async fn a_server_shutting_down_is_not_ready() {
    let h = Harness::start().await;
    h.state.shutdown().await;
    let (code, health) = h.get("/health", "u").await;
    assert_eq!(code, 503, "{health}");
    assert_eq!(health["status"], "not_ready");
    assert_eq!(health["components"]["chat"], "not_ready");
    assert_eq!(health["components"]["storage"], "ok");
}

#[tokio::test]
async fn every_response_carries_a_request_id_and_a_sane_one_is_kept() {
    let h = Harness::start().await;
    let get = |path: &'static str, id: Option<&'static str>| {
        let mut req = h
            .http
            .get(format!("{}{path}", h.base))
            .header("x-user-id", "u");
        if let Some(id) = id {
            req = req.header("x-request-id", id);
        }
        async move {
            let res = req.send().await.unwrap();
            let status = res.status().as_u16();
            let id = res.headers()["x-request-id"].to_str().unwrap().to_owned();
            (status, id)
        }
    };
    let (status, id) = get("/agent/", Some("trace-42.a_b")).await;
    assert_eq!((status, id.as_str()), (200, "trace-42.a_b"));
    // Generated: 32 hex digits, different each time, also on errors.
    let generated = |id: &str| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
    for (path, given, code) in [
        ("/agent/", None, 200),
        ("/agent/", Some("has spaces in it"), 200),
        ("/agent/", Some("semi;colon"), 200),
        ("/nope", None, 404),
        ("/sessions/", None, 422),
    ] {
        let (status, id) = get(path, given).await;
        assert_eq!(status, code, "{path}");
        assert!(generated(&id), "{path} {given:?}: {id}");
    }
    let long: &'static str = Box::leak("a".repeat(65).into_boxed_str());
    let (_, id) = get("/agent/", Some(long)).await;
    assert!(generated(&id), "{id}");
    let (_, first) = get("/agent/", None).await;
    let (_, second) = get("/agent/", None).await;
    assert_ne!(first, second);
}
