//! OpenAI Chat Completions, and the vendors that speak it.
//!
//! - [`OpenAiChatModel`]: the chat model, streaming or not, for any
//!   [`Vendor`] (OpenAI, DeepSeek, Moonshot, xAI, Volcengine, DashScope's
//!   compatible mode, vLLM).
//! - [`OpenAiChatFormatter`]: messages as the `messages` payload, chat and
//!   multi-agent variants, per vendor.
//! - [`decode_sse_stream`]: the streamed-response decoder on its own.

mod chunk;
mod error;
mod format;
mod model;
mod params;
mod request;
mod stream;
mod vendor;

pub use format::{
    DEFAULT_FETCH_TIMEOUT, DEFAULT_HISTORY_PROMPT, DEFAULT_MAX_MEDIA_BYTES, OpenAiChatFormatter,
};
pub use model::{OpenAiChatModel, OpenAiChatModelBuilder};
pub use stream::decode_sse_stream;
pub use vendor::Vendor;
