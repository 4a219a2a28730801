//! Every wire, fed every cut of a valid answer and answers of the wrong
//! shape: each is a typed error, never a panic or a wrong-length result.

use oxiscope_model::{DynEmbeddingModel, EmbeddingRequest, ModelError};
use oxiscope_providers::embedding::{
    DashScopeEmbeddingModel, GeminiEmbeddingModel, OllamaEmbeddingModel, OpenAiEmbeddingModel,
};
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use serde_json::{Value, json};

use super::embedding_support::{http, texts};

/// A valid two-vector answer of each wire, and a model pointed at `server`.
fn wires(server: &FakeServer) -> Vec<(Value, Box<dyn DynEmbeddingModel>)> {
    let base = server.base_url();
    vec![
        (
            json!({"data": [{"index": 0, "embedding": [0.1, -2.5e-3]}, {"index": 1, "embedding": [1e3, 0]}], "model": "m", "usage": {"total_tokens": 4}}),
            Box::new(
                OpenAiEmbeddingModel::with_client(http(), "k", "m")
                    .with_base_url(format!("{base}/v1")),
            ),
        ),
        (
            json!({"embeddings": [{"values": [0.1, 0.2]}, {"values": [0.3, 0.4]}]}),
            Box::new(GeminiEmbeddingModel::with_client(http(), "k", "m").with_base_url(&base)),
        ),
        (
            json!({"output": {"embeddings": [{"text_index": 0, "embedding": [0.1]}, {"text_index": 1, "embedding": [0.2]}]}, "usage": {"total_tokens": 2}}),
            Box::new(
                DashScopeEmbeddingModel::with_client(http(), "k", "text-embedding-v4")
                    .with_base_url(&base),
            ),
        ),
        (
            json!({"model": "m", "embeddings": [[0.1, 0.2], [0.3, 0.4]], "prompt_eval_count": 3}),
            Box::new(OllamaEmbeddingModel::with_client(http(), "m").with_host(&base)),
        ),
    ]
}

#[tokio::test]
async fn every_cut_and_wrong_shape_of_an_answer_is_a_typed_error() {
    let server = FakeServer::start().await.unwrap();
    let texts = texts(2);
    for (valid, model) in wires(&server) {
        let full = valid.to_string();
        let mut bodies: Vec<String> = (0..full.len())
            .filter(|cut| full.is_char_boundary(*cut))
            .map(|cut| full[..cut].to_owned())
            .collect();
        bodies.extend(
            [
                json!(null),
                json!([]),
                json!({}),
                json!({"data": null, "embeddings": {}, "output": []}),
                json!({"data": [{"embedding": "x"}], "embeddings": [[null]], "output": {"embeddings": [{"embedding": {}}]}}),
            ]
            .iter()
            .map(Value::to_string),
        );
        for body in &bodies {
            server.push(ScriptedResponse::text(200, body.clone()));
            match model.embed_boxed(EmbeddingRequest::new(&texts)).await {
                Err(ModelError::Stream { .. }) => {}
                other => panic!("{body:?} gave {other:?}"),
            }
        }
        server.push(ScriptedResponse::json(200, &valid));
        let answer = model
            .embed_boxed(EmbeddingRequest::new(&texts))
            .await
            .unwrap();
        assert_eq!(answer.embeddings.len(), 2);
    }
}
