//! What the Anthropic and Ollama families share: cutting a conversation into
//! provider messages, inlining media, the shape of their formatters and the
//! plumbing of their chat models.

pub(crate) mod formatter;
pub(crate) mod history;
pub(crate) mod media;
pub(crate) mod model;
