//! Anthropic Messages: [`AnthropicChatModel`] and its formatters.
//!
//! | stage | file |
//! |---|---|
//! | `Msg` -> payload | `format.rs`, `multi_agent.rs` (cutting messages and inlining media are shared with the Ollama family) |
//! | payload -> request body | `request.rs`, `params.rs` |
//! | server-sent events -> deltas | `stream.rs`; whole replies: `response.rs` |
//! | errors | `error.rs` |

mod error;
mod format;
mod model;
mod multi_agent;
mod params;
mod request;
mod response;
pub(crate) mod stream;

pub use format::AnthropicChatFormatter;
pub use model::{API_VERSION, AnthropicChatModel, DEFAULT_BASE_URL};
pub use multi_agent::{AnthropicMultiAgentFormatter, DEFAULT_HISTORY_PROMPT};
pub use params::{
    AnthropicParameters, DEFAULT_MAX_TOKENS, DEFAULT_THINKING_BUDGET, ThinkingDisplay, ThinkingMode,
};
