//! The OpenAI Responses API: [`OpenAiResponseModel`] and its formatters.
//!
//! | stage | file |
//! |---|---|
//! | `Msg` -> `input` items | `format.rs`, `multi_agent.rs` |
//! | items -> request body | `request.rs`, `params.rs` |
//! | server-sent events -> deltas | `stream.rs` (whole responses too) |
//! | errors | `error.rs` |
//!
//! Reasoning round-trips through the conversation: a reasoning item's id
//! and encrypted content are kept on its thinking block (the fields
//! [`REASONING_ITEM_ID`] and [`ENCRYPTED_CONTENT`]) and sent back as a
//! `reasoning` item.

mod error;
mod format;
mod model;
mod multi_agent;
mod params;
mod request;
mod stream;

pub use format::{ENCRYPTED_CONTENT, OpenAiResponseFormatter, REASONING_ITEM_ID};
pub use model::OpenAiResponseModel;
pub use multi_agent::{DEFAULT_HISTORY_PROMPT, OpenAiResponseMultiAgentFormatter};
pub use params::OpenAiResponseParameters;
pub use stream::decode_sse_stream;
