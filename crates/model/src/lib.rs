//! The model layer of Oxiscope, wire-compatible with AgentScope 2.0.
//!
//! This crate owns what the rest of the workspace needs to know about model
//! providers:
//!
//! - **credentials**: one struct per provider ([`OpenAiCredential`],
//!   [`AnthropicCredential`], ...), the [`Credential`] union tagged by
//!   `type`, and the [`CredentialType`] registry (JSON Schemas for credential
//!   forms, default endpoints, the model classes each type drives). Secrets
//!   live in [`Secret`], which never prints or serialises its value; only
//!   [`Credential::to_storage_json`] writes it out.
//! - **model cards**: [`ModelCard`] with AgentScope's fields, the cards
//!   shipped for every provider's current models (YAML files embedded in the
//!   crate), and the rules that turn a class's base parameter schema plus a
//!   card's overrides into the card's `parameter_schema`
//!   ([`merge_parameter_schema`]).
//!
//! It does not talk to any provider: requests, streaming and formatting
//! belong to the provider crates and the chat-model traits.
//!
//! ```
//! use oxiscope_model::{Credential, CredentialType, OpenAiCredential};
//!
//! let credential = Credential::from(OpenAiCredential::new("sk-test").with_name("Work"));
//! let public = serde_json::to_value(&credential)?;
//! assert_eq!(public["type"], "openai_credential");
//! assert_eq!(public["api_key"], "**********");
//!
//! let cards = credential.list_models()?;
//! let gpt = cards.iter().find(|c| c.name == "gpt-4.1" && c.model_class == "openai_chat");
//! let gpt = gpt.ok_or("gpt-4.1 is shipped")?;
//! assert_eq!(gpt.parameter_schema["properties"]["max_tokens"]["maximum"], 32768);
//!
//! // The form the service publishes for creating an OpenAI credential.
//! let schema = CredentialType::OpenAi.json_schema();
//! assert_eq!(schema["required"], serde_json::json!(["api_key"]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod card;
mod chat;
mod credential;
mod embedding;
mod error;
mod model_class;
mod params;
mod secret;
mod structured;
mod tag;
mod token;
mod tts;

pub use card::{
    AUDIO_PARAMETERS, CardSpec, ModelCard, ModelStatus, THINKING_OUTPUT_TYPE, THINKING_PARAMETERS,
    merge_parameter_schema,
};
pub use chat::{
    ChatModel, ChatRequest, ChatResponse, ChatStream, ChatUsage, DeltaStream, DynChatModel,
    Formatter, FunctionSchema, ModelDelta, ModelError, ResponseAccumulator, ToolChoice,
    ToolChoiceMode, ToolSchema, accumulate,
};
pub use credential::{
    AnthropicCredential, Credential, CredentialType, DashScopeCredential, DeepSeekCredential,
    GeminiCredential, MiniMaxCredential, MoonshotCredential, OllamaCredential, OpenAiCredential,
    VolcengineCredential, XaiCredential,
};
pub use embedding::{
    CachedEmbeddingModel, DEFAULT_EMBEDDING_CONCURRENCY, DynEmbeddingModel, EMBEDDING_OUTPUT_TYPE,
    EmbeddingModel, EmbeddingModelCard, EmbeddingRequest, EmbeddingResponse, EmbeddingSource,
    EmbeddingUsage, FileEmbeddingCache, embed_in_batches, embedding_cache_key,
};
pub use error::{Error, Result};
pub use model_class::{EmbeddingFamily, ModelClass};
pub use secret::{SECRET_MASK, Secret};
pub use structured::{
    AttemptFailure, JsonRepairer, RepairError, STRUCTURED_OUTPUT_TOOL, StructuredError,
    StructuredOptions, StructuredOutput, Violation, coerce_to_schema, generate_structured_output,
    parse_json_lenient, repair_json_arguments, structured_output_tool,
};
pub use token::{
    ApproxCounter, BpeCounter, BpeEncoding, DATA_BLOCK_TOKENS, MESSAGE_OVERHEAD, NAME_OVERHEAD,
    REPLY_PRIMING, TOOL_CALL_OVERHEAD, TOOL_SCHEMA_OVERHEAD, TokenCounter, counter_for,
};
pub use tts::{
    AudioChunk, DEFAULT_MAX_TTS_AUDIO_BYTES, DynTtsModel, PCM_MEDIA_TYPE, TtsEvent, TtsModel,
    TtsModelCard, TtsModelClass, TtsOptions, TtsResponse, TtsStream, TtsUsage, collect_audio,
    collect_audio_bounded, pcm_to_wav, wav_header, wav_stream,
};
