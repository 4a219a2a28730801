//! Tests of the fake server itself, with a bare reqwest client.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;

async fn bounded<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), future)
        .await
        .expect("test hung")
}

fn client() -> reqwest::Client {
    // The workspace's reqwest carries no crypto provider of its own.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}

#[tokio::test]
async fn responses_are_served_in_order_and_requests_recorded() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::text(201, "first").with_header("x-tag", "a"));
    server.push(ScriptedResponse::json(200, &serde_json::json!({"n": 2})));
    let http = client();

    let first = bounded(http.post(server.url("/one?k=v")).body("hello").send())
        .await
        .unwrap();
    assert_eq!(first.status().as_u16(), 201);
    assert_eq!(first.headers()["x-tag"], "a");
    assert_eq!(bounded(first.text()).await.unwrap(), "first");
    let second = bounded(http.get(server.url("/two")).send()).await.unwrap();
    assert_eq!(second.headers()["content-type"], "application/json");
    assert_eq!(bounded(second.text()).await.unwrap(), r#"{"n":2}"#);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("POST", "/one")
    );
    assert_eq!(requests[0].query.as_deref(), Some("k=v"));
    assert_eq!(requests[0].body_text(), "hello");
    assert_eq!(requests[1].method, "GET");
    assert_eq!(server.pending_responses(), 0);
}

#[tokio::test]
async fn path_scripts_take_precedence_over_the_general_queue() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::text(200, "general"));
    server.push_for("/models", ScriptedResponse::text(200, "models"));
    let http = client();

    let models = bounded(http.get(server.url("/models")).send())
        .await
        .unwrap();
    let other = bounded(http.get(server.url("/chat")).send()).await.unwrap();

    assert_eq!(bounded(models.text()).await.unwrap(), "models");
    assert_eq!(bounded(other.text()).await.unwrap(), "general");
}

#[tokio::test]
async fn unscripted_request_gets_501() {
    let server = FakeServer::start().await.unwrap();

    let response = bounded(client().get(server.url("/nothing")).send())
        .await
        .unwrap();

    assert_eq!(response.status().as_u16(), 501);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn chunked_body_arrives_in_full() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        ScriptedResponse::sse(["data: a\n\n", "data: b\n\n"])
            .with_chunk_after(Duration::from_millis(10), "data: c\n\n"),
    );

    let response = bounded(client().get(server.url("/")).send()).await.unwrap();

    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(
        bounded(response.text()).await.unwrap(),
        "data: a\n\ndata: b\n\ndata: c\n\n"
    );
}

#[tokio::test]
async fn aborted_body_is_an_error_for_the_client() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        ScriptedResponse::new(200)
            .with_chunks(["partial"])
            .with_end(BodyEnd::Abort),
    );

    let response = bounded(client().get(server.url("/")).send()).await.unwrap();

    assert!(bounded(response.bytes()).await.is_err());
}

#[tokio::test]
async fn wait_for_requests_returns_once_they_arrived() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(204));
    let url = server.url("/");
    let sender = tokio::spawn(async move { client().get(url).send().await.map(|r| r.status()) });

    bounded(server.wait_for_requests(1)).await;

    assert_eq!(server.request_count(), 1);
    assert_eq!(bounded(sender).await.unwrap().unwrap().as_u16(), 204);
}

#[tokio::test]
async fn body_in_chunks_is_reassembled_by_the_client() {
    let server = FakeServer::start().await.unwrap();
    let body = "data: h\u{e9}llo\n\n".repeat(3);
    server.push(ScriptedResponse::new(200).with_body_in_chunks(body.clone(), 3));
    server.push(ScriptedResponse::new(200).with_body_in_chunks("", 0));

    let first = bounded(client().get(server.url("/")).send()).await.unwrap();
    let second = bounded(client().get(server.url("/")).send()).await.unwrap();

    assert_eq!(bounded(first.text()).await.unwrap(), body);
    assert_eq!(bounded(second.text()).await.unwrap(), "");
}
