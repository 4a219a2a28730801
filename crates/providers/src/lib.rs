//! Model providers, one module per wire family, each behind a feature.
//!
//! Vendors that speak a family are configurations of it, not modules of
//! their own: DeepSeek, Moonshot, xAI, Volcengine, DashScope's compatible
//! mode and vLLM all use [`openai_chat`]; MiniMax's Anthropic-compatible
//! API is [`anthropic`] configured by [`minimax`].
//!
//! [`chat_model`] turns a credential and a [`ModelConfig`] into the chat
//! model of the right family; the service and the console both build their
//! models through it ([`chat_model_with`] adds the [`MediaPolicy`] that
//! says which local files and URLs a message's media may come from).
#![deny(missing_docs)]

#[cfg(feature = "anthropic")]
pub mod anthropic;
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "ollama",
    feature = "gemini"
))]
mod body_cache;
#[cfg(any(feature = "anthropic", feature = "ollama", feature = "gemini"))]
mod common;
mod factory;
#[cfg(feature = "gemini")]
pub mod gemini;
mod media;
#[cfg(feature = "minimax")]
pub mod minimax;
#[cfg(feature = "ollama")]
pub mod ollama;
#[cfg(feature = "openai")]
pub mod openai_chat;
#[cfg(feature = "openai_response")]
pub mod openai_response;
mod registry;
mod wire;

pub use factory::{ModelConfig, chat_model, chat_model_with};
pub use media::{
    DEFAULT_MAX_MEDIA_BYTES, DEFAULT_MEDIA_TIMEOUT, Endpoints, MediaPolicy, RemoteMedia,
};
pub use registry::Provider;

pub mod embedding;
pub use embedding::{EmbeddingModelConfig, embedding_model, embedding_model_with};
#[cfg(feature = "local-embedding")]
pub use embedding::{local_embedding_model, local_embedding_models};
/// The offline embedding model (all-MiniLM-L6-v2 in-process).
#[cfg(feature = "local-embedding")]
pub use oxiscope_local_embedding as local_embedding;

pub mod tts;
pub use tts::{TtsModelConfig, tts_model, tts_model_with};
