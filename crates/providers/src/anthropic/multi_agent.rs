//! The multi-agent formatter: several named speakers folded into one
//! conversation for Claude.

use std::time::Duration;

use futures_util::future::BoxFuture;
use oxiscope_http::HttpClient;
use oxiscope_message::{ContentBlock, Msg};
use oxiscope_model::{Formatter, ModelError};
use serde_json::{Value, json};

use super::format::{AnthropicChatFormatter, text};
use super::history::{self, Group};

/// The default text that introduces the folded conversation.
pub const DEFAULT_HISTORY_PROMPT: &str = "# Conversation History\nThe content between \
     <history></history> tags contains your conversation history\n";

/// Formats a conversation between several speakers for the Anthropic
/// Messages API.
///
/// Consecutive messages of speakers are folded into one user message, each
/// line prefixed with the speaker's name (`Alice: ...`); the first such
/// message starts with the history prompt and wraps the lines in
/// `<history>` tags. Their images follow the lines said before them.
/// Messages with tool calls or results, and system messages, are formatted
/// as by [`AnthropicChatFormatter`], so the tool protocol stays native.
/// Hints and thinking of folded messages are left out.
#[derive(Debug, Clone)]
pub struct AnthropicMultiAgentFormatter {
    chat: AnthropicChatFormatter,
    history_prompt: String,
}

impl Default for AnthropicMultiAgentFormatter {
    fn default() -> Self {
        Self::new()
    }
}

impl AnthropicMultiAgentFormatter {
    /// A formatter with the default history prompt and media settings.
    #[must_use]
    pub fn new() -> Self {
        Self {
            chat: AnthropicChatFormatter::new(),
            history_prompt: DEFAULT_HISTORY_PROMPT.to_owned(),
        }
    }

    /// Replaces the text that introduces the folded conversation.
    #[must_use]
    pub fn with_history_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.history_prompt = prompt.into();
        self
    }

    /// Downloads remote media with `http`.
    #[must_use]
    pub fn with_http_client(mut self, http: HttpClient) -> Self {
        self.chat = self.chat.with_http_client(http);
        self
    }

    /// Caps each inlined file at `max_bytes` and each download at `timeout`.
    #[must_use]
    pub fn with_media_limits(mut self, max_bytes: u64, timeout: Duration) -> Self {
        self.chat = self.chat.with_media_limits(max_bytes, timeout);
        self
    }

    /// The folded user message of one run of speakers.
    async fn speakers(&self, msgs: &[&Msg], first: bool) -> Result<Value, ModelError> {
        let blocks = self.chat.blocks();
        let mut content: Vec<Value> = Vec::new();
        let mut lines: Vec<String> = Vec::new();
        for msg in msgs {
            for block in &msg.content {
                if let ContentBlock::Data(data) = block {
                    if !lines.is_empty() {
                        content.push(text(&lines.join("\n")));
                        lines.clear();
                    }
                    content.push(blocks.data(data).await?);
                }
            }
            let said = history::spoken_texts(msg);
            if !said.is_empty() {
                lines.push(format!("{}: {}", msg.name, said.join("\n")));
            }
        }
        if !lines.is_empty() {
            content.push(text(&lines.join("\n")));
        }
        if first {
            let opening = format!("{}<history>\n", self.history_prompt);
            match content.first_mut().and_then(text_of) {
                Some(first_text) => first_text.insert_str(0, &opening),
                None => content.insert(0, text(&opening)),
            }
            match content.last_mut().and_then(text_of) {
                Some(last_text) => last_text.push_str("\n</history>"),
                None => content.push(text("</history>")),
            }
        }
        Ok(json!({"role": "user", "content": content}))
    }
}

/// The text of a text block, for editing in place.
fn text_of(block: &mut Value) -> Option<&mut String> {
    if block.get("type")?.as_str()? != "text" {
        return None;
    }
    match block.get_mut("text")? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

impl Formatter for AnthropicMultiAgentFormatter {
    fn supported_input_media_types(&self) -> &[String] {
        self.chat.supported_input_media_types()
    }

    fn format<'a>(&'a self, msgs: &'a [Msg]) -> BoxFuture<'a, Result<Vec<Value>, ModelError>> {
        Box::pin(async move {
            let blocks = self.chat.blocks();
            let mut out = Vec::new();
            let mut first = true;
            for group in history::group(msgs) {
                match group {
                    Group::System(msg) | Group::Tools(msg) => {
                        blocks.chat_message(msg, &mut out).await?;
                    }
                    Group::Speakers(speakers) => {
                        out.push(self.speakers(&speakers, first).await?);
                        first = false;
                    }
                }
            }
            Ok(out)
        })
    }
}
