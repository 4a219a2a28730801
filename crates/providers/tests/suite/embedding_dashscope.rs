//! `DashScopeEmbeddingModel` against fake DashScope servers: the native
//! text and multimodal request shapes, batches of 10 answered out of
//! order, usage, dimensions, the credential's endpoint and errors.

use std::num::NonZeroU32;
use std::time::Duration;

use oxiscope_model::{
    Credential, DashScopeCredential, EmbeddingModel, EmbeddingRequest, EmbeddingSource, ModelError,
};
use oxiscope_providers::embedding::DashScopeEmbeddingModel;
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::embedding_support::{EchoServer, echo_vector, http, number, texts};

const TEXT_PATH: &str = "/api/v1/services/embeddings/text-embedding/text-embedding";
const MULTIMODAL_PATH: &str =
    "/api/v1/services/embeddings/multimodal-embedding/multimodal-embedding";

fn model(base: &str, name: &str) -> DashScopeEmbeddingModel {
    DashScopeEmbeddingModel::with_client(http(), "sk-ds", name)
        .with_base_url(format!("{base}/api/v1"))
}

/// Answers a text-embedding request with the echo vectors, listed in
/// reverse (the model orders them by `text_index`); the chunk starting at
/// `t0` answers last, the one at `t10` second, the others first.
fn reversed_and_delayed(body: &Value) -> (u16, Value, Duration) {
    let texts: Vec<&str> = body["input"]["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let embeddings: Vec<Value> = texts
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| json!({"text_index": i, "embedding": echo_vector(number(t))}))
        .collect();
    let delay = match number(texts[0]) {
        0 => Duration::from_millis(300),
        10 => Duration::from_millis(200),
        _ => Duration::from_millis(100),
    };
    let reply = json!({
        "output": {"embeddings": embeddings},
        "usage": {"total_tokens": texts.len() * 2},
        "request_id": "req-1",
    });
    (200, reply, delay)
}

#[tokio::test]
async fn twenty_five_texts_go_in_three_concurrent_requests_and_come_back_in_order() {
    let server = EchoServer::start(reversed_and_delayed).await;
    let texts = texts(25);
    let answer = model(&server.base_url, "text-embedding-v4")
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap();
    let expected: Vec<Vec<f32>> = (0..25).map(echo_vector).collect();
    assert_eq!(answer.embeddings, expected);
    assert_eq!(answer.usage.tokens, Some(50));
    assert_eq!(answer.source, EmbeddingSource::Api);
    assert_eq!(answer.model, "text-embedding-v4");
    let mut sizes: Vec<usize> = server
        .bodies()
        .iter()
        .map(|b| b["input"]["texts"].as_array().unwrap().len())
        .collect();
    sizes.sort_unstable();
    assert_eq!(sizes, vec![5, 10, 10]);
    assert_eq!(server.peak(), 3, "the three chunks were in flight together");
}

#[tokio::test]
async fn concurrency_is_bounded() {
    let server = EchoServer::start(reversed_and_delayed).await;
    let texts = texts(95);
    let answer = model(&server.base_url, "text-embedding-v3")
        .with_concurrency(2)
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap();
    assert_eq!(answer.embeddings.len(), 95);
    assert_eq!(answer.embeddings[94], echo_vector(94));
    assert_eq!(server.bodies().len(), 10);
    assert_eq!(server.peak(), 2);
}

#[tokio::test]
async fn the_text_request_is_dashscopes_native_shape() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(
        200,
        &json!({
            "output": {"embeddings": [
                {"text_index": 1, "embedding": [0.3, 0.4]},
                {"text_index": 0, "embedding": [0.1, 0.2]},
            ]},
            "usage": {"total_tokens": 7},
            "request_id": "b1",
        }),
    ));
    let texts = vec!["风急天高".to_owned(), "hello".to_owned()];
    let answer = model(&server.base_url(), "text-embedding-v4")
        .with_text_type("document")
        .embed(EmbeddingRequest::new(&texts).with_dimensions(NonZeroU32::new(64).unwrap()))
        .await
        .unwrap();
    assert_eq!(answer.embeddings, vec![vec![0.1, 0.2], vec![0.3, 0.4]]);
    assert_eq!(answer.usage.tokens, Some(7));
    let request = &server.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, TEXT_PATH);
    assert_eq!(request.header("authorization"), Some("Bearer sk-ds"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.body_text(),
        r#"{"model":"text-embedding-v4","input":{"texts":["风急天高","hello"]},"parameters":{"dimension":64,"text_type":"document"}}"#
    );
}

#[tokio::test]
async fn multimodal_models_send_text_contents_in_batches_of_twenty() {
    let server = FakeServer::start().await.unwrap();
    let answer_for = |n: usize, offset: usize| {
        let embeddings: Vec<Value> = (0..n)
            .map(|i| json!({"index": i, "embedding": [(offset + i) as f32], "type": "text"}))
            .collect();
        ScriptedResponse::json(
            200,
            &json!({"output": {"embeddings": embeddings}, "usage": {"input_tokens": n, "image_tokens": 0}}),
        )
    };
    server.push(answer_for(20, 0));
    server.push(answer_for(1, 20));
    let model = model(&server.base_url(), "qwen3-vl-embedding").with_concurrency(1);
    assert!(model.is_multimodal());
    let texts = texts(21);
    let answer = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    let expected: Vec<Vec<f32>> = (0..21).map(|i| vec![i as f32]).collect();
    assert_eq!(answer.embeddings, expected);
    assert_eq!(answer.usage.tokens, Some(21));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].path, MULTIMODAL_PATH);
    assert_eq!(
        requests[1].body_text(),
        r#"{"model":"qwen3-vl-embedding","input":{"contents":[{"text":"t20"}]}}"#
    );
}

#[tokio::test]
async fn the_credentials_compatible_endpoint_is_mapped_to_the_native_api() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(
        200,
        &json!({"output": {"embeddings": [{"text_index": 0, "embedding": [1.0]}]}, "usage": {"total_tokens": 1}}),
    ));
    let credential = Credential::from(
        DashScopeCredential::new("sk-cred").with_base_url(server.url("/compatible-mode/v1")),
    );
    let model =
        DashScopeEmbeddingModel::from_credential_on(http(), &credential, "text-embedding-v3")
            .unwrap();
    let texts = texts(1);
    model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    let request = &server.requests()[0];
    assert_eq!(request.path, TEXT_PATH);
    assert_eq!(request.header("authorization"), Some("Bearer sk-cred"));
    assert_eq!(
        request.body_text(),
        r#"{"model":"text-embedding-v3","input":{"texts":["t0"]}}"#
    );
}

#[tokio::test]
async fn an_error_status_is_a_typed_provider_error_and_5xx_is_retried() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(
        500,
        &json!({"code": "InternalError", "message": "busy"}),
    ));
    server.push(ScriptedResponse::json(
        200,
        &json!({"output": {"embeddings": [{"text_index": 0, "embedding": [2.0]}]}, "usage": {"total_tokens": 1}}),
    ));
    server.push(ScriptedResponse::json(
        401,
        &json!({"code": "InvalidApiKey", "message": "Invalid API-key provided.", "request_id": "r9"}),
    ));
    let model = model(&server.base_url(), "text-embedding-v4");
    let texts = texts(1);
    let answer = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(answer.embeddings, vec![vec![2.0]]);
    assert_eq!(server.request_count(), 2);
    let err = model
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap_err();
    let ModelError::Provider {
        provider,
        status,
        code,
        message,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (
            provider.as_str(),
            *status,
            code.as_deref(),
            message.as_str()
        ),
        (
            "dashscope",
            401,
            Some("InvalidApiKey"),
            "Invalid API-key provided."
        )
    );
    assert!(!err.is_retryable());
    assert_eq!(server.request_count(), 3, "a 401 is not retried");
}

#[tokio::test]
async fn answers_that_do_not_fit_are_stream_errors() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::text(
        200,
        "{\"output\": {\"embeddings\": [{\"text_i",
    ));
    server.push(ScriptedResponse::json(
        200,
        &json!({"output": {"embeddings": [{"text_index": 5, "embedding": [1.0]}]}}),
    ));
    server.push(ScriptedResponse::json(
        200,
        &json!({"output": {"embeddings": [{"text_index": 0, "embedding": [1.0]}]}}),
    ));
    server.push(ScriptedResponse::json(
        200,
        &json!({"output": {"embeddings": "nope"}}),
    ));
    let model = model(&server.base_url(), "text-embedding-v4");
    let one = texts(1);
    let two = texts(2);
    for texts in [&one, &one, &two, &one] {
        let err = model.embed(EmbeddingRequest::new(texts)).await.unwrap_err();
        assert!(matches!(err, ModelError::Stream { .. }), "{err:?}");
    }
}
