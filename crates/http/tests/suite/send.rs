use oxiscope_http::{DecodeError, Error, HttpClient};
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::{bounded, quick_client};

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Reply {
    id: String,
    n: u32,
}

#[tokio::test]
async fn send_json_parses_a_typed_body_and_sends_headers() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(
        200,
        &json!({"id": "x", "n": 2, "extra": true}),
    ));
    let http = quick_client(1);

    let reply: Reply = bounded(
        http.send_json(
            http.post(server.url("/v1/things?mode=fast"))
                .bearer_auth("secret")
                .header("content-type", "application/json")
                .body(r#"{"q":1}"#),
        ),
    )
    .await
    .unwrap();

    assert_eq!(
        reply,
        Reply {
            id: "x".into(),
            n: 2
        }
    );
    let request = &server.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/things");
    assert_eq!(request.query.as_deref(), Some("mode=fast"));
    assert_eq!(request.header("authorization"), Some("Bearer secret"));
    assert_eq!(request.body_json().unwrap(), json!({"q": 1}));
    assert!(
        request
            .header("user-agent")
            .is_some_and(|ua| ua.starts_with("oxiscope/"))
    );
}

#[tokio::test]
async fn send_json_with_the_wrong_shape_is_a_decode_error() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(200, &json!({"id": 5})));
    let http = quick_client(1);

    let err = bounded(http.send_json::<Reply>(http.get(server.url("/"))))
        .await
        .unwrap_err();

    assert!(
        matches!(
            err,
            Error::Decode {
                kind: DecodeError::Json { line: None, .. }
            }
        ),
        "{err:?}"
    );
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn send_json_refuses_a_body_over_the_limit() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(
        200,
        &json!({"big": "x".repeat(1000)}),
    ));
    let http = HttpClient::builder().with_max_body(100).build().unwrap();

    let err = bounded(http.send_json::<serde_json::Value>(http.get(server.url("/"))))
        .await
        .unwrap_err();

    assert!(matches!(err, Error::BodyTooLarge { limit: 100 }), "{err:?}");
}
