//! Turning messages into a provider's message payload.

use futures_util::future::BoxFuture;
use oxiscope_message::Msg;
use serde_json::Value;

use super::error::ModelError;

/// Formats a conversation for one provider wire family.
///
/// Each family has a chat variant (one user, one assistant) and a
/// multi-agent variant (several named speakers folded into one
/// conversation). Both must reproduce AgentScope's payload for the same
/// history: hint blocks become separate user-role messages, multimodal tool
/// results the provider cannot take inline are promoted into the next user
/// message under a stable identifier, thinking blocks keep their provider
/// metadata.
pub trait Formatter: Send + Sync + std::fmt::Debug {
    /// The input media types the provider accepts (`image/*`, `audio/*`,
    /// `application/pdf`, ...). Data of other types is described in text.
    fn supported_input_media_types(&self) -> &[String];

    /// The provider's `messages` payload for `msgs`, system prompt first.
    ///
    /// Async because some families must inline remote images (downloaded
    /// with a size cap and a timeout).
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when a message cannot be expressed in
    /// the provider's format, or a remote image cannot be fetched.
    fn format<'a>(&'a self, msgs: &'a [Msg]) -> BoxFuture<'a, Result<Vec<Value>, ModelError>>;
}
