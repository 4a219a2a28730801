use std::time::Duration;

use oxiscope_http::{Error, HttpClient, RetryPolicy};
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{bounded, quick_client};

/// A client that would wait an hour on its own backoff: if a test with it finishes, the
/// wait came from the server's `Retry-After`.
fn patient_client(max_delay: Duration) -> HttpClient {
    HttpClient::builder()
        .with_retry(
            RetryPolicy::default()
                .with_max_attempts(3)
                .with_base_delay(Duration::from_secs(3600))
                .with_max_delay(max_delay),
        )
        .build()
        .unwrap()
}

#[tokio::test]
async fn rate_limit_with_retry_after_zero_then_success_is_retried_once() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::text(429, "slow down").with_header("retry-after", "0"));
    server.push(ScriptedResponse::json(200, &json!({"ok": true})));
    let http = patient_client(Duration::from_secs(3600));

    let got: Value = bounded(http.send_json(http.post(server.url("/v1/x")).body("{}")))
        .await
        .unwrap();

    assert_eq!(got, json!({"ok": true}));
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn rate_limit_with_retry_after_one_second_waits_for_the_server_not_the_backoff() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::text(429, "slow down").with_header("retry-after", "1"));
    server.push(ScriptedResponse::json(200, &json!({"ok": true})));
    let http = patient_client(Duration::from_secs(3600));

    let got: Value = bounded(http.send_json(http.get(server.url("/"))))
        .await
        .unwrap();

    assert_eq!(got, json!({"ok": true}));
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn retry_after_longer_than_max_delay_is_capped() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(503).with_header("retry-after", "86400"));
    server.push(ScriptedResponse::new(200));
    let http = patient_client(Duration::from_millis(10));

    let response = bounded(http.send(http.get(server.url("/")))).await.unwrap();

    assert_eq!(response.status().as_u16(), 200);
}

#[tokio::test]
async fn server_errors_exhaust_retries_into_a_typed_status_error() {
    let server = FakeServer::start().await.unwrap();
    for _ in 0..3 {
        server.push(
            ScriptedResponse::json(500, &json!({"error": "boom"}))
                .with_header("x-request-id", "req-123"),
        );
    }
    let http = quick_client(3);

    let err = bounded(http.send(http.post(server.url("/v1/x")).body("{}")))
        .await
        .unwrap_err();

    assert_eq!(err.status().map(|s| s.as_u16()), Some(500));
    assert_eq!(err.request_id(), Some("req-123"));
    assert_eq!(err.body(), Some(r#"{"error":"boom"}"#));
    assert!(err.is_retryable());
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn retried_requests_resend_the_same_method_path_and_body() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(502));
    server.push(ScriptedResponse::new(200));
    let http = quick_client(2);

    bounded(http.send(http.post(server.url("/v1/chat")).body(r#"{"a":1}"#)))
        .await
        .unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0], requests[1]);
    assert_eq!(requests[1].path, "/v1/chat");
    assert_eq!(requests[1].body_text(), r#"{"a":1}"#);
}

#[tokio::test]
async fn bad_request_is_not_retried() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        ScriptedResponse::json(400, &json!({"error": {"message": "bad"}}))
            .with_header("request-id", "anthropic-style"),
    );
    server.push(ScriptedResponse::new(200));
    let http = quick_client(4);

    let err = bounded(http.send(http.get(server.url("/"))))
        .await
        .unwrap_err();

    assert_eq!(err.status().map(|s| s.as_u16()), Some(400));
    assert_eq!(err.request_id(), Some("anthropic-style"));
    assert!(!err.is_retryable());
    assert_eq!(server.request_count(), 1);
    assert_eq!(server.pending_responses(), 1);
}

#[tokio::test]
async fn should_retry_header_overrides_the_status() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(503).with_header("x-should-retry", "false"));
    server.push(ScriptedResponse::new(400).with_header("x-should-retry", "true"));
    let http = quick_client(4);

    let first = bounded(http.send(http.get(server.url("/"))))
        .await
        .unwrap_err();
    assert_eq!(first.status().map(|s| s.as_u16()), Some(503));
    assert_eq!(server.request_count(), 1);

    server.push(ScriptedResponse::new(200));
    let second = bounded(http.send(http.get(server.url("/")))).await.unwrap();
    assert_eq!(second.status().as_u16(), 200);
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn status_error_keeps_the_parsed_retry_after() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(429).with_header("retry-after", "17"));
    let http = quick_client(1);

    let err = bounded(http.send(http.get(server.url("/"))))
        .await
        .unwrap_err();

    assert_eq!(err.retry_after(), Some(Duration::from_secs(17)));
    let Error::Status(status) = err else {
        panic!("expected a status error, got {err:?}")
    };
    assert_eq!(status.retry_after, Some(Duration::from_secs(17)));
}

#[tokio::test]
async fn error_body_is_capped() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::text(400, "x".repeat(10_000)));
    let http = HttpClient::builder()
        .with_max_error_body(100)
        .build()
        .unwrap();

    let err = bounded(http.send(http.get(server.url("/"))))
        .await
        .unwrap_err();

    assert_eq!(err.body().map(str::len), Some(100));
}

#[tokio::test]
async fn refused_connection_is_a_retryable_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let http = quick_client(2);

    let err = bounded(http.send(http.get(format!("http://{addr}/"))))
        .await
        .unwrap_err();

    assert!(matches!(err, Error::Connect { .. }), "{err:?}");
    assert!(err.is_retryable());
}

#[tokio::test]
async fn slow_response_headers_time_out() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(200).with_delay(Duration::from_secs(60)));
    let http = HttpClient::builder()
        .with_retry(RetryPolicy::none())
        .with_response_timeout(Duration::from_millis(100))
        .build()
        .unwrap();

    let err = bounded(http.send(http.get(server.url("/"))))
        .await
        .unwrap_err();

    assert!(matches!(err, Error::Timeout { after, .. } if after == Duration::from_millis(100)));
}

#[tokio::test]
async fn invalid_url_is_an_invalid_request_not_retried() {
    let http = quick_client(3);

    let err = bounded(http.send(http.get("ftp://example.invalid/x")))
        .await
        .unwrap_err();

    assert!(matches!(err, Error::InvalidRequest { .. }), "{err:?}");
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn per_call_retry_policy_overrides_the_clients() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(503));
    server.push(ScriptedResponse::new(200));
    let http = quick_client(4).with_retry_policy(RetryPolicy::none());

    let err = bounded(http.send(http.get(server.url("/"))))
        .await
        .unwrap_err();

    assert_eq!(err.status().map(|s| s.as_u16()), Some(503));
    assert_eq!(http.retry_policy().max_attempts, 1);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn tls_to_a_plain_http_server_fails_as_a_connect_error() {
    // Exercises the rustls stack (ring provider, platform verifier) without any network:
    // the handshake meets a plain-HTTP server and fails.
    let server = FakeServer::start().await.unwrap();
    let http = quick_client(1);

    let err = bounded(http.send(http.get(format!("https://{}/", server.addr()))))
        .await
        .unwrap_err();

    assert!(matches!(err, Error::Connect { .. }), "{err:?}");
}
