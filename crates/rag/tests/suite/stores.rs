//! One contract for every vector store: the in-memory one, the embedded
//! SQLite default and pgvector on a real PostgreSQL (skipped loudly when
//! no PostgreSQL with the extension is at hand; a failure in CI).

use std::sync::Arc;

use oxiscope_message::{MediaBlock, TextBlock};
use oxiscope_rag::{
    Chunk, DynVectorStore, Error, InMemoryVectorStore, KnowledgeBase, Metadata, PgVectorStore,
    SqliteVectorStore, VectorRecord, VectorStore,
};
use oxiscope_test_support::servers::postgres::TestPostgres;
use serde_json::{Value, json};

use super::support::{CATS, embedder, fill};

fn meta(v: &Value) -> Metadata {
    v.as_object().cloned().unwrap()
}

fn record(
    doc: &str,
    index: usize,
    total: usize,
    vector: Vec<f32>,
    metadata: &Value,
) -> VectorRecord {
    VectorRecord {
        vector,
        document_id: doc.into(),
        chunk: Chunk {
            content: MediaBlock::Text(TextBlock::new(format!("{doc}-{index}"))),
            source: format!("{doc}.md"),
            chunk_index: index,
            total_chunks: total,
            metadata: meta(metadata),
        },
    }
}

fn texts(chunks: impl IntoIterator<Item = Chunk>) -> Vec<String> {
    chunks
        .into_iter()
        .map(|c| c.as_text().unwrap().to_owned())
        .collect()
}

/// What every store must do, on a fresh store.
async fn contract(store: &dyn DynVectorStore) {
    // Collections.
    assert!(!store.has_collection_boxed("kb").await.unwrap());
    store.create_collection_boxed("kb", 3).await.unwrap();
    store.create_collection_boxed("kb", 3).await.unwrap();
    assert!(store.has_collection_boxed("kb").await.unwrap());
    assert!(matches!(
        store.create_collection_boxed("kb", 4).await,
        Err(Error::DimensionMismatch {
            expected: 3,
            actual: 4
        })
    ));
    assert!(store.create_collection_boxed("zero", 0).await.is_err());

    // Insert; vectors of any length score by cosine, higher is better.
    store
        .insert_boxed(
            "kb",
            vec![
                record(
                    "a",
                    0,
                    2,
                    vec![1.0, 0.0, 0.0],
                    &json!({"tenant": "x", "page": 1}),
                ),
                record(
                    "a",
                    1,
                    2,
                    vec![0.0, 5.0, 0.0],
                    &json!({"tenant": "x", "page": 2}),
                ),
                record("b", 0, 1, vec![0.9, 0.1, 0.0], &json!({"tenant": "y"})),
                record("c", 0, 1, vec![0.0, 0.0, 0.0], &json!({"tenant": "z"})),
            ],
        )
        .await
        .unwrap();
    let hits = store
        .search_boxed("kb", &[2.0, 0.0, 0.0], 3, None)
        .await
        .unwrap();
    let order: Vec<_> = hits.iter().map(|h| h.chunk.as_text().unwrap()).collect();
    assert_eq!(order[..2], ["a-0", "b-0"]);
    assert!((hits[0].score - 1.0).abs() < 1e-5, "{hits:?}");
    assert!(hits[0].score >= hits[1].score && hits[1].score >= hits[2].score);
    assert_eq!(hits[0].document_id, "a");
    assert_eq!(
        hits[0].chunk.metadata,
        meta(&json!({"tenant": "x", "page": 1}))
    );
    assert!(
        store
            .search_boxed("kb", &[1.0, 0.0, 0.0], 0, None)
            .await
            .unwrap()
            .is_empty()
    );
    // A zero vector neither breaks the ranking nor scores NaN.
    let all = store
        .search_boxed("kb", &[0.0, 0.0, 1.0], 10, None)
        .await
        .unwrap();
    assert_eq!(all.len(), 4);
    assert!(all.iter().all(|h| h.score.is_finite()), "{all:?}");

    // The metadata filter scopes search, listing and chunks.
    let y = meta(&json!({"tenant": "y"}));
    let hits = store
        .search_boxed("kb", &[1.0, 0.0, 0.0], 5, Some(&y))
        .await
        .unwrap();
    assert_eq!(texts(hits.into_iter().map(|h| h.chunk)), ["b-0"]);
    let page2 = meta(&json!({"tenant": "x", "page": 2}));
    let hits = store
        .search_boxed("kb", &[1.0, 0.0, 0.0], 5, Some(&page2))
        .await
        .unwrap();
    assert_eq!(texts(hits.into_iter().map(|h| h.chunk)), ["a-1"]);
    let none = meta(&json!({"tenant": "nobody"}));
    assert!(
        store
            .search_boxed("kb", &[1.0, 0.0, 0.0], 5, Some(&none))
            .await
            .unwrap()
            .is_empty()
    );
    let mut docs = store.list_documents_boxed("kb", None).await.unwrap();
    docs.sort_by(|a, b| a.document_id.cmp(&b.document_id));
    let summary: Vec<_> = docs
        .iter()
        .map(|d| (d.document_id.as_str(), d.source.as_str(), d.chunk_count))
        .collect();
    assert_eq!(
        summary,
        [("a", "a.md", 2), ("b", "b.md", 1), ("c", "c.md", 1)]
    );
    assert_eq!(docs[0].metadata, meta(&json!({"tenant": "x", "page": 1})));
    let docs = store.list_documents_boxed("kb", Some(&y)).await.unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(
        texts(
            store
                .list_chunks_boxed("kb", "a", 0, 10, None)
                .await
                .unwrap()
        ),
        ["a-0", "a-1"]
    );
    assert_eq!(
        texts(
            store
                .list_chunks_boxed("kb", "a", 1, 10, None)
                .await
                .unwrap()
        ),
        ["a-1"]
    );
    assert_eq!(
        texts(
            store
                .list_chunks_boxed("kb", "a", 0, 1, None)
                .await
                .unwrap()
        ),
        ["a-0"]
    );
    assert!(
        store
            .list_chunks_boxed("kb", "a", 0, 10, Some(&y))
            .await
            .unwrap()
            .is_empty()
    );

    // Bad input is a typed error and writes nothing.
    assert!(matches!(
        store.search_boxed("kb", &[1.0, 0.0], 5, None).await,
        Err(Error::DimensionMismatch {
            expected: 3,
            actual: 2
        })
    ));
    assert!(matches!(
        store
            .insert_boxed(
                "kb",
                vec![
                    record("d", 0, 2, vec![1.0, 1.0, 1.0], &json!({})),
                    record("d", 1, 2, vec![f32::NAN, 1.0, 1.0], &json!({})),
                ]
            )
            .await,
        Err(Error::InvalidVector)
    ));
    assert!(
        store
            .list_chunks_boxed("kb", "d", 0, 10, None)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        store.search_boxed("missing", &[1.0], 1, None).await,
        Err(Error::CollectionNotFound { .. })
    ));
    assert!(matches!(
        store.insert_boxed("missing", vec![]).await,
        Err(Error::CollectionNotFound { .. })
    ));

    // Names are data, never SQL.
    let odd = "x'); DROP TABLE rag_collections; --";
    store.create_collection_boxed(odd, 2).await.unwrap();
    store
        .insert_boxed(
            odd,
            vec![record(
                "q'\"",
                0,
                1,
                vec![1.0, 0.0],
                &json!({"k'ey": "v\"al"}),
            )],
        )
        .await
        .unwrap();
    let filter = meta(&json!({"k'ey": "v\"al"}));
    let hits = store
        .search_boxed(odd, &[1.0, 0.0], 1, Some(&filter))
        .await
        .unwrap();
    assert_eq!(hits[0].document_id, "q'\"");
    assert!(store.has_collection_boxed("kb").await.unwrap());

    // Documents and collections are deleted as units.
    store.delete_boxed("kb", "a").await.unwrap();
    let hits = store
        .search_boxed("kb", &[1.0, 0.0, 0.0], 5, None)
        .await
        .unwrap();
    assert!(hits.iter().all(|h| h.document_id != "a"), "{hits:?}");
    assert_eq!(
        store.list_documents_boxed("kb", None).await.unwrap().len(),
        2
    );
    store.delete_collection_boxed("kb").await.unwrap();
    store.delete_collection_boxed("kb").await.unwrap();
    assert!(!store.has_collection_boxed("kb").await.unwrap());
    assert!(matches!(
        store.search_boxed("kb", &[1.0, 0.0, 0.0], 1, None).await,
        Err(Error::CollectionNotFound { .. })
    ));
    // A re-created collection starts empty, with its new size.
    store.create_collection_boxed("kb", 2).await.unwrap();
    assert!(
        store
            .list_documents_boxed("kb", None)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn the_in_memory_store_keeps_the_contract() {
    contract(&InMemoryVectorStore::new()).await;
}

#[tokio::test]
async fn the_sqlite_store_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    contract(&SqliteVectorStore::open(dir.path()).await.unwrap()).await;
}

/// A fresh database on a PostgreSQL with pgvector, or `None` (skipped).
async fn pgvector() -> Option<(TestPostgres, String)> {
    let server = TestPostgres::start_pgvector()?;
    let url = server.fresh_database();
    Some((server, url))
}

#[tokio::test]
async fn the_pgvector_store_keeps_the_contract() {
    let Some((_server, url)) = pgvector().await else {
        return;
    };
    contract(&PgVectorStore::connect(&url).await.unwrap()).await;
}

#[tokio::test]
async fn pgvector_replicas_share_collections_and_a_knowledge_base_works_over_it() {
    let Some((_server, url)) = pgvector().await else {
        return;
    };
    // Two stores started together (two replicas) prepare the schema once.
    let (one, two) = tokio::join!(PgVectorStore::connect(&url), PgVectorStore::connect(&url));
    let one: Arc<dyn DynVectorStore> = Arc::new(one.unwrap());
    let two: Arc<dyn DynVectorStore> = Arc::new(two.unwrap());
    let kb = KnowledgeBase::new("facts", "Facts.", embedder(), Arc::clone(&one), "facts");
    let ids = fill(&kb).await;
    let other = KnowledgeBase::new("facts", "Facts.", embedder(), Arc::clone(&two), "facts");
    let hits = other
        .search(&["How many hours do cats sleep?".into()], 2, None)
        .await
        .unwrap();
    assert_eq!(hits[0].document_id, ids[0]);
    assert_eq!(hits[0].chunk.as_text(), Some(CATS));
    other.delete_document(&ids[0]).await.unwrap();
    let hits = kb
        .search(&["How many hours do cats sleep?".into()], 5, None)
        .await
        .unwrap();
    assert!(hits.iter().all(|h| h.document_id != ids[0]), "{hits:?}");
    // Deleted on one replica, re-created with another size on the other:
    // neither serves a stale table.
    one.delete_collection_boxed("facts").await.unwrap();
    two.create_collection_boxed("facts", 2).await.unwrap();
    one.insert_boxed("facts", vec![record("n", 0, 1, vec![0.0, 1.0], &json!({}))])
        .await
        .unwrap();
    let hits = two
        .search_boxed("facts", &[0.0, 1.0], 1, None)
        .await
        .unwrap();
    assert_eq!(hits[0].document_id, "n");
}

#[tokio::test]
async fn pgvector_index_search_finds_the_nearest_and_filtered_search_is_exact() {
    let Some((_server, url)) = pgvector().await else {
        return;
    };
    let store = PgVectorStore::connect(&url).await.unwrap();
    store.create_collection("big", 16).await.unwrap();
    // 3,000 vectors, deterministic; every tenth one tagged "rare".
    let mut seed = 0x2545_f491_u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        f32::from(u16::try_from(seed % 2000).unwrap()) / 1000.0 - 1.0
    };
    let records: Vec<_> = (0..3000)
        .map(|i| {
            let tag = if i % 10 == 0 { "rare" } else { "common" };
            let vector: Vec<f32> = (0..16).map(|_| next()).collect();
            record(&format!("d{i}"), 0, 1, vector, &json!({"tag": tag}))
        })
        .collect();
    let probe = records[1234].vector.clone();
    store.insert("big", records).await.unwrap();
    // Through the HNSW index: the vector itself comes first.
    let hits = store.search("big", &probe, 5, None).await.unwrap();
    assert_eq!(hits.len(), 5);
    assert_eq!(hits[0].document_id, "d1234");
    assert!((hits[0].score - 1.0).abs() < 1e-4);
    // A selective filter still returns top_k hits, all matching.
    let rare = meta(&json!({"tag": "rare"}));
    let hits = store.search("big", &probe, 20, Some(&rare)).await.unwrap();
    assert_eq!(hits.len(), 20);
    assert!(hits.iter().all(|h| h.chunk.metadata["tag"] == "rare"));
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    // Sizes past pgvector's index limit are stored and searched exactly.
    store.create_collection("wide", 3000).await.unwrap();
    let mut wide = vec![0.0; 3000];
    wide[2999] = 1.0;
    store
        .insert("wide", vec![record("w", 0, 1, wide.clone(), &json!({}))])
        .await
        .unwrap();
    assert_eq!(
        store.search("wide", &wide, 1, None).await.unwrap()[0].document_id,
        "w"
    );
}

#[tokio::test]
async fn pgvector_refuses_what_postgres_cannot_store_and_stays_usable() {
    let Some((_server, url)) = pgvector().await else {
        return;
    };
    let store = PgVectorStore::connect(&url).await.unwrap();
    store.create_collection("kb", 2).await.unwrap();
    // jsonb refuses the NUL character: a typed error, nothing written.
    let err = store
        .insert(
            "kb",
            vec![
                record("ok", 0, 1, vec![1.0, 0.0], &json!({})),
                record("nul", 0, 1, vec![1.0, 0.0], &json!({"name": "a\u{0}b"})),
            ],
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Storage(_)), "{err:?}");
    assert!(store.list_documents("kb", None).await.unwrap().is_empty());
    store
        .insert("kb", vec![record("ok", 0, 1, vec![1.0, 0.0], &json!({}))])
        .await
        .unwrap();
    assert_eq!(store.list_documents("kb", None).await.unwrap().len(), 1);
    assert!(matches!(
        store.create_collection("huge", 20_000).await,
        Err(Error::InvalidParameters(_))
    ));
}

#[tokio::test]
async fn a_server_without_pgvector_is_a_clear_error() {
    let Some(server) = TestPostgres::shared() else {
        return;
    };
    // Whether this server has the extension decides what must happen:
    // without it a clear error, with it a store that works.
    let url = server.fresh_database();
    let available = {
        use sqlx::Connection as _;
        let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
        sqlx::query_scalar::<_, bool>(
            "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')",
        )
        .fetch_one(&mut c)
        .await
        .unwrap()
    };
    match PgVectorStore::connect(&url).await {
        Ok(store) if available => contract(&store).await,
        Ok(_) => panic!("a store on a server without pgvector"),
        Err(Error::Storage(why)) if !available => assert!(why.contains("vector"), "{why}"),
        Err(other) => panic!("pgvector is installed, yet: {other:?}"),
    }
    assert!(matches!(
        PgVectorStore::connect("postgres://nobody@127.0.0.1:1/none").await,
        Err(Error::Storage(_))
    ));
}

#[tokio::test]
#[ignore = "needs a Qdrant server: set OXISCOPE_TEST_QDRANT_URL (no package registry ships one)"]
async fn the_qdrant_store_keeps_the_contract() {
    let url = std::env::var("OXISCOPE_TEST_QDRANT_URL").expect("OXISCOPE_TEST_QDRANT_URL");
    let key = std::env::var("OXISCOPE_TEST_QDRANT_API_KEY").ok();
    let store = oxiscope_rag::QdrantVectorStore::new(&url, key).unwrap();
    for leftover in ["kb", "zero", "x'); DROP TABLE rag_collections; --"] {
        store.delete_collection(leftover).await.unwrap();
    }
    contract(&store).await;
}
