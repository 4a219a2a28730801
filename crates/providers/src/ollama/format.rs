//! `Msg` -> Ollama `/api/chat` messages: the one-to-one chat formatter and
//! the conversions the multi-agent formatter shares.

use oxiscope_message::{
    ContentBlock, DataBlock, MediaBlock, Msg, RichContent, Role, ToolResultBlock,
};
use oxiscope_model::ModelError;
use serde_json::{Map, Value, json};

use crate::common::formatter::chat_formatter;
use crate::common::history::{self, Part};
use crate::media::MediaLoader;

chat_formatter! {
    /// Formats a one-to-one conversation for Ollama's native chat API.
    ///
    /// Content is a string (text blocks joined by newlines) with images in a
    /// separate `images` list of base64 strings; remote images are downloaded
    /// and `file://` images read. Assistant thinking is not sent back. Tool
    /// calls carry their arguments as a JSON object; tool results are `tool`
    /// messages naming the tool. Images in tool results cannot travel in a
    /// `tool` message: each is replaced by a note naming its identifier, and the
    /// images follow in a user message listing those identifiers. Hints become
    /// user messages.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use oxiscope_message::Msg;
    /// use oxiscope_model::Formatter;
    /// use oxiscope_providers::ollama::OllamaChatFormatter;
    ///
    /// let msgs = [Msg::system("system", "Be brief.")?, Msg::user("user", "Hi!")?];
    /// let payload = OllamaChatFormatter::new().format(&msgs).await?;
    /// assert_eq!(payload[1], serde_json::json!({"role": "user", "content": "Hi!"}));
    /// # Ok(())
    /// # }
    /// ```
    pub struct OllamaChatFormatter;
    /// A formatter accepting images, downloading with a client of its own
    /// (20 MiB cap, 30 s timeout per file).
    fn new() accepting vec!["image/*".to_owned()];
    view: parts -> Parts;
}

/// Text lines and base64 images gathered for one message.
#[derive(Debug, Default)]
pub(crate) struct Gathered {
    pub(crate) lines: Vec<String>,
    pub(crate) images: Vec<String>,
}

impl Gathered {
    /// `{"role", "content", "images"?}`.
    pub(crate) fn message(self, role: &str) -> Value {
        let mut msg = Map::new();
        msg.insert("role".into(), role.into());
        msg.insert("content".into(), self.lines.join("\n").into());
        if !self.images.is_empty() {
            msg.insert("images".into(), self.images.into());
        }
        Value::Object(msg)
    }
}

/// Conversions, with what they need to inline media.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parts<'a> {
    media: &'a MediaLoader,
    media_types: &'a [String],
}

impl Parts<'_> {
    /// Appends the provider messages of one stored message.
    pub(crate) async fn chat_message(
        &self,
        msg: &Msg,
        out: &mut Vec<Value>,
    ) -> Result<(), ModelError> {
        if msg.role == Role::System {
            out.push(json!({"role": "system", "content": history::spoken_texts(msg).join("\n")}));
            return Ok(());
        }
        for part in history::split(msg) {
            match part {
                Part::Turn(blocks) => {
                    if let Some(turn) = self.turn(msg.role, &blocks).await? {
                        out.push(turn);
                    }
                }
                Part::Results(results) => self.results(&results, out).await?,
                Part::Hint(hint) => {
                    let mut gathered = Gathered::default();
                    self.rich(hint, &mut gathered).await?;
                    out.push(gathered.message("user"));
                }
            }
        }
        Ok(())
    }

    async fn turn(
        &self,
        role: Role,
        blocks: &[&ContentBlock],
    ) -> Result<Option<Value>, ModelError> {
        let mut gathered = Gathered::default();
        let mut calls = Vec::new();
        for block in blocks {
            match block {
                ContentBlock::Text(t) => gathered.lines.push(t.text.clone()),
                ContentBlock::Data(d) => self.data(d, &mut gathered).await?,
                ContentBlock::ToolCall(call) => calls.push(json!({
                    "function": {
                        "name": call.name,
                        "arguments": history::arguments_object(&call.input),
                    }
                })),
                // Thinking is not sent back; hints and results are cut out
                // by `history::split`.
                ContentBlock::Thinking(_) | ContentBlock::Hint(_) | ContentBlock::ToolResult(_) => {
                }
            }
        }
        if gathered.lines.is_empty() && gathered.images.is_empty() && calls.is_empty() {
            return Ok(None);
        }
        let mut msg = gathered.message(role.as_str());
        if !calls.is_empty()
            && let Value::Object(map) = &mut msg
        {
            map.insert("tool_calls".into(), calls.into());
        }
        Ok(Some(msg))
    }

    /// `tool` messages for a run of results, then one user message with the
    /// images they returned.
    async fn results(
        &self,
        results: &[&ToolResultBlock],
        out: &mut Vec<Value>,
    ) -> Result<(), ModelError> {
        let mut promoted = Gathered::default();
        for result in results {
            let mut lines = Vec::new();
            match &result.output {
                RichContent::Text(t) => lines.push(t.clone()),
                RichContent::Blocks(blocks) => {
                    for block in blocks {
                        match block {
                            MediaBlock::Text(t) => lines.push(t.text.clone()),
                            MediaBlock::Data(d) => {
                                lines.push(self.promote(d, &mut promoted).await?);
                            }
                        }
                    }
                }
            }
            out.push(
                json!({"role": "tool", "tool_name": result.name, "content": lines.join("\n")}),
            );
        }
        if !promoted.images.is_empty() {
            promoted.lines.insert(
                0,
                "<system-reminder>The multimodal data and their identifiers are listed as \
                 follows:"
                    .to_owned(),
            );
            promoted.lines.push("</system-reminder>".to_owned());
            out.push(promoted.message("user"));
        }
        Ok(())
    }

    /// The note that stands for a tool result's data block; a readable image
    /// is queued for the following user message.
    async fn promote(
        &self,
        block: &DataBlock,
        promoted: &mut Gathered,
    ) -> Result<String, ModelError> {
        let media_type = block.source.media_type();
        if !history::media_supported(self.media_types, media_type) {
            return Ok(history::unsupported_note(&block.id, media_type));
        }
        let kind = history::media_kind(media_type);
        promoted
            .images
            .push(self.media.base64(&block.source).await?);
        promoted.lines.push(format!(
            "- {} ({kind} file): {}",
            block.id,
            block.name.as_deref().unwrap_or_default()
        ));
        Ok(format!(
            "<system-reminder>A(n) {kind} file is returned and will be presented to you with \
             the identifier [{}].</system-reminder>",
            block.id
        ))
    }

    /// Text and images of a hint.
    pub(crate) async fn rich(
        &self,
        rich: &RichContent,
        gathered: &mut Gathered,
    ) -> Result<(), ModelError> {
        match rich {
            RichContent::Text(t) => gathered.lines.push(t.clone()),
            RichContent::Blocks(blocks) => {
                for block in blocks {
                    match block {
                        MediaBlock::Text(t) => gathered.lines.push(t.text.clone()),
                        MediaBlock::Data(d) => self.data(d, gathered).await?,
                    }
                }
            }
        }
        Ok(())
    }

    /// An image into `images`, or a note when the model cannot read the type.
    pub(crate) async fn data(
        &self,
        block: &DataBlock,
        gathered: &mut Gathered,
    ) -> Result<(), ModelError> {
        let media_type = block.source.media_type();
        if history::media_supported(self.media_types, media_type) {
            gathered
                .images
                .push(self.media.base64(&block.source).await?);
        } else {
            gathered
                .lines
                .push(history::unsupported_note(&block.id, media_type));
        }
        Ok(())
    }
}
