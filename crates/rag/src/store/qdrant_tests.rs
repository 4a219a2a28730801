#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use oxiscope_message::{MediaBlock, TextBlock};
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use serde_json::json;

use super::*;

fn chunk(text: &str, index: usize, metadata: &Value) -> Chunk {
    Chunk {
        content: MediaBlock::Text(TextBlock::new(text)),
        source: "doc.md".into(),
        chunk_index: index,
        total_chunks: 2,
        metadata: metadata.as_object().cloned().unwrap_or_default(),
    }
}

fn ok(result: &Value) -> ScriptedResponse {
    ScriptedResponse::json(
        200,
        &json!({"result": result, "status": "ok", "time": 0.001}),
    )
}

fn info(size: usize) -> ScriptedResponse {
    ok(&json!({
        "status": "green",
        "config": {"params": {"vectors": {"size": size, "distance": "Dot"}}},
    }))
}

fn not_found() -> ScriptedResponse {
    ScriptedResponse::json(
        404,
        &json!({"status": {"error": "Not found: Collection `x` doesn't exist!"}, "time": 0.0}),
    )
}

fn payload(doc: &str, c: &Chunk) -> Value {
    json!({
        "document_id": doc,
        "chunk_index": c.chunk_index,
        "chunk": serde_json::to_string(c).unwrap(),
        "metadata": c.metadata,
    })
}

async fn store(server: &FakeServer) -> QdrantVectorStore {
    QdrantVectorStore::new(&format!("{}/", server.base_url()), Some("k3y".into())).unwrap()
}

#[test]
fn collection_names_are_hex_under_a_prefix() {
    assert_eq!(qdrant_name("kb_1"), "oxiscope_6b625f31");
    assert_eq!(qdrant_name("a/b?"), "oxiscope_612f623f");
}

#[tokio::test]
async fn a_new_collection_is_created_with_dot_product_over_its_size() {
    let server = FakeServer::start().await.unwrap();
    server.push(not_found());
    server.push(ok(&json!(true)));
    let store = store(&server).await;
    store.create_collection("kb", 3).await.unwrap();
    let requests = server.requests();
    assert_eq!(requests[0].method, "GET");
    assert_eq!(requests[0].path, "/collections/oxiscope_6b62");
    assert_eq!(requests[0].header("api-key"), Some("k3y"));
    assert_eq!(requests[1].method, "PUT");
    assert_eq!(requests[1].path, "/collections/oxiscope_6b62");
    assert_eq!(
        requests[1].body_json().unwrap(),
        json!({"vectors": {"size": 3, "distance": "Dot"}})
    );

    // An existing one of another size is a mismatch; of the same, nothing.
    server.push(info(4));
    assert!(matches!(
        store.create_collection("kb", 3).await,
        Err(Error::DimensionMismatch {
            expected: 4,
            actual: 3
        })
    ));
    server.push(info(3));
    store.create_collection("kb", 3).await.unwrap();
    assert_eq!(server.request_count(), 4);
}

#[tokio::test]
async fn points_are_upserted_normalised_with_their_payload() {
    let server = FakeServer::start().await.unwrap();
    server.push(info(2));
    server.push(ok(&json!({"operation_id": 1, "status": "completed"})));
    let store = store(&server).await;
    let c = chunk("hello", 0, &json!({"tenant": "x"}));
    store
        .insert(
            "kb",
            vec![VectorRecord {
                vector: vec![3.0, 4.0],
                document_id: "d1".into(),
                chunk: c.clone(),
            }],
        )
        .await
        .unwrap();
    let upsert = &server.requests()[1];
    assert_eq!(upsert.method, "PUT");
    assert_eq!(upsert.path, "/collections/oxiscope_6b62/points");
    assert_eq!(upsert.query.as_deref(), Some("wait=true"));
    let body = upsert.body_json().unwrap();
    let point = &body["points"][0];
    assert!(uuid::Uuid::parse_str(point["id"].as_str().unwrap()).is_ok());
    let v: Vec<f64> = serde_json::from_value(point["vector"].clone()).unwrap();
    assert!(
        (v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6,
        "{v:?}"
    );
    assert_eq!(point["payload"], payload("d1", &c));

    // A bad vector is refused before anything is sent.
    server.push(info(2));
    let bad = VectorRecord {
        vector: vec![f32::NAN, 1.0],
        document_id: "d2".into(),
        chunk: c,
    };
    assert!(matches!(
        store.insert("kb", vec![bad]).await,
        Err(Error::InvalidVector)
    ));
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn search_sends_the_filter_and_reads_scored_points() {
    let server = FakeServer::start().await.unwrap();
    let c = chunk("hello", 1, &json!({"tenant": "x", "page": 2}));
    server.push(info(2));
    server.push(ok(&json!([
        {"id": "5c56c793-69f3-4fbf-87e6-c4bf54c28c26", "version": 0, "score": 0.75, "payload": payload("d1", &c)}
    ])));
    let store = store(&server).await;
    let filter = json!({"tenant": "x", "page": 2})
        .as_object()
        .cloned()
        .unwrap();
    let hits = store
        .search("kb", &[0.0, 2.0], 4, Some(&filter))
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].document_id, "d1");
    assert_eq!(hits[0].chunk, c);
    assert!((hits[0].score - 0.75).abs() < 1e-6);
    let search = &server.requests()[1];
    assert_eq!(search.path, "/collections/oxiscope_6b62/points/search");
    let body = search.body_json().unwrap();
    assert_eq!(body["vector"], json!([0.0, 1.0]));
    assert_eq!(body["limit"], 4);
    assert_eq!(body["with_payload"], true);
    let mut must = body["filter"]["must"].as_array().unwrap().clone();
    must.sort_by_key(|c| c["key"].as_str().unwrap().to_owned());
    assert_eq!(
        must,
        [
            json!({"key": "metadata.page", "match": {"value": 2}}),
            json!({"key": "metadata.tenant", "match": {"value": "x"}}),
        ]
    );
}

#[tokio::test]
async fn filters_qdrant_cannot_match_exactly_are_refused_before_any_request() {
    let server = FakeServer::start().await.unwrap();
    let store = store(&server).await;
    for filter in [
        json!({"score": 0.5}),
        json!({"tags": ["a"]}),
        json!({"nested": {"a": 1}}),
        json!({"gone": null}),
        json!({"a.b": "x"}),
        json!({"a[0]": "x"}),
    ] {
        let filter = filter.as_object().cloned().unwrap();
        assert!(
            matches!(
                store.search("kb", &[1.0], 1, Some(&filter)).await,
                Err(Error::InvalidParameters(_))
            ),
            "{filter:?}"
        );
        assert!(matches!(
            store.list_documents("kb", Some(&filter)).await,
            Err(Error::InvalidParameters(_))
        ));
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn documents_are_listed_over_every_scroll_page_and_deleted_by_filter() {
    let server = FakeServer::start().await.unwrap();
    let a0 = chunk("a0", 0, &json!({"k": "v"}));
    let a1 = chunk("a1", 1, &json!({"k": "v"}));
    let b0 = chunk("b0", 0, &json!({}));
    server.push(ok(&json!({
        "points": [{"id": 1, "payload": payload("a", &a1)}, {"id": 2, "payload": payload("b", &b0)}],
        "next_page_offset": "0b0f7c4e-2a53-4c43-a4b5-0d4f1f2a9d61",
    })));
    server.push(ok(&json!({
        "points": [{"id": 3, "payload": payload("a", &a0)}],
        "next_page_offset": null,
    })));
    let store = store(&server).await;
    let mut docs = store.list_documents("kb", None).await.unwrap();
    docs.sort_by(|x, y| x.document_id.cmp(&y.document_id));
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0].document_id, "a");
    assert_eq!(docs[0].chunk_count, 2);
    assert_eq!(docs[0].metadata, a0.metadata);
    assert_eq!(docs[1].chunk_count, 1);
    let requests = server.requests();
    assert_eq!(requests[0].path, "/collections/oxiscope_6b62/points/scroll");
    assert!(requests[0].body_json().unwrap().get("offset").is_none());
    assert_eq!(
        requests[1].body_json().unwrap()["offset"],
        "0b0f7c4e-2a53-4c43-a4b5-0d4f1f2a9d61"
    );

    // Chunks: a range on chunk_index, sorted.
    server.push(ok(&json!({
        "points": [{"id": 1, "payload": payload("a", &a1)}, {"id": 3, "payload": payload("a", &a0)}],
        "next_page_offset": null,
    })));
    let chunks = store.list_chunks("kb", "a", 0, 5, None).await.unwrap();
    assert_eq!(chunks, [a0, a1]);
    let body = server.requests()[2].body_json().unwrap();
    assert_eq!(
        body["filter"]["must"],
        json!([
            {"key": "document_id", "match": {"value": "a"}},
            {"key": "chunk_index", "range": {"gte": 0, "lt": 5}},
        ])
    );

    server.push(ok(&json!({"operation_id": 2, "status": "completed"})));
    store.delete("kb", "a").await.unwrap();
    let delete = &server.requests()[3];
    assert_eq!(delete.path, "/collections/oxiscope_6b62/points/delete");
    assert_eq!(
        delete.body_json().unwrap(),
        json!({"filter": {"must": [{"key": "document_id", "match": {"value": "a"}}]}})
    );
}

#[tokio::test]
async fn server_errors_and_missing_collections_are_typed() {
    let server = FakeServer::start().await.unwrap();
    server.push(not_found());
    let store = store(&server).await;
    assert!(matches!(
        store.search("kb", &[1.0], 1, None).await,
        Err(Error::CollectionNotFound { .. })
    ));
    server.push(ScriptedResponse::json(
        400,
        &json!({"status": {"error": "Wrong input: bad request"}, "time": 0.0}),
    ));
    match store.has_collection("kb").await {
        Err(Error::Storage(why)) => assert!(why.contains("Wrong input: bad request"), "{why}"),
        other => panic!("{other:?}"),
    }
    server.push(ok(&json!({"unexpected": true})));
    assert!(matches!(
        store.has_collection("kb").await,
        Err(Error::Storage(_))
    ));
    server.push(not_found());
    assert!(!store.has_collection("kb").await.unwrap());
    server.push(not_found());
    store.delete_collection("kb").await.unwrap();
    assert!(matches!(
        QdrantVectorStore::new("ftp://x", None),
        Err(Error::InvalidParameters(_))
    ));
}
