//! Ollama's native chat API: [`OllamaChatModel`] and its formatters.
//!
//! | stage | file |
//! |---|---|
//! | `Msg` -> messages | `format.rs`, `multi_agent.rs` (cutting messages and inlining media are shared with the Anthropic family) |
//! | messages -> request body | `request.rs`, `params.rs` |
//! | NDJSON lines -> deltas, errors | `stream.rs` |

mod format;
mod model;
mod multi_agent;
mod params;
mod request;
mod stream;

pub use format::OllamaChatFormatter;
pub use model::OllamaChatModel;
pub use multi_agent::{DEFAULT_HISTORY_PROMPT, OllamaMultiAgentFormatter};
pub use params::OllamaParameters;
