//! First-use download against a local fake file server: complete,
//! cut, broken, and already present.

use std::sync::{Arc, Mutex};

use oxiscope_local_embedding::{DefaultEmbeddingModel, Error, ModelLocator, ProgressFn};
use oxiscope_model::{EmbeddingModel, EmbeddingRequest};
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};

use super::support::tiny_model;

/// Scripts the tiny model's files (in chunks) under `/repo/`, and 404s for
/// the optional ones.
fn serve_model(server: &FakeServer) {
    for (name, bytes) in tiny_model("") {
        let response = if name == "model.safetensors" {
            ScriptedResponse::new(200).with_body_in_chunks(bytes, 100)
        } else {
            ScriptedResponse::new(200).with_body(bytes)
        };
        server.push_for(format!("/repo/{name}"), response);
    }
    serve_optional_404(server);
}

fn serve_optional_404(server: &FakeServer) {
    for name in ["sentence_bert_config.json", "tokenizer.json"] {
        server.push_for(
            format!("/repo/{name}"),
            ScriptedResponse::text(404, "not found"),
        );
    }
}

type Seen = Arc<Mutex<Vec<(String, u64, Option<u64>)>>>;

fn recorder() -> (ProgressFn, Seen) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let progress: ProgressFn = Arc::new(move |file: &str, done, total| {
        sink.lock().unwrap().push((file.to_owned(), done, total));
    });
    (progress, seen)
}

fn leftovers(dir: &std::path::Path) -> Vec<String> {
    match std::fs::read_dir(dir.join("models")) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_use_downloads_into_the_data_dir_and_later_uses_do_not() {
    let server = FakeServer::start().await.unwrap();
    serve_model(&server);
    let data = tempfile::tempdir().unwrap();
    let (progress, seen) = recorder();
    let locator = ModelLocator::new()
        .with_model_dir(None::<&str>)
        .with_data_dir(data.path())
        .with_base_url(server.url("/repo"))
        .with_progress(progress);
    let model = DefaultEmbeddingModel::new(locator.clone());
    let texts = vec!["hello world".to_owned()];
    let answer = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(answer.embeddings[0].len(), 8);
    let dir = data.path().join("models/all-MiniLM-L6-v2");
    assert!(dir.join("model.safetensors").is_file());
    assert_eq!(leftovers(data.path()), vec!["all-MiniLM-L6-v2".to_owned()]);
    let weights_size = std::fs::metadata(dir.join("model.safetensors"))
        .unwrap()
        .len();
    let seen = seen.lock().unwrap().clone();
    // Chunked: no length announced, so progress counts bytes only.
    assert!(seen.contains(&("model.safetensors".to_owned(), weights_size, None)));
    assert_eq!(
        seen.iter().rfind(|(f, ..)| f == "model.safetensors"),
        Some(&(
            "model.safetensors".to_owned(),
            weights_size,
            Some(weights_size)
        )),
        "the last report closes the line"
    );
    let config_size = std::fs::metadata(dir.join("config.json")).unwrap().len();
    assert!(seen.contains(&("config.json".to_owned(), config_size, Some(config_size))));
    assert!(
        seen.iter()
            .filter(|(f, ..)| f == "model.safetensors")
            .count()
            > 2,
        "{seen:?}"
    );
    let requests = server.request_count();
    assert_eq!(requests, 5);
    // Already there: nothing is fetched again.
    model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(locator.resolve().await.unwrap(), dir);
    assert_eq!(server.request_count(), requests);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_download_leaves_no_model_behind_and_the_next_try_succeeds() {
    let server = FakeServer::start().await.unwrap();
    let files = tiny_model("");
    for (name, bytes) in &files {
        let response = if *name == "model.safetensors" {
            let half = bytes[..bytes.len() / 2].to_vec();
            ScriptedResponse::new(200)
                .with_body_in_chunks(half, 64)
                .with_end(BodyEnd::Abort)
        } else {
            ScriptedResponse::new(200).with_body(bytes.clone())
        };
        server.push_for(format!("/repo/{name}"), response);
    }
    let data = tempfile::tempdir().unwrap();
    let (progress, _) = recorder();
    let locator = ModelLocator::new()
        .with_model_dir(Some(data.path().join("models/all-MiniLM-L6-v2")))
        .with_base_url(server.url("/repo/"))
        .with_progress(progress);
    let err = locator.resolve().await.unwrap_err();
    assert!(
        matches!(err, Error::Download { ref url, .. } if url.ends_with("/repo/model.safetensors")),
        "{err}"
    );
    assert_eq!(leftovers(data.path()), Vec::<String>::new());
    serve_model(&server);
    let model = locator.load().await.unwrap();
    assert_eq!(model.vector_size(), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_that_arrive_whole_but_broken_are_refused_and_removed() {
    let server = FakeServer::start().await.unwrap();
    for (name, bytes) in tiny_model("") {
        let body = if name == "model.safetensors" {
            b"not weights".to_vec()
        } else {
            bytes
        };
        server.push_for(
            format!("/repo/{name}"),
            ScriptedResponse::new(200).with_body(body),
        );
    }
    serve_optional_404(&server);
    let data = tempfile::tempdir().unwrap();
    let (progress, _) = recorder();
    let locator = ModelLocator::new()
        .with_model_dir(None::<&str>)
        .with_data_dir(data.path())
        .with_base_url(server.url("/repo"))
        .with_progress(progress);
    let err = locator.resolve().await.unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    assert_eq!(leftovers(data.path()), Vec::<String>::new());
}

#[tokio::test]
async fn an_error_status_or_no_download_allowed_is_a_clear_error() {
    let server = FakeServer::start().await.unwrap();
    server.push_for(
        "/repo/config.json",
        ScriptedResponse::text(404, "no such repo"),
    );
    let data = tempfile::tempdir().unwrap();
    let (progress, _) = recorder();
    let locator = ModelLocator::new()
        .with_model_dir(None::<&str>)
        .with_data_dir(data.path())
        .with_base_url(server.url("/repo"))
        .with_progress(progress);
    let err = locator.resolve().await.unwrap_err();
    assert!(err.to_string().contains("404"), "{err}");
    assert_eq!(leftovers(data.path()), Vec::<String>::new());
    let err = locator.with_download(false).resolve().await.unwrap_err();
    assert!(matches!(err, Error::MissingFile { .. }), "{err}");
    let model_err: oxiscope_model::ModelError = err.into();
    assert!(!model_err.is_retryable());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_first_use_is_not_remembered() {
    let server = FakeServer::start().await.unwrap();
    server.push_for("/repo/config.json", ScriptedResponse::text(404, "not yet"));
    let data = tempfile::tempdir().unwrap();
    let (progress, _) = recorder();
    let model = DefaultEmbeddingModel::new(
        ModelLocator::new()
            .with_model_dir(None::<&str>)
            .with_data_dir(data.path())
            .with_base_url(server.url("/repo"))
            .with_progress(progress),
    );
    let texts = vec!["hello".to_owned()];
    let err = model
        .embed(EmbeddingRequest::new(&texts))
        .await
        .unwrap_err();
    assert!(
        err.is_retryable(),
        "a failed download may be retried: {err}"
    );
    serve_model(&server);
    let answer = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(answer.embeddings.len(), 1);
    assert_eq!(model.get().await.unwrap().vector_size(), 8);
}
