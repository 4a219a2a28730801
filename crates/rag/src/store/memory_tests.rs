#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::section::{Section, meta};
use crate::store::DynVectorStore;
use crate::{ApproxTokenChunker, ApproxTokenParameters};

fn records(
    document_id: &str,
    texts: &[&str],
    vectors: &[[f32; 2]],
    tenant: &str,
) -> Vec<VectorRecord> {
    let sections: Vec<Section> = texts
        .iter()
        .map(|t| Section::text(*t, &format!("{document_id}.txt"), meta("tenant", tenant)))
        .collect();
    let chunker = ApproxTokenChunker::new(ApproxTokenParameters {
        chunk_size: 64,
        overlap: 0,
    })
    .unwrap();
    chunker
        .chunk(&sections)
        .into_iter()
        .zip(vectors)
        .map(|(chunk, v)| VectorRecord {
            vector: v.to_vec(),
            document_id: document_id.into(),
            chunk,
        })
        .collect()
}

async fn store() -> InMemoryVectorStore {
    let s = InMemoryVectorStore::new();
    s.create_collection("kb", 2).await.unwrap();
    s.insert(
        "kb",
        records(
            "cats",
            &["cats sleep", "cats purr"],
            &[[1.0, 0.0], [0.8, 0.6]],
            "a",
        ),
    )
    .await
    .unwrap();
    s.insert("kb", records("dogs", &["dogs bark"], &[[0.0, 1.0]], "b"))
        .await
        .unwrap();
    s
}

#[tokio::test]
async fn search_ranks_by_cosine_higher_is_better() {
    let s = store().await;
    let hits = s.search("kb", &[1.0, 0.1], 3, None).await.unwrap();
    let found: Vec<_> = hits.iter().map(|h| h.chunk.as_text().unwrap()).collect();
    assert_eq!(found, vec!["cats sleep", "cats purr", "dogs bark"]);
    assert!(hits[0].score > hits[1].score && hits[1].score > hits[2].score);
    assert_eq!(hits[2].document_id, "dogs");
    let top = s.search("kb", &[1.0, 0.1], 1, None).await.unwrap();
    assert_eq!(top.len(), 1);
}

#[tokio::test]
async fn metadata_filter_scopes_search_and_listing() {
    let s = store().await;
    let filter = meta("tenant", "b");
    let hits = s.search("kb", &[1.0, 0.0], 5, Some(&filter)).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].document_id, "dogs");
    let docs = s.list_documents("kb", Some(&filter)).await.unwrap();
    assert_eq!(docs.len(), 1);
}

#[tokio::test]
async fn documents_are_listed_and_deleted_as_units() {
    let s = store().await;
    let docs = s.list_documents("kb", None).await.unwrap();
    assert_eq!(
        docs.iter()
            .map(|d| (d.document_id.as_str(), d.source.as_str(), d.chunk_count))
            .collect::<Vec<_>>(),
        vec![("cats", "cats.txt", 2), ("dogs", "dogs.txt", 1)]
    );
    assert_eq!(
        serde_json::Value::Object(docs[0].metadata.clone()),
        json!({"tenant": "a"})
    );
    let chunks = s.list_chunks("kb", "cats", 1, 30, None).await.unwrap();
    assert_eq!(
        chunks.iter().map(|c| c.chunk_index).collect::<Vec<_>>(),
        vec![1]
    );
    s.delete("kb", "cats").await.unwrap();
    let left = s.list_documents("kb", None).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].document_id, "dogs");
}

#[tokio::test]
async fn wrong_sizes_unknown_collections_and_nan_are_errors() {
    let s = store().await;
    let err = s.search("kb", &[1.0, 0.0, 0.0], 1, None).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::DimensionMismatch {
                expected: 2,
                actual: 3
            }
        ),
        "{err}"
    );
    let err = s.search("kb", &[f32::NAN, 0.0], 1, None).await.unwrap_err();
    assert!(matches!(err, Error::InvalidVector), "{err}");
    let err = s.search("nope", &[1.0, 0.0], 1, None).await.unwrap_err();
    assert!(matches!(err, Error::CollectionNotFound { .. }), "{err}");
    let err = s.create_collection("kb", 3).await.unwrap_err();
    assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");
    s.create_collection("kb", 2).await.unwrap();
    assert!(s.has_collection("kb").await.unwrap());
    s.delete_collection("kb").await.unwrap();
    assert!(!s.has_collection("kb").await.unwrap());
}

#[tokio::test]
async fn a_boxed_store_is_a_store() {
    let s: Arc<dyn DynVectorStore> = Arc::new(store().await);
    let hits = VectorStore::search(&s, "kb", &[0.0, 1.0], 1, None)
        .await
        .unwrap();
    assert_eq!(hits[0].document_id, "dogs");
}
