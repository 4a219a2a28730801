//! Embedding models: the trait, requests and responses, batching, the
//! model cards of every embedding family, and a file cache of vectors.
//!
//! | concern | file |
//! |---|---|
//! | [`EmbeddingModel`], its request and response | `model.rs` |
//! | splitting a request into concurrent chunks | `batch.rs` |
//! | [`EmbeddingModelCard`] and the shipped cards | `card.rs`, `cards/*.yaml` |
//! | [`FileEmbeddingCache`], [`CachedEmbeddingModel`] | `cache.rs`, `cache_file.rs` |

mod batch;
mod cache;
mod cache_file;
mod card;
mod model;

pub use batch::{DEFAULT_EMBEDDING_CONCURRENCY, embed_in_batches};
pub use cache::{CachedEmbeddingModel, FileEmbeddingCache, embedding_cache_key};
pub use card::{EMBEDDING_OUTPUT_TYPE, EmbeddingModelCard};
pub use model::{
    DynEmbeddingModel, EmbeddingModel, EmbeddingRequest, EmbeddingResponse, EmbeddingSource,
    EmbeddingUsage,
};
