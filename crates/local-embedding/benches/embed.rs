//! Embedding 1,000 short texts with the offline model, batches of 32.
//!
//! Needs the weights: `OXISCOPE_TEST_MINILM_DIR` names an all-MiniLM-L6-v2
//! directory (see the crate's tests); without it the benchmark says so and
//! does nothing. `tests/golden/bench_reference.py` times sentence-transformers
//! on the same texts.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::OnceLock;

use divan::Bencher;
use oxiscope_local_embedding::MiniLmEmbeddingModel;

fn main() {
    divan::main();
}

/// Keep in step with `texts` in tests/golden/bench_reference.py.
fn bench_texts() -> Vec<String> {
    (0..1000)
        .map(|i| {
            format!(
                "document {i}: the quick brown fox jumps over the lazy dog number {}",
                i % 97
            )
        })
        .collect()
}

fn model() -> Option<&'static MiniLmEmbeddingModel> {
    static MODEL: OnceLock<Option<MiniLmEmbeddingModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = std::env::var_os("OXISCOPE_TEST_MINILM_DIR")?;
            Some(MiniLmEmbeddingModel::load(dir).unwrap())
        })
        .as_ref()
}

/// 1,000 texts per iteration: texts/s = 1000 / the median time.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn embed_1000_short_texts(bencher: Bencher<'_, '_>) {
    let Some(model) = model() else {
        eprintln!("OXISCOPE_TEST_MINILM_DIR is not set: nothing to benchmark");
        return;
    };
    let texts = bench_texts();
    bencher.bench(|| model.embed_blocking(divan::black_box(&texts)).unwrap());
}
