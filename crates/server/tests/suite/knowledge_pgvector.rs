//! Knowledge bases through the API with their vectors in PostgreSQL
//! (pgvector) instead of the embedded store: what replicas sharing a
//! database use. Skipped loudly without a PostgreSQL that has pgvector
//! (a failure in CI).

use std::sync::Arc;

use oxiscope_rag::{DynVectorStore, PgVectorStore};
use oxiscope_server::AuthMode;
use oxiscope_test_support::servers::postgres::TestPostgres;

use super::common::Harness;
use super::knowledge::{DIMENSIONS, VOLCANO, create_kb, search, settings, upload_three};

#[tokio::test]
async fn documents_are_indexed_searched_and_deleted_in_pgvector() {
    let Some(server) = TestPostgres::start_pgvector() else {
        return;
    };
    let url = server.fresh_database();
    let store: Arc<dyn DynVectorStore> = Arc::new(PgVectorStore::connect(&url).await.unwrap());
    let settings = settings().with_vector_store(Arc::clone(&store));
    let h = Harness::start_custom(AuthMode::DevHeader, move |c| c.with_knowledge(settings)).await;
    let kb = create_kb(&h, "alice", "Nature", DIMENSIONS).await;
    let [text, pdf, _docx] = upload_three(&h, "alice", &kb).await;

    let hits = search(&h, "alice", &kb, "volcanoes lava eruption").await;
    assert_eq!(hits[0]["document_id"], text.as_str());
    assert!(
        hits[0]["chunk"]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("lava")
    );
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
    let hits = search(&h, "alice", &kb, "Second page text").await;
    assert_eq!(hits[0]["document_id"], pdf.as_str());
    // The vectors are in the database, not in the data directory.
    let collection = format!("kb_{kb}");
    assert!(store.has_collection_boxed(&collection).await.unwrap());
    assert!(!h.dir.path().join("knowledge/vectors.sqlite").exists());

    // Another user sees none of it.
    let (code, _) = h
        .post(
            &format!("/knowledge_bases/{kb}/search"),
            "mallory",
            serde_json::json!({"query": VOLCANO, "top_k": 3}),
        )
        .await;
    assert_eq!(code, 404);

    let (code, body) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/knowledge_bases/{kb}/documents/{text}"),
            "alice",
            None,
        )
        .await;
    assert!(code == 200 || code == 204, "{code} {body}");
    let hits = search(&h, "alice", &kb, "volcanoes lava eruption").await;
    assert!(
        hits.iter().all(|h| h["document_id"] != text.as_str()),
        "{hits:?}"
    );

    let (code, _) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/knowledge_bases/{kb}"),
            "alice",
            None,
        )
        .await;
    assert_eq!(code, 204);
    assert!(!store.has_collection_boxed(&collection).await.unwrap());
}
