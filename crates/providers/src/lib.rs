//! Model providers, one module per wire family, each behind a feature.
//!
//! Vendors that speak a family are configurations of it, not modules of
//! their own: DeepSeek, Moonshot, xAI, Volcengine, DashScope's compatible
//! mode and vLLM all use [`openai_chat`].
//!
//! [`chat_model`] turns a credential and a [`ModelConfig`] into the chat
//! model of the right family; the service and the console both build their
//! models through it ([`chat_model_with`] adds the [`MediaPolicy`] that
//! says which local files and URLs a message's media may come from).

#[cfg(feature = "anthropic")]
pub mod anthropic;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "ollama"))]
mod body_cache;
#[cfg(any(feature = "anthropic", feature = "ollama"))]
mod common;
mod factory;
mod media;
#[cfg(feature = "ollama")]
pub mod ollama;
#[cfg(feature = "openai")]
pub mod openai_chat;

pub use factory::{ModelConfig, chat_model, chat_model_with};
pub use media::{
    DEFAULT_MAX_MEDIA_BYTES, DEFAULT_MEDIA_TIMEOUT, Endpoints, MediaPolicy, RemoteMedia,
};
