//! The embedded store: documents indexed per second, and search latency at
//! 100 000 chunks of 384 dimensions.
//!
//! `cargo bench -p oxiscope-rag --bench store`

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::num::NonZeroU32;
use std::sync::{Arc, OnceLock};

use divan::{Bencher, black_box};
use oxiscope_message::{MediaBlock, TextBlock};
use oxiscope_rag::{
    Chunk, DynVectorStore, HashingEmbedder, KnowledgeBase, SqliteVectorStore, VectorRecord,
    VectorStore,
};

const DIMENSIONS: usize = 384;
const CHUNKS: usize = 100_000;
const CHUNKS_PER_DOCUMENT: usize = 10;

fn main() {
    divan::main();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A deterministic pseudo-random vector (xorshift), the stand-in for an
/// embedding model.
fn vector(seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..DIMENSIONS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            #[allow(clippy::cast_precision_loss)]
            let v = (x % 2000) as f32 / 1000.0 - 1.0;
            v
        })
        .collect()
}

fn document(doc: usize) -> Vec<VectorRecord> {
    (0..CHUNKS_PER_DOCUMENT)
        .map(|i| VectorRecord {
            vector: vector((doc * CHUNKS_PER_DOCUMENT + i) as u64),
            document_id: format!("doc-{doc}"),
            chunk: Chunk {
                content: MediaBlock::Text(TextBlock::new(format!(
                    "chunk {i} of document {doc}: some text of about the length of a real chunk, \
                     padded to look like one sentence after another."
                ))),
                source: format!("doc-{doc}.md"),
                chunk_index: i,
                total_chunks: CHUNKS_PER_DOCUMENT,
                metadata: serde_json::Map::new(),
            },
        })
        .collect()
}

/// Indexing 100 documents of 10 chunks each through a `KnowledgeBase`
/// (hashing embedder, 384 dimensions; one store transaction per document).
#[divan::bench(sample_count = 5)]
fn index_100_documents(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    bencher
        .with_inputs(|| {
            let dir = tempfile::tempdir().unwrap();
            let store: Arc<dyn DynVectorStore> =
                Arc::new(rt.block_on(SqliteVectorStore::open(dir.path())).unwrap());
            let kb = KnowledgeBase::new(
                "bench",
                "",
                Arc::new(HashingEmbedder::new(NonZeroU32::new(384).unwrap())),
                store,
                "kb",
            );
            let docs: Vec<Vec<Chunk>> = (0..100)
                .map(|d| document(d).into_iter().map(|r| r.chunk).collect())
                .collect();
            (dir, kb, docs)
        })
        .bench_local_values(|(dir, kb, docs)| {
            rt.block_on(async {
                for chunks in docs {
                    kb.insert_document(chunks, None, None).await.unwrap();
                }
            });
            drop(dir);
        });
}

struct Loaded {
    rt: tokio::runtime::Runtime,
    store: SqliteVectorStore,
    _dir: tempfile::TempDir,
}

fn loaded() -> &'static Loaded {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    LOADED.get_or_init(|| {
        let rt = runtime();
        let dir = tempfile::tempdir().unwrap();
        let store = rt.block_on(async {
            let store = SqliteVectorStore::open(dir.path()).await.unwrap();
            store.create_collection("kb", DIMENSIONS).await.unwrap();
            let mut batch = Vec::new();
            for doc in 0..CHUNKS / CHUNKS_PER_DOCUMENT {
                batch.extend(document(doc));
                if batch.len() >= 5_000 {
                    store
                        .insert("kb", std::mem::take(&mut batch))
                        .await
                        .unwrap();
                }
            }
            store.insert("kb", batch).await.unwrap();
            store
        });
        Loaded {
            rt,
            store,
            _dir: dir,
        }
    })
}

/// One query, top 5, over 100 000 chunks x 384 dimensions.
#[divan::bench(sample_count = 20)]
fn search_100k_top5(bencher: Bencher<'_, '_>) {
    let l = loaded();
    let query = vector(u64::MAX / 3);
    bencher.bench_local(|| {
        l.rt.block_on(l.store.search("kb", black_box(&query), 5, None))
            .unwrap()
    });
}
