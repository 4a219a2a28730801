//! What the Anthropic and Ollama families share: cutting a conversation into
//! provider messages, the shape of their formatters and the plumbing of
//! their chat models (media are read by [`crate::media`], as for every
//! family).

pub(crate) mod formatter;
pub(crate) mod history;
pub(crate) mod model;
