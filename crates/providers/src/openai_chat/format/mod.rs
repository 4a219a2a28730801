//! Formatting a conversation as Chat Completions `messages`.
//!
//! One formatter serves every vendor of the family; the [`Vendor`] picks the
//! payload quirks and the multi-agent flag folds named speakers into a
//! transcript.

mod chat;
mod media;
mod multi;

use std::path::PathBuf;
use std::time::Duration;

use futures_util::future::BoxFuture;
use oxiscope_http::HttpClient;
use oxiscope_message::Msg;
use oxiscope_model::{Formatter, ModelError};
use serde_json::Value;

use super::vendor::{Quirks, Vendor};
use crate::MediaPolicy;
use crate::media::MediaLoader;

/// The prompt that opens the first transcript of the multi-agent variant.
pub const DEFAULT_HISTORY_PROMPT: &str = "# Conversation History\nThe content between \
<history></history> tags contains your conversation history\n";

/// Largest media file inlined into a request (remote download or local
/// file), by default: [`MediaPolicy::max_bytes`]'s default.
pub const DEFAULT_MAX_MEDIA_BYTES: u64 = crate::DEFAULT_MAX_MEDIA_BYTES;

/// How long a remote media download may take, by default:
/// [`MediaPolicy::timeout`]'s default.
pub const DEFAULT_FETCH_TIMEOUT: Duration = crate::DEFAULT_MEDIA_TIMEOUT;

/// Turns messages into the `messages` array of a Chat Completions request,
/// exactly as AgentScope's formatter of the same vendor does.
///
/// - **chat** ([`OpenAiChatFormatter::chat`]): one API message per message,
///   split where an assistant message mixes text, tool calls and tool
///   results. Tool calls become `tool_calls` (with `content: null` when there
///   is no text), results become `role: tool` messages, hint blocks become
///   separate user messages. Media a tool returned is referred to by the data
///   block's id in the tool message and attached to a `system-reminder` user
///   message that follows the tool results.
/// - **multi-agent** ([`OpenAiChatFormatter::multi_agent`]): runs of plain
///   messages are folded into one user message holding a `<history>`
///   transcript (`name: text` lines) followed by their media; messages with
///   tool calls or results keep the chat shape.
///
/// Data blocks are sent as `image_url`, `input_audio`, `video_url` or `file`
/// parts. `file://` URLs are read and inlined; remote URLs are passed through,
/// or downloaded and inlined for vendors that need it (Moonshot), both as the
/// [`MediaPolicy`] allows ([`with_media_policy`](Self::with_media_policy)). Media of a
/// type the vendor does not accept is left out of user messages, described in
/// text in hints, and saved to a local file named in the tool result when a
/// tool returned it.
#[derive(Debug, Clone)]
pub struct OpenAiChatFormatter {
    vendor: Vendor,
    quirks: Quirks,
    multi_agent: bool,
    history_prompt: String,
    media_types: Vec<String>,
    media: MediaLoader,
    scratch_dir: PathBuf,
}

impl OpenAiChatFormatter {
    /// The chat variant for `vendor`.
    #[must_use]
    pub fn chat(vendor: Vendor) -> Self {
        let quirks = vendor.quirks();
        Self {
            vendor,
            quirks,
            multi_agent: false,
            history_prompt: DEFAULT_HISTORY_PROMPT.to_owned(),
            media_types: quirks.media.iter().map(|m| (*m).to_owned()).collect(),
            media: MediaLoader::default(),
            scratch_dir: std::env::temp_dir().join("oxiscope-media"),
        }
    }

    /// The multi-agent variant for `vendor`.
    #[must_use]
    pub fn multi_agent(vendor: Vendor) -> Self {
        Self {
            multi_agent: true,
            ..Self::chat(vendor)
        }
    }

    /// Uses `http` for downloading remote media (otherwise a default client
    /// is built when a download is needed).
    #[must_use]
    pub fn with_http_client(mut self, http: HttpClient) -> Self {
        self.media.http = Some(http);
        self
    }

    /// Reads and downloads media as `policy` allows (default: any local
    /// file, any URL, 20 MiB and 30 s per file).
    #[must_use]
    pub fn with_media_policy(mut self, policy: MediaPolicy) -> Self {
        self.media.policy = policy;
        self
    }

    /// Caps inlined media at `max_bytes` and remote downloads at `timeout`
    /// (the limits of the media policy).
    #[must_use]
    pub fn with_media_limits(mut self, max_bytes: u64, timeout: Duration) -> Self {
        self.media.policy = self.media.policy.with_limits(max_bytes, timeout);
        self
    }

    /// Replaces the prompt that opens the first multi-agent transcript.
    #[must_use]
    pub fn with_history_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.history_prompt = prompt.into();
        self
    }

    /// Where media the vendor cannot take is saved when a tool returns it
    /// (default: `oxiscope-media` in the system's temporary directory).
    #[must_use]
    pub fn with_scratch_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.scratch_dir = dir.into();
        self
    }

    /// The vendor whose payload is produced.
    #[must_use]
    pub fn vendor(&self) -> Vendor {
        self.vendor
    }

    /// Whether this is the multi-agent variant.
    #[must_use]
    pub fn is_multi_agent(&self) -> bool {
        self.multi_agent
    }

    /// Formats `msgs`; see the type's documentation.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when a `file://` image cannot be read, a
    /// remote one cannot be downloaded (or is over the size cap), the media
    /// policy refuses either, or media the vendor cannot take cannot be saved
    /// locally.
    ///
    /// # Cancel safety
    /// Dropping the future abandons pending downloads; nothing else happens.
    pub async fn format_messages(&self, msgs: &[Msg]) -> Result<Vec<Value>, ModelError> {
        if self.multi_agent {
            multi::format(self, msgs).await
        } else {
            let mut out = Vec::with_capacity(msgs.len());
            for msg in msgs {
                chat::format_msg(self, msg, &mut out).await?;
            }
            Ok(out)
        }
    }
}

impl Formatter for OpenAiChatFormatter {
    fn supported_input_media_types(&self) -> &[String] {
        &self.media_types
    }

    fn format<'a>(&'a self, msgs: &'a [Msg]) -> BoxFuture<'a, Result<Vec<Value>, ModelError>> {
        Box::pin(self.format_messages(msgs))
    }
}

impl crate::body_cache::PerMessage for OpenAiChatFormatter {
    /// The chat variant's messages for `msg` (the multi-agent variant folds
    /// neighbours and is never used one message at a time).
    fn format_one<'a>(
        &'a self,
        msg: &'a Msg,
        out: &'a mut Vec<Value>,
    ) -> BoxFuture<'a, Result<(), ModelError>> {
        Box::pin(chat::format_msg(self, msg, out))
    }

    /// Media must be inline, and a tool's media of a type the vendor cannot
    /// take is not (it is written to the scratch directory on every call).
    fn cacheable(&self, msg: &Msg) -> bool {
        crate::body_cache::data_blocks(msg).all(|(data, in_result)| {
            crate::body_cache::inline(data)
                && (!in_result || self.supports(data.source.media_type()))
        })
    }
}

/// One piece of a message's content before it is shaped for the vendor.
#[derive(Debug, Clone)]
enum Part {
    Text(String),
    /// A ready content part (`image_url`, `input_audio`, ...).
    Media(Value),
}

impl OpenAiChatFormatter {
    /// The `content` value: a list of parts, or for text-only vendors the
    /// text parts joined by newlines; `null` when there is nothing.
    fn content(&self, parts: Vec<Part>) -> Value {
        if parts.is_empty() {
            return Value::Null;
        }
        if self.quirks.string_content {
            let texts: Vec<String> = parts
                .into_iter()
                .filter_map(|p| match p {
                    Part::Text(t) => Some(t),
                    Part::Media(_) => None,
                })
                .collect();
            return Value::String(texts.join("\n"));
        }
        Value::Array(
            parts
                .into_iter()
                .map(|p| match p {
                    Part::Text(text) => text_part(text),
                    Part::Media(v) => v,
                })
                .collect(),
        )
    }
}

fn text_part(text: String) -> Value {
    let mut part = serde_json::Map::new();
    part.insert("type".into(), "text".into());
    part.insert("text".into(), Value::String(text));
    Value::Object(part)
}
