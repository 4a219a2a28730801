//! Embedding models, one file per wire, and [`embedding_model`], the one
//! place a credential and an [`EmbeddingModelConfig`] become one.
//!
//! | wire | file |
//! |---|---|
//! | OpenAI `/embeddings` (and compatible servers) | `openai.rs` |
//! | Gemini `batchEmbedContents` | `gemini.rs` |
//! | DashScope native text / multimodal embedding | `dashscope.rs` |
//! | Ollama `/api/embed` | `ollama.rs` |
//! | batching settings, errors | `common.rs` |
//!
//! Every model splits a call into its provider's batch size, sends the
//! chunks concurrently (four at once by default) through the HTTP client,
//! whose retry policy retries each chunk on 429 and 5xx, and answers in
//! input order ([`oxiscope_model::embed_in_batches`]). The cards of the
//! known models are [`oxiscope_model::EmbeddingModelCard`]s from
//! [`CredentialType::list_embedding_models`](oxiscope_model::CredentialType::list_embedding_models).

mod common;
mod dashscope;
mod factory;
mod gemini;
mod ollama;
mod openai;

pub use dashscope::{
    DASHSCOPE_EMBEDDING_BATCH_SIZE, DASHSCOPE_MULTIMODAL_BATCH_SIZE, DASHSCOPE_NATIVE_BASE_URL,
    DashScopeEmbeddingModel, native_base_url,
};
pub use factory::{EmbeddingModelConfig, embedding_model, embedding_model_with};
#[cfg(feature = "local-embedding")]
pub use factory::{local_embedding_model, local_embedding_models};
pub use gemini::{GEMINI_DEFAULT_BASE_URL, GEMINI_EMBEDDING_BATCH_SIZE, GeminiEmbeddingModel};
pub use ollama::{OLLAMA_EMBEDDING_BATCH_SIZE, OllamaEmbeddingModel};
pub use openai::{OPENAI_DEFAULT_BASE_URL, OPENAI_EMBEDDING_BATCH_SIZE, OpenAiEmbeddingModel};
