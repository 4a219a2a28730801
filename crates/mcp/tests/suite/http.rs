//! A real streamable-HTTP server: stateful and stateless clients,
//! reconnecting, header rotation, a server that never answers.

use std::time::Duration;

use oxiscope_mcp::{Error, McpClient, McpConfig, RestartPolicy, Timeouts};
use oxiscope_message::ToolResultState;
use oxiscope_tool::{Tool, ToolCallContext, collect};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    HttpServer, RecordingProxy, http_client, require_everything, silent_http_server, timeouts,
};

fn ctx() -> ToolCallContext {
    ToolCallContext::local(std::env::temp_dir())
}

async fn echo(client: &McpClient, message: &str) -> oxiscope_tool::ToolResponse {
    let tools = client.list_tools().await.unwrap();
    let echo = tools.iter().find(|t| t.remote_name() == "echo").unwrap();
    collect(echo.call(json!({ "message": message }), ctx())).await
}

#[tokio::test]
async fn a_stateful_http_client_lists_and_calls_tools() {
    let script = require_everything!();
    let server = HttpServer::start(&script).await;
    let client = http_client(&server.url(), true);
    client.connect().await.unwrap();
    assert!(client.is_connected().await);
    let tools = client.list_tools().await.unwrap();
    let sum = tools
        .iter()
        .find(|t| t.name() == "mcp__everything__get-sum")
        .unwrap();
    assert!(sum.flags().read_only);
    let response = collect(sum.call(json!({"a": 1.5, "b": 2}), ctx())).await;
    assert_eq!(response.state, ToolResultState::Success);
    assert!(response.text().contains("3.5"), "{}", response.text());
    let image = tools
        .iter()
        .find(|t| t.remote_name() == "get-tiny-image")
        .unwrap();
    let response = collect(image.call(json!({}), ctx())).await;
    assert_eq!(response.content.len(), 3);
    client.close().await;
}

#[tokio::test]
async fn a_stateless_http_client_needs_no_lifecycle() {
    let script = require_everything!();
    let server = HttpServer::start(&script).await;
    let client = http_client(&server.url(), false);
    assert!(!client.is_stateful());
    // No connect(): each request opens and ends its own session.
    assert_eq!(echo(&client, "a").await.text(), "Echo: a");
    assert_eq!(echo(&client, "b").await.text(), "Echo: b");
    assert!(!client.is_connected().await);
    // close() and connect() are harmless no-ops.
    client.close().await;
    client.connect().await.unwrap();
    assert_eq!(echo(&client, "c").await.text(), "Echo: c");
}

#[tokio::test]
async fn http_connect_after_close_opens_a_new_session() {
    let script = require_everything!();
    let server = HttpServer::start(&script).await;
    let proxy = RecordingProxy::start(server.port).await;
    let client = http_client(&proxy.url(), true);
    client.connect().await.unwrap();
    assert_eq!(echo(&client, "one").await.text(), "Echo: one");
    client.close().await;
    let err = client.list_tools().await.unwrap_err();
    assert!(matches!(err, Error::Closed { .. }), "{err}");
    let before = proxy.take();
    client.connect().await.unwrap();
    assert_eq!(echo(&client, "two").await.text(), "Echo: two");
    let after = proxy.take();
    // A second `initialize` went out after the close.
    assert!(before.contains("\"initialize\""), "{before}");
    assert!(after.contains("\"initialize\""), "{after}");
    client.close().await;
}

#[tokio::test]
async fn rotated_headers_reach_the_server_on_later_requests() {
    let script = require_everything!();
    let server = HttpServer::start(&script).await;
    let proxy = RecordingProxy::start(server.port).await;
    let client = McpClient::builder(
        "everything",
        McpConfig::http(proxy.url()).with_header("X-Tenant", "acme"),
    )
    .timeouts(timeouts())
    .build()
    .unwrap();
    client
        .set_runtime_headers([("Authorization", "Bearer first")])
        .unwrap();
    assert_eq!(echo(&client, "1").await.text(), "Echo: 1");
    let sent = proxy.take().to_ascii_lowercase();
    assert!(sent.contains("authorization: bearer first"), "{sent}");
    assert!(sent.contains("x-tenant: acme"), "{sent}");

    client
        .set_runtime_headers([("Authorization", "Bearer second")])
        .unwrap();
    assert_eq!(echo(&client, "2").await.text(), "Echo: 2");
    let sent = proxy.take().to_ascii_lowercase();
    assert!(sent.contains("authorization: bearer second"), "{sent}");
    assert!(!sent.contains("bearer first"), "{sent}");
    assert!(sent.contains("x-tenant: acme"), "{sent}");

    // Hop-by-hop headers are refused and the current ones stay.
    let err = client
        .set_runtime_headers([("Authorization", "Bearer third"), ("Connection", "close")])
        .unwrap_err();
    assert!(
        matches!(&err, Error::ForbiddenHeader { name } if name == "connection"),
        "{err}"
    );
    assert_eq!(echo(&client, "3").await.text(), "Echo: 3");
    let sent = proxy.take().to_ascii_lowercase();
    assert!(sent.contains("authorization: bearer second"), "{sent}");
    assert!(!sent.contains("bearer third"), "{sent}");

    // An empty map leaves only the static headers.
    client
        .set_runtime_headers(Vec::<(String, String)>::new())
        .unwrap();
    assert_eq!(echo(&client, "4").await.text(), "Echo: 4");
    let sent = proxy.take().to_ascii_lowercase();
    assert!(!sent.contains("authorization:"), "{sent}");
    assert!(sent.contains("x-tenant: acme"), "{sent}");
    client.close().await;
}

#[tokio::test]
async fn an_http_server_that_never_answers_times_out() {
    let port = silent_http_server().await;
    let client = McpClient::builder(
        "mute",
        McpConfig::http(format!("http://127.0.0.1:{port}/mcp")),
    )
    .timeouts(Timeouts {
        startup: Duration::from_millis(700),
        ..timeouts()
    })
    .restart_policy(RestartPolicy::once())
    .build()
    .unwrap();
    let err = client.connect().await.unwrap_err();
    assert!(matches!(err, Error::StartupTimeout { .. }), "{err}");
    let stateless = McpClient::builder(
        "mute",
        McpConfig::http(format!("http://127.0.0.1:{port}/mcp")),
    )
    .stateful(false)
    .timeouts(Timeouts {
        startup: Duration::from_millis(700),
        ..timeouts()
    })
    .build()
    .unwrap();
    let err = stateless.list_tools().await.unwrap_err();
    assert!(matches!(err, Error::StartupTimeout { .. }), "{err}");
}

#[tokio::test]
async fn a_dead_http_server_is_a_typed_error() {
    // Bind and drop: nothing listens on the port any more.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let client = http_client(&format!("http://127.0.0.1:{port}/mcp"), true);
    let err = client.connect().await.unwrap_err();
    assert!(
        matches!(err, Error::Initialize { .. } | Error::StartupTimeout { .. }),
        "{err}"
    );
    assert!(err.is_connection_failure());
}

#[tokio::test]
async fn invalid_static_headers_are_rejected_when_building() {
    let err = McpClient::builder(
        "h",
        McpConfig::http("http://127.0.0.1:1/mcp").with_header("Host", "x"),
    )
    .build()
    .unwrap_err();
    assert!(matches!(err, Error::ForbiddenHeader { .. }), "{err}");
}

#[tokio::test]
async fn a_stateful_http_client_reconnects_after_its_server_came_back() {
    let script = require_everything!();
    let server = HttpServer::start(&script).await;
    let port = server.port;
    let client = http_client(&server.url(), true);
    assert_eq!(echo(&client, "before").await.text(), "Echo: before");
    let tools = client.list_tools().await.unwrap();
    let echo_tool = tools.iter().find(|t| t.remote_name() == "echo").unwrap();

    drop(server);
    super::support::eventually("the HTTP server is gone", || async move {
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
    })
    .await;
    let down = collect(echo_tool.call(json!({"message": "down"}), ctx())).await;
    assert_eq!(down.state, ToolResultState::Error, "{}", down.text());

    let _back = HttpServer::start_on(&script, port).await;
    let up = collect(echo_tool.call(json!({"message": "up"}), ctx())).await;
    assert_eq!(up.state, ToolResultState::Success, "{}", up.text());
    assert_eq!(up.text(), "Echo: up");
    assert!(client.restarts() >= 1);
    client.close().await;
}
