//! `KnowledgeBase` over the embedded store: insert, search, list, delete,
//! scoping, and reranking.

use std::sync::Arc;

use oxiscope_model::{DynChatModel, ModelError};
use oxiscope_rag::{Error, KnowledgeBase, LlmReranker, Metadata, VectorStore};
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use serde_json::json;

use super::support::*;

fn meta(v: &serde_json::Value) -> Metadata {
    v.as_object().cloned().unwrap()
}

#[tokio::test]
async fn a_file_is_found_listed_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let kb = kb(&store, "facts");
    let ids = fill(&kb).await;

    let hits = kb
        .search(&["How many hours do cats sleep?".into()], 2, None)
        .await
        .unwrap();
    assert_eq!(hits[0].document_id, ids[0]);
    assert_eq!(hits[0].chunk.as_text(), Some(CATS));
    assert_eq!(
        hits[0].chunk.metadata.get("filename"),
        Some(&json!("cats.md"))
    );
    assert!(hits.len() <= 2 && hits[0].score > 0.0);

    let mut docs = kb.list_documents().await.unwrap();
    docs.sort_by(|a, b| a.source.cmp(&b.source));
    let sources: Vec<_> = docs.iter().map(|d| d.source.as_str()).collect();
    assert_eq!(sources, ["cats.md", "dogs.md", "tea.md"]);
    assert_eq!(kb.list_chunks(&ids[0], 0, 10).await.unwrap().len(), 1);

    kb.delete_document(&ids[0]).await.unwrap();
    let hits = kb
        .search(&["How many hours do cats sleep?".into()], 5, None)
        .await
        .unwrap();
    assert!(hits.iter().all(|h| h.document_id != ids[0]), "{hits:?}");
    assert_eq!(kb.list_documents().await.unwrap().len(), 2);
}

#[tokio::test]
async fn several_queries_are_merged_deduplicated_and_thresholded() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let kb = kb(&store, "facts");
    let ids = fill(&kb).await;
    let queries = vec![
        "cats sleep".to_owned(),
        "cats sleep hours".to_owned(),
        "brew green tea".to_owned(),
        "   ".to_owned(),
    ];
    let hits = kb.search(&queries, 10, Some(0.2)).await.unwrap();
    let docs: Vec<_> = hits.iter().map(|h| h.document_id.clone()).collect();
    assert_eq!(docs.len(), 2, "{hits:?}");
    assert!(docs.contains(&ids[0]) && docs.contains(&ids[2]));
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(kb.search(&[], 5, None).await.unwrap().is_empty());
    assert!(kb.search(&queries, 0, None).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_metadata_filter_scopes_search_listing_and_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let a = kb(&store, "a").with_metadata_filter(meta(&json!({"tenant": "a"})));
    let b = kb(&store, "b").with_metadata_filter(meta(&json!({"tenant": "b"})));
    let a_ids = fill(&a).await;
    // A chunk's own metadata cannot escape the scope.
    let sneaky = oxiscope_rag::Chunk {
        content: oxiscope_message::MediaBlock::Text(oxiscope_message::TextBlock::new(DOGS)),
        source: "x.md".into(),
        chunk_index: 0,
        total_chunks: 1,
        metadata: meta(&json!({"tenant": "a"})),
    };
    let b_id = b.insert_document(vec![sneaky], None, None).await.unwrap();

    assert_eq!(a.list_documents().await.unwrap().len(), 3);
    let b_docs = b.list_documents().await.unwrap();
    assert_eq!(b_docs.len(), 1);
    assert_eq!(b_docs[0].metadata.get("tenant"), Some(&json!("b")));
    let hits = b.search(&["cats sleep".into()], 5, None).await.unwrap();
    assert!(hits.iter().all(|h| h.document_id == b_id), "{hits:?}");

    // b cannot delete a's document.
    b.delete_document(&a_ids[0]).await.unwrap();
    assert_eq!(a.list_documents().await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_collection_of_another_size_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    store.create_collection("facts", 3).await.unwrap();
    let kb = kb(&store, "facts");
    let err = kb.search(&["cats".into()], 3, None).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::DimensionMismatch {
                expected: 3,
                actual: 256
            }
        ),
        "{err}"
    );
}

fn scripted(turns: Vec<ScriptedTurn>) -> Arc<dyn DynChatModel> {
    Arc::new(ScriptedModel::new(turns))
}

#[tokio::test]
async fn the_reranker_reorders_and_falls_back_on_bad_answers() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let kb: KnowledgeBase = kb(&store, "facts");
    fill(&kb).await;
    let query = "cats sleep hours a day".to_owned();
    let candidates = kb
        .search(std::slice::from_ref(&query), 3, None)
        .await
        .unwrap();
    assert_eq!(candidates[0].chunk.as_text(), Some(CATS));

    let model = Arc::new(ScriptedModel::new(vec![ScriptedTurn::text(
        "Ranking: [2, 0]",
    )]));
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let picked = LlmReranker::new(dynamic)
        .rerank(&query, candidates.clone(), 2)
        .await;
    assert_eq!(picked.len(), 2);
    assert_eq!(picked[0].chunk, candidates[2].chunk);
    assert_eq!(picked[1].chunk, candidates[0].chunk);
    // The model read the query and every candidate.
    let asked = model.requests()[0].messages[0].text("");
    assert!(
        asked.contains(&query) && asked.contains("[2] (source: ") && asked.contains(TEA),
        "{asked}"
    );

    for bad in [
        ScriptedTurn::text("the first one is best"),
        ScriptedTurn::error(ModelError::InvalidRequest {
            message: "down".into(),
        }),
    ] {
        let kept = LlmReranker::new(scripted(vec![bad]))
            .rerank(&query, candidates.clone(), 2)
            .await;
        assert_eq!(kept, candidates[..2].to_vec());
    }
    assert!(
        LlmReranker::new(scripted(vec![]))
            .with_prompt("no placeholder")
            .is_err()
    );
}
