//! `Msg` -> Gemini `contents`: the one-to-one chat formatter and the part
//! conversions the multi-agent formatter shares.

use std::collections::HashMap;

use oxiscope_message::{ContentBlock, DataBlock, DataSource, MediaBlock, Msg, RichContent, Role};
use oxiscope_model::ModelError;
use serde_json::{Map, Value, json};

use crate::common::formatter::chat_formatter;
use crate::common::history;
use crate::media::MediaLoader;

/// The thinking-block field that keeps the `thoughtSignature` of a thought
/// part; it goes back on that part.
pub const THOUGHT_SIGNATURE_KEY: &str = "thought_signature";

/// The prefix of the thinking-block fields that keep the `thoughtSignature`
/// of a function call, followed by the call's id. Gemini 3 rejects a
/// conversation whose function calls lost their signatures, so the
/// formatter puts each back on its `function_call` part.
pub const CALL_SIGNATURE_PREFIX: &str = "thought_signature:";

/// The media types Gemini reads.
pub(crate) fn default_media_types() -> Vec<String> {
    ["image/*", "audio/*", "video/*", "application/pdf"]
        .into_iter()
        .map(str::to_owned)
        .collect()
}

chat_formatter! {
    /// Formats a one-to-one conversation for Gemini's `contents`.
    ///
    /// Assistant messages take the role `model`, every other message (the
    /// system prompt too: the chat model moves leading system messages into
    /// `systemInstruction`) the role `user`. Thinking goes back as
    /// `thought` parts (empty thinking is left out), tool calls as
    /// `function_call` parts with their arguments as an object, tool results
    /// as `function_response` parts in a user message of their own, with
    /// the media a tool returned promoted to a user message right after it.
    /// Hints become user messages. Media are sent as `inline_data`: remote
    /// ones are downloaded, `file://` ones read, as the media policy allows.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use oxiscope_message::Msg;
    /// use oxiscope_model::Formatter;
    /// use oxiscope_providers::gemini::GeminiChatFormatter;
    ///
    /// let msgs = [Msg::user("user", "Hi!")?, Msg::assistant("Friday", "Hello!")?];
    /// let contents = GeminiChatFormatter::new().format(&msgs).await?;
    /// assert_eq!(contents[1]["role"], "model");
    /// assert_eq!(contents[1]["parts"][0]["text"], "Hello!");
    /// # Ok(())
    /// # }
    /// ```
    pub struct GeminiChatFormatter;
    /// A formatter accepting images, audio, video and PDFs, downloading
    /// with a client of its own (20 MiB cap, 30 s timeout per file).
    fn new() accepting default_media_types();
    view: parts -> Parts;
}

impl GeminiChatFormatter {
    /// Replaces the accepted input media types.
    #[must_use]
    pub fn with_media_types(mut self, media_types: Vec<String>) -> Self {
        self.media_types = media_types;
        self
    }
}

/// Part conversions, with what they need to inline media.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parts<'a> {
    media: &'a MediaLoader,
    media_types: &'a [String],
}

/// The role of a message's own parts.
fn role_of(msg: &Msg) -> &'static str {
    if msg.role == Role::Assistant {
        "model"
    } else {
        "user"
    }
}

impl Parts<'_> {
    /// Appends the Gemini contents of one stored message.
    pub(crate) async fn chat_message(
        &self,
        msg: &Msg,
        out: &mut Vec<Value>,
    ) -> Result<(), ModelError> {
        let role = role_of(msg);
        let signatures = call_signatures(msg);
        let mut parts: Vec<Value> = Vec::new();
        for block in &msg.content {
            match block {
                // Gemini refuses an empty text part ("empty text
                // parameter"): one in a stored conversation would fail
                // every later request of the session.
                ContentBlock::Text(t) => {
                    if !t.text.is_empty() {
                        parts.push(text(&t.text));
                    }
                }
                ContentBlock::Thinking(t) => {
                    if !t.thinking.is_empty() {
                        let mut part = Map::new();
                        part.insert("thought".into(), true.into());
                        part.insert("text".into(), t.thinking.clone().into());
                        if let Some(sig) = t.extra.get(THOUGHT_SIGNATURE_KEY) {
                            part.insert("thought_signature".into(), sig.clone());
                        }
                        parts.push(Value::Object(part));
                    }
                }
                ContentBlock::Data(d) => parts.push(self.data(d).await?),
                ContentBlock::ToolCall(call) => {
                    let mut part = Map::new();
                    part.insert(
                        "function_call".into(),
                        json!({
                            "id": call.id,
                            "name": call.name,
                            "args": history::arguments_object(&call.input),
                        }),
                    );
                    if let Some(sig) = signatures.get(call.id.as_str()) {
                        part.insert("thought_signature".into(), (*sig).clone());
                    }
                    parts.push(Value::Object(part));
                }
                ContentBlock::Hint(hint) => {
                    flush(out, role, &mut parts);
                    let hint_parts = self.rich(&hint.hint).await?;
                    if !hint_parts.is_empty() {
                        out.push(json!({"role": "user", "parts": hint_parts}));
                    }
                }
                ContentBlock::ToolResult(result) => {
                    flush(out, role, &mut parts);
                    let (output, promoted) = self.tool_output(&result.output).await?;
                    out.push(json!({
                        "role": "user",
                        "parts": [{
                            "function_response": {
                                "id": result.id,
                                "name": result.name,
                                "response": {"output": output},
                            },
                        }],
                    }));
                    if !promoted.is_empty() {
                        out.push(json!({"role": "user", "parts": promoted}));
                    }
                }
            }
        }
        flush(out, role, &mut parts);
        Ok(())
    }

    /// The parts of a hint: its text and media.
    async fn rich(&self, rich: &RichContent) -> Result<Vec<Value>, ModelError> {
        match rich {
            RichContent::Text(t) if t.is_empty() => Ok(Vec::new()),
            RichContent::Text(t) => Ok(vec![text(t)]),
            RichContent::Blocks(blocks) => {
                let mut parts = Vec::with_capacity(blocks.len());
                for block in blocks {
                    match block {
                        MediaBlock::Text(t) if t.text.is_empty() => {}
                        MediaBlock::Text(t) => parts.push(text(&t.text)),
                        MediaBlock::Data(d) => parts.push(self.data(d).await?),
                    }
                }
                Ok(parts)
            }
        }
    }

    /// A tool's output as the text of a `function_response` (Gemini takes
    /// no media there), and the parts of the user message that presents
    /// the media it returned, each under its data block's id.
    async fn tool_output(&self, output: &RichContent) -> Result<(String, Vec<Value>), ModelError> {
        let blocks = match output {
            RichContent::Text(t) => return Ok((t.clone(), Vec::new())),
            RichContent::Blocks(blocks) => blocks,
        };
        let mut lines: Vec<String> = Vec::with_capacity(blocks.len());
        let mut promoted: Vec<Value> = Vec::new();
        for block in blocks {
            let data = match block {
                MediaBlock::Text(t) => {
                    lines.push(t.text.clone());
                    continue;
                }
                MediaBlock::Data(d) => d,
            };
            let media_type = data.source.media_type();
            let kind = history::media_kind(media_type);
            if history::media_supported(self.media_types, media_type) {
                lines.push(format!(
                    "<system-reminder>A(n) {kind} file is returned and will be presented to \
                     you with the identifier [{}].</system-reminder>",
                    data.id
                ));
                promoted.push(text(&format!("- {} ({kind} file): ", data.id)));
                promoted.push(self.inline(data).await?);
            } else {
                lines.push(match &data.source {
                    DataSource::Url(src) => format!(
                        "<system-reminder>A(n) {kind} file is returned and can be accessed at \
                         the URL: {}.</system-reminder>",
                        src.url
                    ),
                    DataSource::Base64(_) => history::unsupported_note(&data.id, media_type),
                });
            }
        }
        if !promoted.is_empty() {
            promoted.insert(
                0,
                text(
                    "<system-reminder>The multimodal data and their identifiers are listed \
                     as follows:",
                ),
            );
            promoted.push(text("</system-reminder>"));
        }
        Ok((lines.join("\n"), promoted))
    }

    /// An `inline_data` part, or a note when Gemini cannot read the type.
    pub(crate) async fn data(&self, block: &DataBlock) -> Result<Value, ModelError> {
        let media_type = block.source.media_type();
        if !history::media_supported(self.media_types, media_type) {
            return Ok(text(&history::unsupported_note(&block.id, media_type)));
        }
        self.inline(block).await
    }

    async fn inline(&self, block: &DataBlock) -> Result<Value, ModelError> {
        let data = self.media.base64(&block.source).await?;
        Ok(json!({
            "inline_data": {"data": data, "mime_type": block.source.media_type()},
        }))
    }
}

/// Emits the collected parts as one message of `role`.
fn flush(out: &mut Vec<Value>, role: &str, parts: &mut Vec<Value>) {
    if !parts.is_empty() {
        out.push(json!({"role": role, "parts": std::mem::take(parts)}));
    }
}

/// The function-call signatures kept on `msg`'s thinking blocks, by call
/// id.
fn call_signatures(msg: &Msg) -> HashMap<&str, &Value> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Thinking(t) => Some(&t.extra),
            _ => None,
        })
        .flat_map(|extra| extra.iter())
        .filter_map(|(k, v)| Some((k.strip_prefix(CALL_SIGNATURE_PREFIX)?, v)))
        .collect()
}

/// A text part.
pub(crate) fn text(text: &str) -> Value {
    json!({"text": text})
}
