//! `OllamaEmbeddingModel` against a fake Ollama server, and the embedding
//! factory: `/api/embed`, usage, errors, endpoint policy.

use std::num::NonZeroU32;

use oxiscope_model::{
    AnthropicCredential, Credential, EmbeddingModel, EmbeddingRequest, ModelError,
    OllamaCredential, OpenAiCredential,
};
use oxiscope_providers::embedding::OllamaEmbeddingModel;
use oxiscope_providers::{EmbeddingModelConfig, Endpoints, embedding_model, embedding_model_with};
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::embedding_support::{http, texts};

fn ollama_answer(vectors: &[Vec<f32>], tokens: u64) -> ScriptedResponse {
    ScriptedResponse::json(
        200,
        &json!({
            "model": "nomic-embed-text",
            "embeddings": vectors,
            "total_duration": 14143917,
            "load_duration": 1019500,
            "prompt_eval_count": tokens,
        }),
    )
}

#[tokio::test]
async fn the_request_is_ollamas_embed_shape() {
    let server = FakeServer::start().await.unwrap();
    server.push(ollama_answer(&[vec![0.5, 0.5], vec![0.25, 0.75]], 12));
    let credential = Credential::from(OllamaCredential::new().with_host(server.base_url() + "/"));
    let model = OllamaEmbeddingModel::from_credential_on(http(), &credential, "nomic-embed-text")
        .unwrap()
        .with_dimensions(NonZeroU32::new(2).unwrap());
    let texts = vec![
        "why is the sky blue?".to_owned(),
        "why is grass green?".to_owned(),
    ];
    let response = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(response.embeddings, vec![vec![0.5, 0.5], vec![0.25, 0.75]]);
    assert_eq!(response.usage.tokens, Some(12));
    assert_eq!(response.model, "nomic-embed-text");
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/api/embed")
    );
    assert_eq!(request.header("authorization"), None);
    assert_eq!(
        request.body_text(),
        r#"{"model":"nomic-embed-text","input":["why is the sky blue?","why is grass green?"],"dimensions":2}"#
    );
}

#[tokio::test]
async fn batches_of_512_have_their_usage_summed() {
    let server = FakeServer::start().await.unwrap();
    server.push(ollama_answer(&vec![vec![1.0]; 512], 600));
    server.push(ollama_answer(&vec![vec![2.0]; 88], 100));
    let model = OllamaEmbeddingModel::with_client(http(), "all-minilm")
        .with_host(server.base_url())
        .with_concurrency(1);
    let texts = texts(600);
    let response = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(response.embeddings.len(), 600);
    assert_eq!(response.embeddings[511], vec![1.0]);
    assert_eq!(response.embeddings[512], vec![2.0]);
    assert_eq!(response.usage.tokens, Some(700));
    let sizes: Vec<usize> = server
        .requests()
        .iter()
        .map(|r| r.body_json().unwrap()["input"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, vec![512, 88]);
}

#[tokio::test]
async fn ollama_errors_keep_their_message() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(
        404,
        &json!({"error": "model \"nomic-embed-text\" not found, try pulling it first"}),
    ));
    server.push(ScriptedResponse::text(200, "{\"embeddings\": [[1.0, "));
    let model =
        OllamaEmbeddingModel::with_client(http(), "nomic-embed-text").with_host(server.base_url());
    let texts = texts(1);
    let err = model
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap_err();
    let ModelError::Provider {
        status, message, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*status, 404);
    assert!(message.contains("try pulling it first"), "{message}");
    let err = model
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Stream { .. }), "{err:?}");
}

#[tokio::test]
async fn a_connection_failure_is_a_connection_error() {
    let server = FakeServer::start().await.unwrap();
    let base = server.base_url();
    drop(server);
    let model = OllamaEmbeddingModel::with_client(http_without_retries(), "nomic-embed-text")
        .with_host(base);
    let texts = texts(1);
    let err = model
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Connection { .. }), "{err:?}");
}

fn http_without_retries() -> oxiscope_http::HttpClient {
    oxiscope_http::HttpClient::builder()
        .with_retry(oxiscope_http::RetryPolicy::none())
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_factory_builds_each_family_and_honours_public_only_endpoints() {
    let server = FakeServer::start().await.unwrap();
    server.push(ollama_answer(&[vec![1.0]], 1));
    let credential = Credential::from(OllamaCredential::new().with_host(server.base_url()));
    let config = EmbeddingModelConfig::new("nomic-embed-text");
    let texts = texts(1);

    // A tenant's credential naming a loopback endpoint: refused, nothing sent.
    let guarded = embedding_model_with(&credential, &config, Endpoints::PublicOnly).unwrap();
    let err = guarded
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap_err();
    let ModelError::InvalidRequest { message } = &err else {
        panic!("{err:?}")
    };
    assert!(message.contains("public addresses"), "{message}");
    assert_eq!(server.request_count(), 0);

    let open = embedding_model(&credential, &config).unwrap();
    let response = open.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(response.embeddings, vec![vec![1.0]]);

    let openai = Credential::from(OpenAiCredential::new("k").with_base_url(server.url("/v1")));
    let guarded = embedding_model_with(
        &openai,
        &EmbeddingModelConfig::new("text-embedding-3-large"),
        Endpoints::PublicOnly,
    )
    .unwrap();
    assert_eq!(guarded.dimensions(), NonZeroU32::new(3072));
    let err = guarded
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::InvalidRequest { .. }), "{err:?}");
    assert_eq!(server.request_count(), 1);

    let anthropic = Credential::from(AnthropicCredential::new("k"));
    assert!(embedding_model(&anthropic, &config).is_err());
}
