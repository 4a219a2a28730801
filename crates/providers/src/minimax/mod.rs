//! MiniMax over its Anthropic-compatible API: [`MiniMaxChatModel`] and its
//! formatters.
//!
//! MiniMax speaks Anthropic Messages, so this module is a configuration of
//! [`crate::anthropic`] (the same payloads, request and stream decoding),
//! with what differs:
//!
//! | difference | file |
//! |---|---|
//! | videos are read as well as images, PDFs are not | `format.rs` |
//! | `max_tokens` and `thinking_enable` only; thinking is adaptive | `params.rs` |
//! | endpoint, credential, model cards | `model.rs` |
//! | errors name MiniMax and read its `base_resp` bodies | `error.rs` |

mod error;
mod format;
mod model;
mod params;

pub use format::{MiniMaxChatFormatter, MiniMaxMultiAgentFormatter, default_media_types};
pub use model::{DEFAULT_BASE_URL, MiniMaxChatModel};
pub use params::MiniMaxParameters;

#[cfg(test)]
#[path = "stream_tests.rs"]
mod stream_tests;
