#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::num::NonZeroU32;
use std::sync::Arc;

use oxiscope_rag::HashingEmbedder;
use oxiscope_storage::{InMemoryBus, MessageBus, SqliteStorage, Storage};
use serde_json::json;

use super::*;
use crate::EngineConfig;
use crate::Sealer;
use crate::knowledge::KnowledgeSettings;
use crate::knowledge::bases::create_base;

/// Two replicas sharing one store, one bus and one data directory, with a
/// 100-byte knowledge quota per user.
async fn replicas(dir: &std::path::Path) -> (Engine, Engine) {
    let storage: Arc<dyn Storage> = Arc::new(SqliteStorage::open(dir).await.unwrap());
    let bus: Arc<dyn MessageBus> = Arc::new(InMemoryBus::new());
    let make = || {
        let settings = KnowledgeSettings::default()
            .with_offline_model(Arc::new(HashingEmbedder::new(NonZeroU32::new(8).unwrap())))
            .with_quotas(10, 10, 100);
        Engine::new(
            storage.clone(),
            bus.clone(),
            Sealer::from_key(&[5; 32]),
            EngineConfig::new(dir).with_knowledge(settings),
        )
    };
    (make(), make())
}

async fn form(name: &str, bytes: &[u8]) -> crate::upload::Upload {
    let (feed, upload) = crate::upload::Upload::channel(4);
    let head = crate::upload::PartHead {
        name: Some("file".to_owned()),
        file_name: Some(name.to_owned()),
        content_type: Some("text/plain".to_owned()),
    };
    let bytes = bytes::Bytes::copy_from_slice(bytes);
    tokio::spawn(async move {
        feed.part(head).await;
        feed.chunk(bytes).await;
    });
    upload
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
