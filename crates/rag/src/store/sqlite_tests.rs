#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use oxiscope_message::{MediaBlock, TextBlock};
use serde_json::json;

use super::*;
use crate::store::matrix::dot;

fn chunk(text: &str, index: usize, metadata: &serde_json::Value) -> Chunk {
    Chunk {
        content: MediaBlock::Text(TextBlock::new(text)),
        source: "doc.md".into(),
        chunk_index: index,
        total_chunks: 3,
        metadata: metadata.as_object().cloned().unwrap_or_default(),
    }
}

fn record(doc: &str, index: usize, vector: Vec<f32>, metadata: &serde_json::Value) -> VectorRecord {
    VectorRecord {
        vector,
        document_id: doc.into(),
        chunk: chunk(&format!("{doc}-{index}"), index, metadata),
    }
}

async fn seeded(dir: &Path) -> SqliteVectorStore {
    let store = SqliteVectorStore::open(dir).await.unwrap();
    store.create_collection("kb", 3).await.unwrap();
    store
        .insert(
            "kb",
            vec![
                record("a", 0, vec![1.0, 0.0, 0.0], &json!({"tenant": "x"})),
                record("a", 1, vec![0.0, 2.0, 0.0], &json!({"tenant": "x"})),
                record("b", 0, vec![0.9, 0.1, 0.0], &json!({"tenant": "y"})),
            ],
        )
        .await
        .unwrap();
    store
}

#[tokio::test]
async fn records_survive_reopening_the_file() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = seeded(dir.path()).await;
        assert_eq!(store.path(), dir.path().join(VECTORS_FILE));
    }
    let store = SqliteVectorStore::open(dir.path()).await.unwrap();
    assert!(store.has_collection("kb").await.unwrap());
    assert!(!store.has_collection("other").await.unwrap());
    let hits = store.search("kb", &[1.0, 0.0, 0.0], 2, None).await.unwrap();
    let ids: Vec<_> = hits.iter().map(|h| h.chunk.as_text().unwrap()).collect();
    assert_eq!(ids, ["a-0", "b-0"]);
    assert!((hits[0].score - 1.0).abs() < 1e-6);
    // Cosine, whatever the stored length.
    let hits = store.search("kb", &[0.0, 5.0, 0.0], 1, None).await.unwrap();
    assert_eq!(hits[0].chunk.as_text(), Some("a-1"));
    assert!((hits[0].score - 1.0).abs() < 1e-6);
    let mut docs = store.list_documents("kb", None).await.unwrap();
    docs.sort_by(|a, b| a.document_id.cmp(&b.document_id));
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0].chunk_count, 2);
    assert_eq!(docs[0].source, "doc.md");
    // A second create with the same size is a no-op; another size is refused.
    store.create_collection("kb", 3).await.unwrap();
    assert!(matches!(
        store.create_collection("kb", 4).await,
        Err(Error::DimensionMismatch {
            expected: 3,
            actual: 4
        })
    ));
}

#[tokio::test]
async fn the_filter_applies_before_ranking() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path()).await;
    let filter = json!({"tenant": "y"}).as_object().cloned().unwrap();
    let hits = store
        .search("kb", &[1.0, 0.0, 0.0], 1, Some(&filter))
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].document_id, "b");
    let docs = store.list_documents("kb", Some(&filter)).await.unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0].document_id, "b");
}

#[tokio::test]
async fn deleting_a_document_removes_all_its_chunks_also_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = seeded(dir.path()).await;
        store.delete("kb", "a").await.unwrap();
        let hits = store
            .search("kb", &[1.0, 0.0, 0.0], 10, None)
            .await
            .unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].document_id, "b");
        assert!(
            store
                .list_chunks("kb", "a", 0, 10, None)
                .await
                .unwrap()
                .is_empty()
        );
    }
    let store = SqliteVectorStore::open(dir.path()).await.unwrap();
    let hits = store
        .search("kb", &[0.0, 1.0, 0.0], 10, None)
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].document_id, "b");
    store.delete_collection("kb").await.unwrap();
    assert!(!store.has_collection("kb").await.unwrap());
    assert!(matches!(
        store.search("kb", &[0.0, 1.0, 0.0], 1, None).await,
        Err(Error::CollectionNotFound { .. })
    ));
}

#[tokio::test]
async fn bad_vectors_are_typed_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path()).await;
    let err = store
        .insert(
            "kb",
            vec![
                record("c", 0, vec![1.0, 0.0, 0.0], &json!({})),
                record("c", 1, vec![1.0, 0.0], &json!({})),
            ],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::DimensionMismatch {
                expected: 3,
                actual: 2
            }
        ),
        "{err}"
    );
    let err = store
        .insert(
            "kb",
            vec![record("c", 0, vec![f32::NAN, 0.0, 0.0], &json!({}))],
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidVector), "{err}");
    assert!(matches!(
        store.search("kb", &[1.0], 1, None).await,
        Err(Error::DimensionMismatch {
            expected: 3,
            actual: 1
        })
    ));
    assert_eq!(store.list_documents("kb", None).await.unwrap().len(), 2);
    assert!(matches!(
        store.insert("missing", vec![]).await,
        Err(Error::CollectionNotFound { .. })
    ));
    assert!(matches!(
        store.create_collection("zero", 0).await,
        Err(Error::InvalidParameters(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_and_searches_see_consistent_data() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteVectorStore::open(dir.path()).await.unwrap());
    store.create_collection("kb", 2).await.unwrap();
    let mut tasks = Vec::new();
    for t in 0..4u8 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            for i in 0..20usize {
                let doc = format!("d{t}-{i}");
                store
                    .insert(
                        "kb",
                        vec![record(&doc, 0, vec![1.0, f32::from(t)], &json!({}))],
                    )
                    .await
                    .unwrap();
                let hits = store.search("kb", &[1.0, 0.0], 5, None).await.unwrap();
                assert!(!hits.is_empty());
                assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(store.list_documents("kb", None).await.unwrap().len(), 80);
    let reopened = SqliteVectorStore::open(dir.path()).await.unwrap();
    assert_eq!(reopened.list_documents("kb", None).await.unwrap().len(), 80);
}

#[test]
fn the_heap_keeps_the_best_in_order() {
    let loaded = Loaded {
        dimensions: 1,
        rows: (0..5)
            .map(|i| Row {
                document_id: format!("d{i}"),
                chunk: chunk("x", i, &json!({})),
            })
            .collect(),
        matrix: vec![0.1, 0.9, 0.5, 0.9, 0.3],
    };
    let hits = loaded.search(&[1.0], 3, None);
    assert_eq!(hits.iter().map(|h| h.1).collect::<Vec<_>>(), [1, 3, 2]);
    assert!(loaded.search(&[1.0], 0, None).is_empty());
}

#[test]
fn the_dot_product_covers_every_component() {
    let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
    let b = vec![2.0f32; 19];
    assert!((dot(&a, &b) - 342.0).abs() < 1e-4);
    assert!(dot(&[], &[]).abs() < f32::EPSILON);
}
