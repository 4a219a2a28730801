//! Text-to-speech models, one file per wire, and [`tts_model`], the one
//! place a credential and a [`TtsModelConfig`] become one.
//!
//! | wire | file |
//! |---|---|
//! | OpenAI `/audio/speech` (chunked audio, or `stream_format: "sse"`) | `openai.rs` |
//! | Gemini `streamGenerateContent` with audio output | `gemini.rs` |
//! | DashScope Qwen-TTS (multimodal generation, SSE) | `dashscope.rs` |
//! | errors, base64, SSE events -> audio stream | `common.rs` |
//!
//! Every model streams its audio as the provider sends it
//! ([`oxiscope_model::TtsStream`]): retries (429, 5xx, honouring
//! `Retry-After`) happen in the HTTP client before the audio starts; a
//! stream cut before the provider's final event ends with an error item.
//! The cards of the known models are
//! [`oxiscope_model::TtsModelCard`]s from
//! [`CredentialType::list_tts_models`](oxiscope_model::CredentialType::list_tts_models).

mod common;
mod dashscope;
mod factory;
mod gemini;
mod openai;

pub use dashscope::{DASHSCOPE_TTS_SAMPLE_RATE, DashScopeTtsModel};
pub use factory::{TtsModelConfig, tts_model, tts_model_with};
pub use gemini::{GEMINI_TTS_DEFAULT_BASE_URL, GeminiTtsModel};
pub use openai::{
    OPENAI_RESPONSE_FORMATS, OPENAI_TTS_DEFAULT_BASE_URL, OpenAiStreamFormat, OpenAiTtsModel,
};
