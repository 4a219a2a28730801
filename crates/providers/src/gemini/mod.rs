//! Google Gemini (`generateContent` / `streamGenerateContent`):
//! [`GeminiChatModel`] and its formatters.
//!
//! | stage | file |
//! |---|---|
//! | `Msg` -> `contents` | `format.rs`, `multi_agent.rs` |
//! | tool schemas -> Gemini's schema subset | `schema.rs` |
//! | payload -> request body | `request.rs`, `params.rs` |
//! | server-sent events and whole replies -> deltas | `stream.rs` |
//! | errors | `error.rs` |

mod error;
mod format;
mod model;
mod multi_agent;
mod params;
mod request;
mod schema;
mod stream;

pub use format::{CALL_SIGNATURE_PREFIX, GeminiChatFormatter, THOUGHT_SIGNATURE_KEY};
pub use model::{DEFAULT_BASE_URL, GeminiChatModel};
pub use multi_agent::{DEFAULT_HISTORY_PROMPT, GeminiMultiAgentFormatter};
pub use params::{DEFAULT_THINKING_BUDGET, GeminiParameters};
pub use schema::sanitize_schema;
