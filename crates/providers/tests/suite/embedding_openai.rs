//! `OpenAiEmbeddingModel` against a fake OpenAI server: the request bytes
//! and headers, vectors put in order by `index`, batching, dimensions,
//! usage, retries and errors.

use std::num::NonZeroU32;

use oxiscope_model::{Credential, EmbeddingModel, EmbeddingRequest, ModelError, OpenAiCredential};
use oxiscope_providers::embedding::OpenAiEmbeddingModel;
use oxiscope_test_support::{FakeServer, ScriptedResponse, openai_rate_limited};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::embedding_support::{EchoServer, echo_vector, http, number, texts};

fn model(server: &FakeServer) -> OpenAiEmbeddingModel {
    OpenAiEmbeddingModel::with_client(http(), "sk-test", "text-embedding-3-small")
        .with_base_url(server.url("/v1/"))
}

fn answer(vectors: &[(usize, Vec<f32>)], tokens: u64) -> ScriptedResponse {
    let data: Vec<Value> = vectors
        .iter()
        .map(|(i, v)| json!({"object": "embedding", "index": i, "embedding": v}))
        .collect();
    ScriptedResponse::json(
        200,
        &json!({
            "object": "list",
            "data": data,
            "model": "text-embedding-3-small",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }),
    )
}

#[tokio::test]
async fn the_request_is_openais_shape_and_vectors_follow_their_index() {
    let server = FakeServer::start().await.unwrap();
    server.push(answer(&[(1, vec![0.5, 0.25]), (0, vec![-1.0, 2.0])], 9));
    let credential = Credential::from(
        OpenAiCredential::new("sk-cred")
            .with_organization("org-7")
            .with_base_url(server.url("/v1")),
    );
    let model =
        OpenAiEmbeddingModel::from_credential_on(http(), &credential, "text-embedding-3-small")
            .unwrap()
            .with_dimensions(NonZeroU32::new(2).unwrap());
    let texts = vec!["a \"quoted\" text".to_owned(), "ünïcode".to_owned()];
    let response = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(response.embeddings, vec![vec![-1.0, 2.0], vec![0.5, 0.25]]);
    assert_eq!(response.usage.tokens, Some(9));
    assert_eq!(response.model, "text-embedding-3-small");
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/embeddings")
    );
    assert_eq!(request.header("authorization"), Some("Bearer sk-cred"));
    assert_eq!(request.header("openai-organization"), Some("org-7"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.body_text(),
        r#"{"input":["a \"quoted\" text","ünïcode"],"model":"text-embedding-3-small","encoding_format":"float","dimensions":2}"#
    );
}

#[tokio::test]
async fn without_a_size_none_is_sent_and_a_request_size_wins_over_the_models() {
    let server = FakeServer::start().await.unwrap();
    server.push(answer(&[(0, vec![1.0])], 1));
    server.push(answer(&[(0, vec![1.0])], 1));
    let texts = texts(1);
    model(&server)
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap();
    model(&server)
        .with_dimensions(NonZeroU32::new(512).unwrap())
        .embed(EmbeddingRequest::new(&texts).with_dimensions(NonZeroU32::new(256).unwrap()))
        .await
        .unwrap();
    let bodies: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body_json().unwrap())
        .collect();
    assert_eq!(bodies[0].get("dimensions"), None);
    assert_eq!(bodies[1]["dimensions"], 256);
}

fn openai_echo(body: &Value) -> (u16, Value, std::time::Duration) {
    let data: Vec<Value> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"index": i, "embedding": echo_vector(number(t.as_str().unwrap()))}))
        .collect();
    let n = data.len();
    let delay = if body["input"][0] == "t0" { 100 } else { 0 };
    let reply = json!({"data": data, "model": "m", "usage": {"total_tokens": n}});
    (200, reply, std::time::Duration::from_millis(delay))
}

#[tokio::test]
async fn batches_of_2048_are_sent_concurrently_and_usage_is_summed() {
    let server = EchoServer::start(openai_echo).await;
    let model = OpenAiEmbeddingModel::with_client(http(), "k", "m")
        .with_base_url(format!("{}/v1", server.base_url));
    let texts = texts(4100);
    let response = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    let expected: Vec<Vec<f32>> = (0..4100).map(echo_vector).collect();
    assert_eq!(response.embeddings, expected);
    assert_eq!(response.usage.tokens, Some(4100));
    let sizes: Vec<usize> = server
        .bodies()
        .iter()
        .map(|b| b["input"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes.iter().sum::<usize>(), 4100);
    assert_eq!(sizes.iter().max(), Some(&2048));
    assert_eq!(sizes.len(), 3);
}

#[tokio::test]
async fn a_rate_limit_is_retried_and_an_auth_error_is_typed() {
    let server = FakeServer::start().await.unwrap();
    server.push(openai_rate_limited(0));
    server.push(answer(&[(0, vec![3.0])], 2));
    let texts = texts(1);
    let response = model(&server)
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap();
    assert_eq!(response.embeddings, vec![vec![3.0]]);
    assert_eq!(server.request_count(), 2);

    server.push(ScriptedResponse::json(
        401,
        &json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
    ));
    let err = model(&server)
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap_err();
    let ModelError::Provider {
        status,
        code,
        message,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*status, code.as_deref(), message.as_str()),
        (401, Some("invalid_api_key"), "Incorrect API key provided")
    );
}

#[tokio::test]
async fn persistent_server_errors_end_as_a_retryable_provider_error() {
    let server = FakeServer::start().await.unwrap();
    for _ in 0..4 {
        server.push(ScriptedResponse::text(503, "overloaded"));
    }
    let texts = texts(1);
    let err = model(&server)
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ModelError::Provider { status: 503, .. }),
        "{err:?}"
    );
    assert!(err.is_retryable());
    assert_eq!(server.request_count(), 4, "the policy's four attempts");
}

#[tokio::test]
async fn malformed_answers_are_stream_errors() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::text(200, "<html>gateway</html>"));
    server.push(answer(&[(0, vec![1.0]), (0, vec![2.0])], 1));
    server.push(answer(&[(3, vec![1.0])], 1));
    server.push(answer(&[(0, vec![1.0])], 1));
    server.push(ScriptedResponse::json(
        200,
        &json!({"data": [{"index": 0, "embedding": ["x"]}]}),
    ));
    let model = model(&server);
    let one = texts(1);
    let two = texts(2);
    for texts in [&one, &two, &one, &two, &one] {
        let err = model.embed(EmbeddingRequest::new(texts)).await.unwrap_err();
        assert!(matches!(err, ModelError::Stream { .. }), "{err:?}");
    }
}

#[tokio::test]
async fn an_empty_request_sends_nothing() {
    let server = FakeServer::start().await.unwrap();
    let response = model(&server)
        .embed(EmbeddingRequest::new(&[]))
        .await
        .unwrap();
    assert!(response.embeddings.is_empty());
    assert_eq!(server.request_count(), 0);
}
