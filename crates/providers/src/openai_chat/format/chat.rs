//! The chat variant: one API message per message, split at tool results
//! and hints.

use oxiscope_message::{
    ContentBlock, DataBlock, DataSource, HintBlock, MediaBlock, Msg, RichContent, Role,
    ToolResultBlock,
};
use oxiscope_model::ModelError;
use serde_json::{Map, Value, json};

use super::media::major_type;
use super::{OpenAiChatFormatter, Part};
use crate::openai_chat::vendor::Reasoning;

/// What an API message collects until it is emitted.
#[derive(Default)]
struct Segment {
    parts: Vec<Part>,
    thinking: Option<String>,
    calls: Vec<Value>,
}

/// Media a tool returned, waiting for the user message that carries it.
struct Promoted {
    id: String,
    kind: String,
    part: Value,
}

struct Walker<'a> {
    fmt: &'a OpenAiChatFormatter,
    msg: &'a Msg,
    out: &'a mut Vec<Value>,
    segment: Segment,
    promoted: Vec<Promoted>,
}

/// Appends the API messages for `msg` to `out`.
pub(super) async fn format_msg(
    fmt: &OpenAiChatFormatter,
    msg: &Msg,
    out: &mut Vec<Value>,
) -> Result<(), ModelError> {
    let mut walker = Walker {
        fmt,
        msg,
        out,
        segment: Segment::default(),
        promoted: Vec::new(),
    };
    for block in &msg.content {
        walker.block(block).await?;
    }
    walker.flush_segment();
    walker.flush_promoted();
    Ok(())
}

impl Walker<'_> {
    async fn block(&mut self, block: &ContentBlock) -> Result<(), ModelError> {
        if let ContentBlock::ToolResult(result) = block {
            self.flush_segment();
            return self.tool_result(result).await;
        }
        self.flush_promoted();
        match block {
            ContentBlock::Text(t) => self.segment.parts.push(Part::Text(t.text.clone())),
            ContentBlock::Thinking(t) => match &mut self.segment.thinking {
                Some(acc) => {
                    acc.push('\n');
                    acc.push_str(&t.thinking);
                }
                None => self.segment.thinking = Some(t.thinking.clone()),
            },
            ContentBlock::Data(d) => {
                // Media the vendor cannot take is left out of plain messages.
                if let Some(part) = self.fmt.media_part(d).await? {
                    self.segment.parts.push(Part::Media(part));
                }
            }
            ContentBlock::Hint(h) => {
                self.flush_segment();
                self.hint(h).await?;
            }
            ContentBlock::ToolCall(c) => self.segment.calls.push(json!({
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.input},
            })),
            ContentBlock::ToolResult(_) => {}
        }
        Ok(())
    }

    /// Emits the collected text, media and tool calls as one message. A
    /// segment with nothing to send keeps its thinking for the next one.
    fn flush_segment(&mut self) {
        if self.segment.parts.is_empty() && self.segment.calls.is_empty() {
            return;
        }
        let segment = std::mem::take(&mut self.segment);
        let quirks = self.fmt.quirks;
        let mut m = Map::new();
        m.insert("role".into(), self.msg.role.as_str().into());
        if quirks.names {
            m.insert("name".into(), self.msg.name.clone().into());
        }
        m.insert("content".into(), self.fmt.content(segment.parts));
        if self.msg.role == Role::Assistant {
            let reasoning = match (quirks.reasoning, segment.thinking) {
                (Reasoning::Always, thinking) => Some(thinking.unwrap_or_default()),
                (Reasoning::WhenPresent, Some(thinking)) => Some(thinking),
                _ => None,
            };
            if let Some(reasoning) = reasoning {
                m.insert("reasoning_content".into(), reasoning.into());
            }
        }
        if !segment.calls.is_empty() {
            m.insert("tool_calls".into(), Value::Array(segment.calls));
        }
        self.out.push(Value::Object(m));
    }

    /// Emits the user message carrying the media of the preceding tool
    /// results, each under its data block's id.
    fn flush_promoted(&mut self) {
        if self.promoted.is_empty() {
            return;
        }
        let mut parts = vec![Part::Text(
            "<system-reminder>The multimodal data and their identifiers are listed as follows:"
                .to_owned(),
        )];
        for p in self.promoted.drain(..) {
            parts.push(Part::Text(format!("- {} ({} file): ", p.id, p.kind)));
            parts.push(Part::Media(p.part));
        }
        parts.push(Part::Text("</system-reminder>".to_owned()));
        let mut m = Map::new();
        m.insert("role".into(), "user".into());
        if self.fmt.quirks.reminder_name {
            m.insert("name".into(), "system-reminder".into());
        }
        m.insert("content".into(), self.fmt.content(parts));
        self.out.push(Value::Object(m));
    }

    async fn hint(&mut self, hint: &HintBlock) -> Result<(), ModelError> {
        let mut parts = Vec::new();
        match &hint.hint {
            RichContent::Text(t) => parts.push(Part::Text(t.clone())),
            RichContent::Blocks(blocks) => {
                for b in blocks {
                    match b {
                        MediaBlock::Text(t) => parts.push(Part::Text(t.text.clone())),
                        MediaBlock::Data(d) => match self.fmt.media_part(d).await? {
                            Some(part) => parts.push(Part::Media(part)),
                            None => parts.push(Part::Text(format!(
                                "[{} attached, not supported by this provider]",
                                d.source.media_type()
                            ))),
                        },
                    }
                }
            }
        }
        self.out
            .push(json!({"role": "user", "content": self.fmt.content(parts)}));
        Ok(())
    }

    async fn tool_result(&mut self, result: &ToolResultBlock) -> Result<(), ModelError> {
        let text = match &result.output {
            RichContent::Text(t) => t.clone(),
            RichContent::Blocks(blocks) => {
                let mut lines = Vec::with_capacity(blocks.len());
                for b in blocks {
                    match b {
                        MediaBlock::Text(t) => lines.push(t.text.clone()),
                        MediaBlock::Data(d) => lines.push(self.tool_media(d).await?),
                    }
                }
                lines.join("\n")
            }
        };
        self.out.push(json!({
            "role": "tool",
            "tool_call_id": result.id,
            "content": text,
            "name": result.name,
        }));
        Ok(())
    }

    /// The text that stands for a data block in a tool message; supported
    /// media is queued for the following user message.
    async fn tool_media(&mut self, data: &DataBlock) -> Result<String, ModelError> {
        let kind = major_type(data.source.media_type()).to_owned();
        if let Some(part) = self.fmt.media_part(data).await? {
            let text = format!(
                "<system-reminder>A(n) {kind} file is returned and will be presented to you \
                 with the identifier [{}].</system-reminder>",
                data.id
            );
            self.promoted.push(Promoted {
                id: data.id.to_string(),
                kind,
                part,
            });
            return Ok(text);
        }
        Ok(match &data.source {
            DataSource::Base64(_) => {
                let path = self.fmt.save_locally(data).await?;
                format!(
                    "<system-reminder>A(n) {kind} file is returned and saved locally at: {}.\
                     </system-reminder>",
                    path.display()
                )
            }
            DataSource::Url(src) => format!(
                "<system-reminder>A(n) {kind} file is returned and can be found at: {}.\
                 </system-reminder>",
                src.url
            ),
        })
    }
}
