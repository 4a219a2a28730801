//! Oxiscope's offline default embedding model: all-MiniLM-L6-v2
//! (sentence-transformers, 6 BERT layers, 384-value vectors) run
//! in-process on the CPU, so retrieval works with nothing configured.
//!
//! It owns the model and where its files come from; it does not own the
//! [`EmbeddingModel`](oxiscope_model::EmbeddingModel) trait, caching or
//! provider selection (`oxiscope-model`, `oxiscope-providers`).
//!
//! | concern | file |
//! |---|---|
//! | [`MiniLmEmbeddingModel`]: load, batch, pool, normalise | `model.rs` |
//! | the BERT encoder on candle tensor ops | `bert.rs`, `weights.rs`, `config.rs` |
//! | the WordPiece tokenizer | `tokenizer.rs` |
//! | [`ModelLocator`]: explicit dir, data dir, first-use download | `resolve.rs`, `download.rs` |
//! | [`DefaultEmbeddingModel`]: located and loaded on first use | `lazy.rs` |
//! | [`minilm_card`] | `card.rs` |
//!
//! # Where the model comes from
//! [`ModelLocator`] looks at `$OXISCOPE_EMBEDDING_MODEL_DIR` (or a path
//! given to it), else `<data dir>/models/all-MiniLM-L6-v2` (data dir:
//! `$OXISCOPE_DATA_DIR`, else `oxiscope` in the user's data directory).
//! When the directory lacks the model, the first use downloads
//! `config.json`, `vocab.txt`, `model.safetensors` (and, when present,
//! `tokenizer.json`, `sentence_bert_config.json`) from the Hugging Face
//! hub, with a progress line on stderr, into a temporary sibling directory
//! that is size-checked, test-loaded and only then renamed into place.
//!
//! # Choices
//! - **Encoder.** The ~200 lines of BERT are written here on
//!   `candle-core` tensor ops (no `candle-nn`, no `candle-transformers`):
//!   embeddings, post-norm attention layers with exact (erf) GELU, mean
//!   pooling over the attention mask, L2 normalisation, as
//!   sentence-transformers computes them. Weights are read into memory and
//!   parsed (no memory map: the crate forbids unsafe code); keys with and
//!   without the `bert.` prefix are accepted.
//! - **Tokenizer.** Hugging Face's `tokenizers` crate (no default
//!   features: no onig C build, no HTTP), not a WordPiece of our own:
//!   `candle-core` 0.11 already depends on and builds it, so it costs no
//!   extra compile time, and it *is* the reference implementation that
//!   sentence-transformers runs, down to its Unicode category tables
//!   (which decide what is a control character or punctuation). A test
//!   compares its ids with the Python tokenizer's on tricky inputs.
//! - **Sequence length.** 256 word pieces (`sentence_bert_config.json`),
//!   longer inputs truncated, as sentence-transformers does.
//! - **Threads.** Inference is CPU-bound and runs on
//!   `tokio::task::spawn_blocking`; matrix products use candle's CPU
//!   kernels (multi-threaded).
//!
//! # Performance
//! `benches/embed.rs` embeds 1,000 short texts in batches of 32; on a busy
//! 2-core machine it ran at 72 to 112 texts/s (median, two rounds) against
//! 52 to 58 for sentence-transformers on the same texts (the crate's
//! `README.md` has the details).
//!
//! # Example
//! ```no_run
//! use oxiscope_local_embedding::{DefaultEmbeddingModel, ModelLocator};
//! use oxiscope_model::{EmbeddingModel, EmbeddingRequest};
//!
//! # async fn demo() -> Result<(), oxiscope_model::ModelError> {
//! let model = DefaultEmbeddingModel::new(ModelLocator::new().with_data_dir("/var/lib/oxiscope"));
//! let texts = vec!["a cat sat on the mat".to_owned(), "猫がマットに座った".to_owned()];
//! let answer = model.embed(EmbeddingRequest::new(&texts)).await?;
//! let cosine: f32 = answer.embeddings[0].iter().zip(&answer.embeddings[1]).map(|(a, b)| a * b).sum();
//! # let _ = cosine;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod bert;
mod card;
mod config;
mod download;
mod error;
mod files;
mod lazy;
mod model;
mod resolve;
mod tokenizer;
mod weights;

pub use card::minilm_card;
pub use config::DEFAULT_MAX_SEQ_LEN;
pub use download::{DEFAULT_MODEL_BASE_URL, ProgressFn, stderr_progress};
pub use error::{Error, Result};
pub use lazy::DefaultEmbeddingModel;
pub use model::{
    DEFAULT_BATCH_SIZE, MINILM_DIMENSIONS, MINILM_MODEL_NAME, MODEL_FILES, MiniLmEmbeddingModel,
};
pub use resolve::{DATA_DIR_ENV, MODEL_DIR_ENV, ModelLocator};
