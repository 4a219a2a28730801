#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::num::NonZeroU32;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::FromRequest;
use axum::http::Request;
use oxiscope_rag::HashingEmbedder;
use oxiscope_storage::{InMemoryBus, MessageBus, SqliteStorage, Storage};
use serde_json::json;

use super::*;
use crate::KnowledgeSettings;
use crate::service::knowledge::bases::create_base;
use crate::state::ServerConfig;
use oxiscope_session::Sealer;

/// Two replicas sharing one store, one bus and one data directory, with a
/// 100-byte knowledge quota per user.
async fn replicas(dir: &std::path::Path) -> (AppState, AppState) {
    let storage: Arc<dyn Storage> = Arc::new(SqliteStorage::open(dir).await.unwrap());
    let bus: Arc<dyn MessageBus> = Arc::new(InMemoryBus::new());
    let make = || {
        let settings = KnowledgeSettings::default()
            .with_offline_model(Arc::new(HashingEmbedder::new(NonZeroU32::new(8).unwrap())))
            .with_quotas(10, 10, 100);
        AppState::new(
            storage.clone(),
            bus.clone(),
            Sealer::from_key(&[5; 32]),
            ServerConfig::new(dir).with_knowledge(settings),
        )
    };
    (make(), make())
}

async fn form(name: &str, bytes: &[u8]) -> Multipart {
    let boundary = "b0undary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
         Content-Type: text/plain\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let request = Request::builder()
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))
        .unwrap();
    Multipart::from_request(request, &()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_on_two_replicas_at_once_do_not_overshoot_the_quota() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = replicas(dir.path()).await;
    let request = serde_json::from_value(json!({
        "name": "One",
        "embedding_model_config": {"type": "local", "credential_id": "local",
                                   "model": "offline", "dimensions": 8},
    }))
    .unwrap();
    let kb = create_base(&a, "mallory", request).await.unwrap();
    let mut forms = Vec::new();
    for i in 0..8 {
        forms.push(form(&format!("f{i}.txt"), &[b'a'; 60]).await);
    }
    let uploads = forms.into_iter().enumerate().map(|(i, multipart)| {
        let state = if i % 2 == 0 { a.clone() } else { b.clone() };
        let kb = kb.clone();
        tokio::spawn(async move { upload_document(&state, "mallory", &kb, multipart).await })
    });
    let outcomes = futures_util::future::join_all(uploads).await;
    let stored = outcomes
        .into_iter()
        .filter(|o| o.as_ref().unwrap().is_ok())
        .count();
    assert_eq!(stored, 1, "one 60-byte file fits a 100-byte quota");
    let docs = a
        .storage()
        .list_knowledge_documents("mallory", &kb)
        .await
        .unwrap();
    assert_eq!(docs.len(), 1);
}
