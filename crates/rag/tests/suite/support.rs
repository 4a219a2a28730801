//! Knowledge bases over the embedded store with the hashing embedder.

use std::num::NonZeroU32;
use std::sync::Arc;

use oxiscope_model::DynEmbeddingModel;
use oxiscope_rag::{
    ApproxTokenChunker, ApproxTokenParameters, DynVectorStore, HashingEmbedder, KnowledgeBase,
    ParserRegistry, SqliteVectorStore,
};

pub(crate) const CATS: &str = "Cats sleep between twelve and sixteen hours per day.";
pub(crate) const DOGS: &str = "Dogs need a walk twice a day and love to fetch sticks.";
pub(crate) const TEA: &str = "Green tea is brewed at eighty degrees for two minutes.";

pub(crate) fn embedder() -> Arc<dyn DynEmbeddingModel> {
    Arc::new(HashingEmbedder::new(NonZeroU32::new(256).unwrap()))
}

pub(crate) async fn store(dir: &tempfile::TempDir) -> Arc<dyn DynVectorStore> {
    Arc::new(SqliteVectorStore::open(dir.path()).await.unwrap())
}

pub(crate) fn kb(store: &Arc<dyn DynVectorStore>, name: &str) -> KnowledgeBase {
    KnowledgeBase::new(
        name,
        "Facts about pets and drinks.",
        embedder(),
        Arc::clone(store),
        "facts",
    )
}

/// Inserts one file per fact; returns the document ids (cats, dogs, tea).
pub(crate) async fn fill(kb: &KnowledgeBase) -> Vec<String> {
    let parsers = ParserRegistry::default();
    let chunker = ApproxTokenChunker::new(ApproxTokenParameters {
        chunk_size: 64,
        overlap: 8,
    })
    .unwrap();
    let mut ids = Vec::new();
    for (name, text) in [("cats.md", CATS), ("dogs.md", DOGS), ("tea.md", TEA)] {
        ids.push(
            kb.insert_file(&parsers, &chunker, text.as_bytes(), name, None, None)
                .await
                .unwrap(),
        );
    }
    ids
}
