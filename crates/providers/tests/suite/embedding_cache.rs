//! `CachedEmbeddingModel` and `FileEmbeddingCache` over a fake OpenAI
//! server: hits, misses, order, limits, eviction, damaged files and
//! concurrent writers.

use std::num::NonZeroU32;
use std::time::{Duration, SystemTime};

use oxiscope_model::{
    CachedEmbeddingModel, EmbeddingModel, EmbeddingRequest, EmbeddingSource, FileEmbeddingCache,
    embedding_cache_key,
};
use oxiscope_providers::embedding::OpenAiEmbeddingModel;
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::embedding_support::http;

fn answer(vectors: &[Vec<f32>]) -> ScriptedResponse {
    let data: Vec<Value> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| json!({"index": i, "embedding": v}))
        .collect();
    ScriptedResponse::json(
        200,
        &json!({"data": data, "model": "m", "usage": {"total_tokens": vectors.len()}}),
    )
}

fn cached(
    server: &FakeServer,
    cache: FileEmbeddingCache,
) -> CachedEmbeddingModel<OpenAiEmbeddingModel> {
    let model =
        OpenAiEmbeddingModel::with_client(http(), "k", "m").with_base_url(server.url("/v1"));
    CachedEmbeddingModel::new(model, cache)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// The texts of each request the server received.
fn sent(server: &FakeServer) -> Vec<Vec<String>> {
    server
        .requests()
        .iter()
        .map(|r| serde_json::from_value(r.body_json().unwrap()["input"].clone()).unwrap())
        .collect()
}

#[tokio::test]
async fn only_misses_are_sent_once_each_and_the_answer_keeps_input_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start().await.unwrap();
    let model = cached(&server, FileEmbeddingCache::new(dir.path().join("emb")));

    server.push(answer(&[vec![1.0], vec![2.0]]));
    let first = model
        .embed(EmbeddingRequest::new(&strings(&["a", "b", "a"])))
        .await
        .unwrap();
    assert_eq!(first.embeddings, vec![vec![1.0], vec![2.0], vec![1.0]]);
    assert_eq!(first.source, EmbeddingSource::Api);
    assert_eq!(first.usage.tokens, Some(2));

    server.push(answer(&[vec![3.0]]));
    let second = model
        .embed(EmbeddingRequest::new(&strings(&["b", "c", "a"])))
        .await
        .unwrap();
    assert_eq!(second.embeddings, vec![vec![2.0], vec![3.0], vec![1.0]]);
    assert_eq!(second.source, EmbeddingSource::Api);

    let third = model
        .embed(EmbeddingRequest::new(&strings(&["c", "a"])))
        .await
        .unwrap();
    assert_eq!(third.embeddings, vec![vec![3.0], vec![1.0]]);
    assert_eq!(third.source, EmbeddingSource::Cache);
    assert_eq!(third.usage.tokens, Some(0));

    assert_eq!(sent(&server), vec![strings(&["a", "b"]), strings(&["c"])]);
    assert_eq!(model.cache().usage().await.unwrap().0, 3);
}

#[tokio::test]
async fn other_dimensions_are_other_entries() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start().await.unwrap();
    let model = cached(&server, FileEmbeddingCache::new(dir.path()));
    server.push(answer(&[vec![1.0, 1.0]]));
    server.push(answer(&[vec![1.0]]));
    let texts = strings(&["a"]);
    let two = NonZeroU32::new(2).unwrap();
    let one = NonZeroU32::new(1).unwrap();
    model
        .embed(EmbeddingRequest::new(&texts).with_dimensions(two))
        .await
        .unwrap();
    let small = model
        .embed(EmbeddingRequest::new(&texts).with_dimensions(one))
        .await
        .unwrap();
    assert_eq!(small.embeddings, vec![vec![1.0]]);
    let again = model
        .embed(EmbeddingRequest::new(&texts).with_dimensions(two))
        .await
        .unwrap();
    assert_eq!(again.source, EmbeddingSource::Cache);
    assert_eq!(again.embeddings, vec![vec![1.0, 1.0]]);
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_damaged_cache_file_is_ignored_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start().await.unwrap();
    let model = cached(&server, FileEmbeddingCache::new(dir.path()));
    server.push(answer(&[vec![1.0, 2.0]]));
    let texts = strings(&["a"]);
    model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    let file = dir
        .path()
        .join(format!("{}.emb", embedding_cache_key("m", None, "a")));
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();

    server.push(answer(&[vec![5.0, 6.0]]));
    let again = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(again.source, EmbeddingSource::Api);
    assert_eq!(again.embeddings, vec![vec![5.0, 6.0]]);
    assert_eq!(server.request_count(), 2);
    let cached = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(cached.source, EmbeddingSource::Cache);
    assert_eq!(cached.embeddings, vec![vec![5.0, 6.0]]);

    std::fs::write(&file, b"garbage").unwrap();
    assert_eq!(
        model
            .cache()
            .get(&embedding_cache_key("m", None, "a"))
            .await,
        None
    );
}

fn age(dir: &std::path::Path, key: &str, seconds_ago: u64) {
    let path = dir.join(format!("{key}.emb"));
    let file = std::fs::File::options().append(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago))
        .unwrap();
}

#[tokio::test]
async fn the_oldest_entries_go_first_past_the_file_limit() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FileEmbeddingCache::new(dir.path()).with_max_files(2);
    let key = |t: &str| embedding_cache_key("m", None, t);
    cache.put(&key("a"), vec![1.0]).await.unwrap();
    cache.put(&key("b"), vec![2.0]).await.unwrap();
    age(dir.path(), &key("a"), 30);
    age(dir.path(), &key("b"), 60);
    cache.put(&key("c"), vec![3.0]).await.unwrap();
    assert_eq!(cache.get(&key("b")).await, None, "the oldest was evicted");
    assert_eq!(cache.get(&key("a")).await, Some(vec![1.0]));
    assert_eq!(cache.get(&key("c")).await, Some(vec![3.0]));
    assert_eq!(cache.usage().await.unwrap().0, 2);
}

#[tokio::test]
async fn the_byte_limit_evicts_until_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let unlimited = FileEmbeddingCache::new(dir.path());
    let key = |t: &str| embedding_cache_key("m", None, t);
    unlimited.put(&key("a"), vec![0.0; 100]).await.unwrap();
    let (_, one_file) = unlimited.usage().await.unwrap();
    unlimited.put(&key("b"), vec![0.0; 100]).await.unwrap();
    unlimited.put(&key("c"), vec![0.0; 100]).await.unwrap();
    age(dir.path(), &key("a"), 90);
    age(dir.path(), &key("b"), 60);
    age(dir.path(), &key("c"), 30);
    let limited = FileEmbeddingCache::new(dir.path()).with_max_bytes(one_file * 2);
    limited.put(&key("d"), vec![0.0; 100]).await.unwrap();
    assert_eq!(limited.usage().await.unwrap(), (2, one_file * 2));
    assert_eq!(limited.get(&key("a")).await, None);
    assert_eq!(limited.get(&key("b")).await, None);
    assert!(limited.get(&key("c")).await.is_some());
    assert!(limited.get(&key("d")).await.is_some());
}

#[tokio::test]
async fn other_files_symlinks_and_bad_keys_are_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.emb");
    std::fs::write(&secret, b"keep").unwrap();
    let key = embedding_cache_key("m", None, "a");
    std::os::unix::fs::symlink(&secret, dir.path().join(format!("{key}.emb"))).unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"mine").unwrap();
    let cache = FileEmbeddingCache::new(dir.path()).with_max_files(0);
    assert_eq!(cache.get(&key).await, None, "a symlink is not read");
    assert!(cache.put("../escape", vec![1.0]).await.is_err());
    cache
        .put(&embedding_cache_key("m", None, "b"), vec![1.0])
        .await
        .unwrap();
    cache.clear().await.unwrap();
    assert_eq!(std::fs::read(&secret).unwrap(), b"keep");
    assert_eq!(
        std::fs::read(dir.path().join("notes.txt")).unwrap(),
        b"mine"
    );
    assert!(!dir.path().join("../escape.emb").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_of_the_same_entries_leave_whole_files() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FileEmbeddingCache::new(dir.path()).with_max_files(40);
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let cache = cache.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..50u32 {
                let key = embedding_cache_key("m", None, &format!("t{i}"));
                cache.put(&key, vec![i as f32; 256]).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let (count, _) = cache.usage().await.unwrap();
    assert!(count <= 40, "{count}");
    let mut found = 0;
    for i in 0..50u32 {
        let key = embedding_cache_key("m", None, &format!("t{i}"));
        if let Some(vector) = cache.get(&key).await {
            assert_eq!(vector, vec![i as f32; 256]);
            found += 1;
        }
    }
    assert_eq!(found, count);
    let leftovers = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".tmp-")
        })
        .count();
    assert_eq!(leftovers, 0);
}
