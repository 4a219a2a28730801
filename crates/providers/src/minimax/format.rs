//! The MiniMax formatters: the Anthropic ones, reading images and videos.

use std::time::Duration;

use futures_util::future::BoxFuture;
use oxiscope_http::HttpClient;
use oxiscope_message::Msg;
use oxiscope_model::{Formatter, ModelError};
use serde_json::Value;

use crate::MediaPolicy;
use crate::anthropic::{AnthropicChatFormatter, AnthropicMultiAgentFormatter};

/// The media types MiniMax's M-series reads: images and videos (no PDFs,
/// no audio).
#[must_use]
pub fn default_media_types() -> Vec<String> {
    vec!["image/*".to_owned(), "video/*".to_owned()]
}

/// Formats a one-to-one conversation for MiniMax's Anthropic-compatible
/// API.
///
/// The payload is the [`AnthropicChatFormatter`]'s (roles kept, tool results
/// in user messages, thinking blocks with their `signature`, media inlined
/// as base64), except that videos are read too, as
/// `{"type": "video", "source": {"type": "base64", ...}}` blocks, and PDFs
/// are not (they become a note).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use oxiscope_message::Msg;
/// use oxiscope_model::Formatter;
/// use oxiscope_providers::minimax::MiniMaxChatFormatter;
///
/// let formatter = MiniMaxChatFormatter::new();
/// assert_eq!(formatter.supported_input_media_types(), ["image/*", "video/*"]);
/// let payload = formatter.format(&[Msg::user("user", "Hi!")?]).await?;
/// assert_eq!(payload[0]["content"][0]["text"], "Hi!");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct MiniMaxChatFormatter(AnthropicChatFormatter);

impl Default for MiniMaxChatFormatter {
    fn default() -> Self {
        Self::new()
    }
}

impl MiniMaxChatFormatter {
    /// A formatter accepting images and videos, downloading with a client of
    /// its own (20 MiB cap, 30 s timeout per file).
    #[must_use]
    pub fn new() -> Self {
        Self(AnthropicChatFormatter::new().with_media_types(default_media_types()))
    }

    /// Replaces the accepted input media types (`image/*`, `video/*`).
    #[must_use]
    pub fn with_media_types(self, media_types: Vec<String>) -> Self {
        Self(self.0.with_media_types(media_types))
    }

    /// Downloads remote media with `http`.
    #[must_use]
    pub fn with_http_client(self, http: HttpClient) -> Self {
        Self(self.0.with_http_client(http))
    }

    /// Reads and downloads media as `policy` allows (default: any local
    /// file, any URL, 20 MiB and 30 s per file).
    #[must_use]
    pub fn with_media_policy(self, policy: MediaPolicy) -> Self {
        Self(self.0.with_media_policy(policy))
    }

    /// Caps each inlined file at `max_bytes` and each download at `timeout`.
    #[must_use]
    pub fn with_media_limits(self, max_bytes: u64, timeout: Duration) -> Self {
        Self(self.0.with_media_limits(max_bytes, timeout))
    }

    /// The Anthropic formatter this one configures.
    #[must_use]
    pub fn into_anthropic(self) -> AnthropicChatFormatter {
        self.0
    }
}

impl Formatter for MiniMaxChatFormatter {
    fn supported_input_media_types(&self) -> &[String] {
        self.0.supported_input_media_types()
    }

    fn format<'a>(&'a self, msgs: &'a [Msg]) -> BoxFuture<'a, Result<Vec<Value>, ModelError>> {
        self.0.format(msgs)
    }
}

/// Formats a conversation between several speakers for MiniMax, as the
/// [`AnthropicMultiAgentFormatter`] does (speakers folded into one user
/// message inside `<history>` tags, tool messages kept native), reading
/// images and videos.
#[derive(Debug, Clone)]
pub struct MiniMaxMultiAgentFormatter(AnthropicMultiAgentFormatter);

impl Default for MiniMaxMultiAgentFormatter {
    fn default() -> Self {
        Self::new()
    }
}

impl MiniMaxMultiAgentFormatter {
    /// A formatter with the default history prompt, accepting images and
    /// videos.
    #[must_use]
    pub fn new() -> Self {
        Self(AnthropicMultiAgentFormatter::new().with_media_types(default_media_types()))
    }

    /// Replaces the text that introduces the folded conversation.
    #[must_use]
    pub fn with_history_prompt(self, prompt: impl Into<String>) -> Self {
        Self(self.0.with_history_prompt(prompt))
    }

    /// Replaces the accepted input media types (`image/*`, `video/*`).
    #[must_use]
    pub fn with_media_types(self, media_types: Vec<String>) -> Self {
        Self(self.0.with_media_types(media_types))
    }

    /// Downloads remote media with `http`.
    #[must_use]
    pub fn with_http_client(self, http: HttpClient) -> Self {
        Self(self.0.with_http_client(http))
    }

    /// Reads and downloads media as `policy` allows.
    #[must_use]
    pub fn with_media_policy(self, policy: MediaPolicy) -> Self {
        Self(self.0.with_media_policy(policy))
    }

    /// Caps each inlined file at `max_bytes` and each download at `timeout`.
    #[must_use]
    pub fn with_media_limits(self, max_bytes: u64, timeout: Duration) -> Self {
        Self(self.0.with_media_limits(max_bytes, timeout))
    }
}

impl Formatter for MiniMaxMultiAgentFormatter {
    fn supported_input_media_types(&self) -> &[String] {
        self.0.supported_input_media_types()
    }

    fn format<'a>(&'a self, msgs: &'a [Msg]) -> BoxFuture<'a, Result<Vec<Value>, ModelError>> {
        self.0.format(msgs)
    }
}
