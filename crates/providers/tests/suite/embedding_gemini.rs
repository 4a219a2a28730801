//! `GeminiEmbeddingModel` against a fake Gemini API: the
//! `batchEmbedContents` request, batches of 100, errors.

use std::num::NonZeroU32;
use std::time::Duration;

use oxiscope_model::{Credential, EmbeddingModel, EmbeddingRequest, GeminiCredential, ModelError};
use oxiscope_providers::embedding::GeminiEmbeddingModel;
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::embedding_support::{EchoServer, echo_vector, http, number, texts};

fn model(base: &str) -> GeminiEmbeddingModel {
    let credential = Credential::from(GeminiCredential::new("g-key"));
    GeminiEmbeddingModel::from_credential_on(http(), &credential, "models/gemini-embedding-001")
        .unwrap()
        .with_base_url(format!("{base}/v1beta"))
}

#[tokio::test]
async fn the_request_is_a_batch_embed_contents_call() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(
        200,
        &json!({"embeddings": [{"values": [0.1, 0.2]}, {"values": [0.3, 0.4]}]}),
    ));
    let texts = vec!["first".to_owned(), "línea\nsegunda".to_owned()];
    let response = model(&server.base_url())
        .with_task_type("RETRIEVAL_DOCUMENT")
        .with_dimensions(NonZeroU32::new(768).unwrap())
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap();
    assert_eq!(response.embeddings, vec![vec![0.1, 0.2], vec![0.3, 0.4]]);
    assert_eq!(response.usage.tokens, None, "Gemini reports no usage");
    assert_eq!(response.model, "gemini-embedding-001");
    let request = &server.requests()[0];
    assert_eq!(
        request.path,
        "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    );
    assert_eq!(request.header("x-goog-api-key"), Some("g-key"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(
        request.body_text(),
        concat!(
            r#"{"requests":["#,
            r#"{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"first"}]},"taskType":"RETRIEVAL_DOCUMENT","outputDimensionality":768},"#,
            r#"{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"línea\nsegunda"}]},"taskType":"RETRIEVAL_DOCUMENT","outputDimensionality":768}"#,
            r#"]}"#
        )
    );
}

fn gemini_echo(body: &Value) -> (u16, Value, Duration) {
    let requests = body["requests"].as_array().unwrap();
    let embeddings: Vec<Value> = requests
        .iter()
        .map(|r| {
            let text = r["content"]["parts"][0]["text"].as_str().unwrap();
            json!({"values": echo_vector(number(text))})
        })
        .collect();
    let first = requests[0]["content"]["parts"][0]["text"].as_str().unwrap();
    let delay = Duration::from_millis(if first == "t0" { 120 } else { 0 });
    (200, json!({"embeddings": embeddings}), delay)
}

#[tokio::test]
async fn batches_of_100_come_back_in_input_order() {
    let server = EchoServer::start(gemini_echo).await;
    let texts = texts(250);
    let response = model(&server.base_url)
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap();
    let expected: Vec<Vec<f32>> = (0..250).map(echo_vector).collect();
    assert_eq!(response.embeddings, expected);
    let mut sizes: Vec<usize> = server
        .bodies()
        .iter()
        .map(|b| b["requests"].as_array().unwrap().len())
        .collect();
    sizes.sort_unstable();
    assert_eq!(sizes, vec![50, 100, 100]);
}

#[tokio::test]
async fn google_errors_are_typed_and_quota_errors_retried() {
    let server = FakeServer::start().await.unwrap();
    let quota = json!({"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}});
    server.push(ScriptedResponse::json(429, &quota));
    server.push(ScriptedResponse::json(
        200,
        &json!({"embeddings": [{"values": [1.0]}]}),
    ));
    let bad_key = json!({"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}});
    server.push(ScriptedResponse::json(400, &bad_key));
    let model = model(&server.base_url());
    let texts = texts(1);
    let response = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(response.embeddings, vec![vec![1.0]]);
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
            "gemini",
            400,
            Some("INVALID_ARGUMENT"),
            "API key not valid."
        )
    );
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn short_or_malformed_answers_are_stream_errors() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(
        200,
        &json!({"embeddings": [{"values": [1.0]}]}),
    ));
    server.push(ScriptedResponse::json(
        200,
        &json!({"embedding": {"values": [1.0]}}),
    ));
    let model = model(&server.base_url());
    let two = texts(2);
    let one = texts(1);
    for texts in [&two, &one] {
        let err = model.embed(EmbeddingRequest::new(texts)).await.unwrap_err();
        assert!(matches!(err, ModelError::Stream { .. }), "{err:?}");
    }
}

#[tokio::test]
async fn a_model_name_that_would_change_the_url_is_refused_before_sending() {
    let server = FakeServer::start().await.unwrap();
    let credential = Credential::from(GeminiCredential::new("g-key"));
    let texts = texts(1);
    for name in ["../../admin", "a/b", "x?key=1", ""] {
        let model = GeminiEmbeddingModel::from_credential_on(http(), &credential, name)
            .unwrap()
            .with_base_url(server.url("/v1beta"));
        let err = model
            .embed(EmbeddingRequest::new(&texts))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ModelError::InvalidRequest { .. }),
            "{name}: {err:?}"
        );
    }
    assert_eq!(server.request_count(), 0);
}
