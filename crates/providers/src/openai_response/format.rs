//! `Msg` -> Responses API `input` items: the one-to-one chat formatter and
//! the conversions the multi-agent formatter shares.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use futures_util::future::BoxFuture;
use oxiscope_http::HttpClient;
use oxiscope_message::{
    ContentBlock, DataBlock, DataSource, MediaBlock, Msg, RichContent, Role, ThinkingBlock,
};
use oxiscope_model::{Formatter, ModelError};
use serde_json::{Map, Value, json};

use crate::MediaPolicy;
use crate::media::MediaLoader;

/// The thinking-block field holding the id of the reasoning item it came
/// from (AgentScope's name for it).
pub const REASONING_ITEM_ID: &str = "reasoning_item_id";
/// The thinking-block field holding the reasoning item's encrypted content.
pub const ENCRYPTED_CONTENT: &str = "encrypted_content";

/// The media types the Responses API reads (audio it does not).
fn default_media_types() -> Vec<String> {
    vec!["image/*".to_owned(), "application/pdf".to_owned()]
}

/// Formats a one-to-one conversation as the `input` of the OpenAI Responses
/// API, exactly as AgentScope's `OpenAIResponseFormatter` does.
///
/// - Text is `input_text` (`output_text` in assistant messages); images
///   are `input_image` with a URL (inline and `file://` data as a `data:`
///   URL, `http(s)` URLs passed on), PDFs are `input_file`.
/// - Tool calls become top-level `function_call` items after the text of
///   their message; tool results become `function_call_output` items whose
///   `output` is the text, or a list of `input_text` / `input_image` parts
///   when the tool returned media.
/// - Hints become separate user messages.
/// - A thinking block that came from a reasoning item (it carries
///   [`REASONING_ITEM_ID`]) goes back as a `reasoning` item with its summary
///   and, when kept, its [`ENCRYPTED_CONTENT`]; other thinking is dropped.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use oxiscope_message::Msg;
/// use oxiscope_model::Formatter;
/// use oxiscope_providers::openai_response::OpenAiResponseFormatter;
///
/// let msgs = [Msg::system("system", "Be brief.")?, Msg::user("user", "Hi!")?];
/// let input = OpenAiResponseFormatter::new().format(&msgs).await?;
/// assert_eq!(input[1]["content"][0]["type"], "input_text");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiResponseFormatter {
    pub(crate) media: MediaLoader,
    pub(crate) media_types: Vec<String>,
}

impl Default for OpenAiResponseFormatter {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenAiResponseFormatter {
    /// A formatter accepting images and PDFs, reading media as the default
    /// [`MediaPolicy`] allows.
    #[must_use]
    pub fn new() -> Self {
        Self {
            media: MediaLoader::default(),
            media_types: default_media_types(),
        }
    }

    /// Replaces the accepted input media types (`image/*`, `application/pdf`).
    #[must_use]
    pub fn with_media_types(mut self, media_types: Vec<String>) -> Self {
        self.media_types = media_types;
        self
    }

    /// Uses `http` for reading remote media (PDFs given by URL are passed
    /// on, so this is rarely needed).
    #[must_use]
    pub fn with_http_client(mut self, http: HttpClient) -> Self {
        self.media.http = Some(http);
        self
    }

    /// Reads `file://` media as `policy` allows (default: any local file).
    #[must_use]
    pub fn with_media_policy(mut self, policy: MediaPolicy) -> Self {
        self.media.policy = policy;
        self
    }

    /// Caps each inlined file at `max_bytes` and each download at `timeout`.
    #[must_use]
    pub fn with_media_limits(mut self, max_bytes: u64, timeout: Duration) -> Self {
        self.media.policy = self.media.policy.with_limits(max_bytes, timeout);
        self
    }

    /// Appends the input items of one message.
    pub(crate) async fn message(&self, msg: &Msg, out: &mut Vec<Value>) -> Result<(), ModelError> {
        let mut pending = Pending::new(msg.role);
        for block in &msg.content {
            match block {
                ContentBlock::Text(t) => pending.parts.push(json!({
                    "type": pending.text_type(),
                    "text": t.text,
                })),
                ContentBlock::Data(d) => pending.parts.push(self.data(d).await?),
                ContentBlock::Hint(hint) => {
                    pending.flush(out);
                    let content = self.rich_parts(&hint.hint).await?;
                    if !content.is_empty() {
                        out.push(json!({"role": "user", "content": content}));
                    }
                }
                ContentBlock::Thinking(t) => {
                    if let Some(item) = reasoning_item(t) {
                        if !t.thinking.is_empty() {
                            pending.flush_parts(out);
                        }
                        out.push(item);
                    }
                }
                ContentBlock::ToolCall(call) => pending.calls.push(json!({
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": call.input,
                })),
                ContentBlock::ToolResult(result) => {
                    pending.flush(out);
                    out.push(json!({
                        "type": "function_call_output",
                        "call_id": result.id,
                        "output": self.output(&result.output).await?,
                    }));
                }
            }
        }
        pending.flush(out);
        Ok(())
    }

    /// A tool's output: its text, or parts when it returned media.
    async fn output(&self, output: &RichContent) -> Result<Value, ModelError> {
        match output {
            RichContent::Blocks(blocks)
                if blocks.iter().any(|b| matches!(b, MediaBlock::Data(_))) =>
            {
                Ok(Value::Array(self.rich_parts(output).await?))
            }
            other => Ok(Value::String(other.text("\n"))),
        }
    }

    /// `input_text` and media parts of a hint or a tool output.
    async fn rich_parts(&self, rich: &RichContent) -> Result<Vec<Value>, ModelError> {
        match rich {
            RichContent::Text(t) => Ok(vec![input_text(t)]),
            RichContent::Blocks(blocks) => {
                let mut parts = Vec::with_capacity(blocks.len());
                for block in blocks {
                    parts.push(match block {
                        MediaBlock::Text(t) => input_text(&t.text),
                        MediaBlock::Data(d) => self.data(d).await?,
                    });
                }
                Ok(parts)
            }
        }
    }

    /// The part of a data block: `input_image`, `input_file`, or a note in
    /// text when the API cannot read the type (nothing vanishes silently).
    pub(crate) async fn data(&self, block: &DataBlock) -> Result<Value, ModelError> {
        let media_type = block.source.media_type();
        if !supported(&self.media_types, media_type) {
            return Ok(input_text(&unsupported_note(&block.id, media_type)));
        }
        let url = match &block.source {
            DataSource::Base64(src) => data_url(media_type, &src.data),
            DataSource::Url(src) if src.url.starts_with("file:") => {
                let bytes = self.media.fetch(&src.url).await?;
                data_url(media_type, &BASE64.encode(bytes))
            }
            DataSource::Url(src) => src.url.clone(),
        };
        if major(media_type) == "image" {
            return Ok(json!({"type": "input_image", "image_url": url}));
        }
        if url.starts_with("http://") || url.starts_with("https://") {
            return Ok(json!({"type": "input_file", "file_url": url}));
        }
        Ok(json!({
            "type": "input_file",
            "filename": file_name(block),
            "file_data": url,
        }))
    }
}

impl Formatter for OpenAiResponseFormatter {
    fn supported_input_media_types(&self) -> &[String] {
        &self.media_types
    }

    fn format<'a>(&'a self, msgs: &'a [Msg]) -> BoxFuture<'a, Result<Vec<Value>, ModelError>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(msgs.len());
            for msg in msgs {
                self.message(msg, &mut out).await?;
            }
            Ok(out)
        })
    }
}

/// The content parts and function calls of a message not yet written.
struct Pending {
    role: Role,
    parts: Vec<Value>,
    calls: Vec<Value>,
}

impl Pending {
    fn new(role: Role) -> Self {
        Self {
            role,
            parts: Vec::new(),
            calls: Vec::new(),
        }
    }

    fn text_type(&self) -> &'static str {
        if self.role == Role::Assistant {
            "output_text"
        } else {
            "input_text"
        }
    }

    /// Writes the content parts as a message of the role.
    fn flush_parts(&mut self, out: &mut Vec<Value>) {
        if !self.parts.is_empty() {
            let content = std::mem::take(&mut self.parts);
            out.push(json!({"role": self.role.as_str(), "content": content}));
        }
    }

    /// Writes the content parts, then the function calls.
    fn flush(&mut self, out: &mut Vec<Value>) {
        self.flush_parts(out);
        out.append(&mut self.calls);
    }
}

/// The `reasoning` item a thinking block came from, or `None` for thinking
/// of another origin.
fn reasoning_item(block: &ThinkingBlock) -> Option<Value> {
    let id = block
        .extra
        .get(REASONING_ITEM_ID)
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())?;
    let summary: Vec<Value> = if block.thinking.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "summary_text", "text": block.thinking})]
    };
    let mut item = Map::new();
    item.insert("type".into(), "reasoning".into());
    item.insert("id".into(), id.into());
    item.insert("summary".into(), summary.into());
    item.insert("content".into(), Value::Array(Vec::new()));
    if let Some(encrypted) = block
        .extra
        .get(ENCRYPTED_CONTENT)
        .and_then(Value::as_str)
        .filter(|e| !e.is_empty())
    {
        item.insert(ENCRYPTED_CONTENT.into(), encrypted.into());
    }
    Some(Value::Object(item))
}

/// An `input_text` part.
pub(crate) fn input_text(text: &str) -> Value {
    json!({"type": "input_text", "text": text})
}

fn data_url(media_type: &str, b64: &str) -> String {
    format!("data:{media_type};base64,{b64}")
}

/// `image` for `image/png`.
fn major(media_type: &str) -> &str {
    media_type.split('/').next().unwrap_or(media_type)
}

/// Whether `media_type` matches one of `patterns` (`image/*`, `application/pdf`).
fn supported(patterns: &[String], media_type: &str) -> bool {
    patterns.iter().any(|p| match p.strip_suffix("/*") {
        Some(m) => major(media_type).eq_ignore_ascii_case(m),
        None => p.eq_ignore_ascii_case(media_type),
    })
}

fn unsupported_note(id: &str, media_type: &str) -> String {
    format!(
        "<system-reminder>A(n) {} file ({media_type}) with the identifier [{id}] was \
         omitted: this model cannot read it.</system-reminder>",
        major(media_type)
    )
}

/// The file name sent with an inline file.
fn file_name(block: &DataBlock) -> String {
    block.name.clone().unwrap_or_else(|| {
        let ext = match block.source.media_type().split_once('/') {
            Some((_, "pdf")) => "pdf",
            Some((_, sub)) if !sub.is_empty() => sub,
            _ => "bin",
        };
        format!("{}.{ext}", block.id)
    })
}
