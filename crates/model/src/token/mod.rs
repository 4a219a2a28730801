//! Token counting: how many tokens a text, a conversation or a tool list
//! costs a model, for context management (compression thresholds, tool
//! result truncation).
//!
//! [`TokenCounter`] is the interface. [`BpeCounter`] runs OpenAI's real
//! byte-pair encodings (`o200k_base`, `cl100k_base`, vocabularies embedded in
//! the binary); [`ApproxCounter`] is a documented character-based estimate
//! for model families whose tokenizer is not known here. [`counter_for`]
//! picks one from a model class or model name.

mod approx;
mod bpe;
mod counter;
mod select;

pub use approx::ApproxCounter;
pub use bpe::{BpeCounter, BpeEncoding};
pub use counter::{
    DATA_BLOCK_TOKENS, MESSAGE_OVERHEAD, NAME_OVERHEAD, REPLY_PRIMING, TOOL_CALL_OVERHEAD,
    TOOL_SCHEMA_OVERHEAD, TokenCounter,
};
pub use select::counter_for;
