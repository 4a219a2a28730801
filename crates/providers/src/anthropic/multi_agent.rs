//! The multi-agent formatter: several named speakers folded into one
//! conversation for Claude.

use oxiscope_message::{ContentBlock, Msg};
use oxiscope_model::ModelError;
use serde_json::{Value, json};

use super::format::{AnthropicChatFormatter, text};
use crate::common::formatter::multi_agent_formatter;
use crate::common::history;

pub use crate::common::formatter::DEFAULT_HISTORY_PROMPT;

multi_agent_formatter! {
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
    pub struct AnthropicMultiAgentFormatter(AnthropicChatFormatter, blocks);
}

impl AnthropicMultiAgentFormatter {
    /// Replaces the accepted input media types, as
    /// [`AnthropicChatFormatter::with_media_types`].
    #[must_use]
    pub fn with_media_types(mut self, media_types: Vec<String>) -> Self {
        self.chat = self.chat.with_media_types(media_types);
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
