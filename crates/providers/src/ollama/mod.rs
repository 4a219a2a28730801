//! Ollama's native chat API: [`OllamaChatModel`] and its formatters.
//!
//! | stage | file |
//! |---|---|
//! | `Msg` -> messages | `format.rs`, `multi_agent.rs` (shared with the Anthropic family: cutting messages, inlining media) |
//! | messages -> request body | `request.rs`, `params.rs` |
//! | NDJSON lines -> deltas, errors | `stream.rs` |

mod format;
// Compiled into each family that needs it, so either feature builds alone.
#[allow(clippy::duplicate_mod)]
#[path = "../anthropic/history.rs"]
mod history;
#[allow(clippy::duplicate_mod)]
#[path = "../anthropic/media.rs"]
mod media;
mod model;
mod multi_agent;
mod params;
mod request;
mod stream;

pub use format::OllamaChatFormatter;
pub use model::OllamaChatModel;
pub use multi_agent::{DEFAULT_HISTORY_PROMPT, OllamaMultiAgentFormatter};
pub use params::OllamaParameters;
