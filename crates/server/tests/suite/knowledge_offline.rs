//! End to end with the offline embedding model (all-MiniLM-L6-v2, from
//! `OXISCOPE_TEST_MINILM_DIR`; skipped loudly without it, a failure in
//! CI): real documents uploaded, searched through the API and through
//! agent runs, one deleted and no longer found.

use oxiscope_providers::local_embedding::ModelLocator;
use oxiscope_server::{AuthMode, KnowledgeSettings};

use super::common::Harness;
use super::knowledge::{agents_find_the_volcano, create_kb, search, upload_three};

const TEST_MODEL_ENV: &str = "OXISCOPE_TEST_MINILM_DIR";

/// The test weights' directory, or `None` after a loud skip.
fn model_dir() -> Option<std::path::PathBuf> {
    match std::env::var_os(TEST_MODEL_ENV).map(std::path::PathBuf::from) {
        Some(dir) if dir.join("model.safetensors").is_file() => Some(dir),
        other => {
            oxiscope_test_support::skip(&format!(
                "{TEST_MODEL_ENV} does not name the all-MiniLM-L6-v2 weights ({other:?})"
            ));
            None
        }
    }
}

#[tokio::test]
async fn the_offline_model_indexes_searches_and_serves_agents() {
    let Some(dir) = model_dir() else {
        return;
    };
    let model = oxiscope_providers::local_embedding_model(
        ModelLocator::new()
            .with_model_dir(Some(dir))
            .with_download(false),
    );
    let h = Harness::start_custom(AuthMode::DevHeader, move |c| {
        c.with_knowledge(KnowledgeSettings::default().with_offline_model(model))
    })
    .await;
    let kb = create_kb(&h, "alice", "Nature", 384).await;
    let [text, pdf, docx] = upload_three(&h, "alice", &kb).await;

    let hits = search(&h, "alice", &kb, "What does lava turn into when it cools?").await;
    assert_eq!(hits[0]["document_id"], text.as_str(), "{hits:?}");
    let hits = search(&h, "alice", &kb, "How many hours a day do cats sleep?").await;
    assert_eq!(hits[0]["document_id"], docx.as_str(), "{hits:?}");
    let hits = search(&h, "alice", &kb, "text of the second page").await;
    assert!(
        hits.iter().any(|hit| hit["document_id"] == pdf.as_str()),
        "{hits:?}"
    );

    agents_find_the_volcano(&h, "alice", &kb).await;

    let (code, _) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/knowledge_bases/{kb}/documents/{docx}"),
            "alice",
            None,
        )
        .await;
    assert_eq!(code, 204);
    let hits = search(&h, "alice", &kb, "How many hours a day do cats sleep?").await;
    assert!(
        hits.iter().all(|hit| hit["document_id"] != docx.as_str()),
        "{hits:?}"
    );
}
