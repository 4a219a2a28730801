//! `Msg` -> Anthropic Messages payload: the one-to-one chat formatter and
//! the block conversions the multi-agent formatter shares.

use oxiscope_message::{ContentBlock, DataBlock, MediaBlock, Msg, RichContent, Role};
use oxiscope_model::ModelError;
use serde_json::{Map, Value, json};

use crate::common::formatter::chat_formatter;
use crate::common::history::{self, Part};
use crate::media::MediaLoader;

/// The media types Claude reads.
pub(crate) fn default_media_types() -> Vec<String> {
    vec!["image/*".to_owned(), "application/pdf".to_owned()]
}

chat_formatter! {
    /// Formats a one-to-one conversation for the Anthropic Messages API.
    ///
    /// Every message keeps its role; the system message stays in the list (the
    /// chat model moves it into the request's `system` field). An assistant
    /// message is cut at its tool results, which go back as `tool_result`
    /// blocks in a user message, and at its hints, which become user messages.
    /// Thinking blocks keep their `signature`. Images (and PDFs) are sent as
    /// base64 sources: remote ones are downloaded, `file://` ones read.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use oxiscope_message::Msg;
    /// use oxiscope_model::Formatter;
    /// use oxiscope_providers::anthropic::AnthropicChatFormatter;
    ///
    /// let msgs = [Msg::system("system", "Be brief.")?, Msg::user("user", "Hi!")?];
    /// let payload = AnthropicChatFormatter::new().format(&msgs).await?;
    /// assert_eq!(payload[1]["content"][0]["text"], "Hi!");
    /// # Ok(())
    /// # }
    /// ```
    pub struct AnthropicChatFormatter;
    /// A formatter accepting images and PDFs, downloading with a client of
    /// its own (20 MiB cap, 30 s timeout per file).
    fn new() accepting default_media_types();
    view: blocks -> Blocks;
}

impl AnthropicChatFormatter {
    /// Replaces the accepted input media types (`image/*`, `application/pdf`).
    #[must_use]
    pub fn with_media_types(mut self, media_types: Vec<String>) -> Self {
        self.media_types = media_types;
        self
    }
}

/// Block conversions, with what they need to inline media.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Blocks<'a> {
    media: &'a MediaLoader,
    media_types: &'a [String],
}

impl Blocks<'_> {
    /// Appends the provider messages of one stored message.
    pub(crate) async fn chat_message(
        &self,
        msg: &Msg,
        out: &mut Vec<Value>,
    ) -> Result<(), ModelError> {
        if msg.role == Role::System {
            let content = non_empty(history::spoken_texts(msg).into_iter().map(text).collect());
            if !content.is_empty() {
                out.push(json!({"role": "system", "content": content}));
            }
            return Ok(());
        }
        let role = msg.role.as_str();
        for part in history::split(msg) {
            match part {
                Part::Turn(blocks) => {
                    let content = self.turn(&blocks).await?;
                    if !content.is_empty() {
                        out.push(json!({"role": role, "content": content}));
                    }
                }
                Part::Results(results) => {
                    let mut content = Vec::with_capacity(results.len());
                    for result in results {
                        let mut block = json!({
                            "type": "tool_result",
                            "tool_use_id": result.id,
                        });
                        // A result with nothing to show goes without
                        // `content` (which may be left out), never with
                        // an empty text block.
                        let output = self.rich(&result.output).await?;
                        if !output.is_empty() {
                            block["content"] = Value::Array(output);
                        }
                        content.push(block);
                    }
                    out.push(json!({"role": "user", "content": content}));
                }
                Part::Hint(hint) => {
                    let content = self.rich(hint).await?;
                    if !content.is_empty() {
                        out.push(json!({"role": "user", "content": content}));
                    }
                }
            }
        }
        Ok(())
    }

    async fn turn(&self, blocks: &[&ContentBlock]) -> Result<Vec<Value>, ModelError> {
        let mut content = Vec::with_capacity(blocks.len());
        for block in blocks {
            match block {
                ContentBlock::Text(t) => content.push(text(&t.text)),
                ContentBlock::Thinking(t) => content.push(thinking(&t.thinking, &t.extra)),
                ContentBlock::Data(d) => content.push(self.data(d).await?),
                ContentBlock::ToolCall(call) => content.push(json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": history::arguments_object(&call.input),
                })),
                // Cut out by `history::split`.
                ContentBlock::Hint(_) | ContentBlock::ToolResult(_) => {}
            }
        }
        Ok(non_empty(content))
    }

    /// Text and media of a tool result or a hint.
    pub(crate) async fn rich(&self, rich: &RichContent) -> Result<Vec<Value>, ModelError> {
        match rich {
            RichContent::Text(t) => Ok(non_empty(vec![text(t)])),
            RichContent::Blocks(blocks) => {
                let mut content = Vec::with_capacity(blocks.len());
                for block in blocks {
                    content.push(match block {
                        MediaBlock::Text(t) => text(&t.text),
                        MediaBlock::Data(d) => self.data(d).await?,
                    });
                }
                Ok(non_empty(content))
            }
        }
    }

    /// An image or document block, or a note when Claude cannot read the type.
    pub(crate) async fn data(&self, block: &DataBlock) -> Result<Value, ModelError> {
        let media_type = block.source.media_type();
        if !history::media_supported(self.media_types, media_type) {
            return Ok(text(&history::unsupported_note(&block.id, media_type)));
        }
        let data = self.media.base64(&block.source).await?;
        // Claude reads images and documents; a video reaches here only when
        // its type is accepted, as by the MiniMax formatters.
        let kind = match history::media_kind(media_type) {
            "image" => "image",
            "video" => "video",
            _ => "document",
        };
        Ok(json!({
            "type": kind,
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }))
    }
}

/// A text block.
pub(crate) fn text(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// `content` without empty text blocks, which the Messages API refuses
/// (`text content blocks must be non-empty`): one in a stored conversation
/// (an empty tool output, a model's empty text) would fail every later
/// request of the session.
fn non_empty(mut content: Vec<Value>) -> Vec<Value> {
    content.retain(|block| !(block["type"] == "text" && block["text"] == ""));
    content
}

/// A thinking block with its provider fields; a block that only carries
/// redacted data goes back as `redacted_thinking`.
fn thinking(thinking: &str, extra: &Map<String, Value>) -> Value {
    if thinking.is_empty()
        && let Some(data) = extra.get(super::stream::REDACTED_KEY)
    {
        return json!({"type": "redacted_thinking", "data": data});
    }
    let mut block = Map::new();
    block.insert("type".into(), "thinking".into());
    block.insert("thinking".into(), thinking.into());
    for (key, value) in extra {
        block.insert(key.clone(), value.clone());
    }
    Value::Object(block)
}
