//! The multi-agent formatter: several named speakers folded into one
//! conversation for Gemini.

use futures_util::future::BoxFuture;
use oxiscope_message::{BlockKind, ContentBlock, Msg, Role};
use oxiscope_model::{Formatter, ModelError};
use serde_json::{Value, json};

use super::format::{GeminiChatFormatter, Parts, text};

pub use crate::common::formatter::DEFAULT_HISTORY_PROMPT;

/// Formats a conversation between several speakers for Gemini.
///
/// A leading system message becomes a user message with its text. Runs of
/// messages without tool calls or results are folded into one user
/// message: every text block is a line prefixed with its speaker's name
/// (`Alice: ...`), media follow the lines said before them, and the whole
/// run is wrapped in `<history>` tags, the first run also opened by the
/// history prompt. Thinking and hints of folded messages are left out.
/// Messages with tool calls or results are formatted as by
/// [`GeminiChatFormatter`], so the function-calling protocol stays native.
#[derive(Debug, Clone)]
pub struct GeminiMultiAgentFormatter {
    chat: GeminiChatFormatter,
    history_prompt: String,
}

impl Default for GeminiMultiAgentFormatter {
    fn default() -> Self {
        Self::new()
    }
}

impl GeminiMultiAgentFormatter {
    /// A formatter with the default history prompt and media settings.
    #[must_use]
    pub fn new() -> Self {
        Self {
            chat: GeminiChatFormatter::new(),
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
    pub fn with_http_client(mut self, http: oxiscope_http::HttpClient) -> Self {
        self.chat = self.chat.with_http_client(http);
        self
    }

    /// Reads and downloads media as `policy` allows.
    #[must_use]
    pub fn with_media_policy(mut self, policy: crate::MediaPolicy) -> Self {
        self.chat = self.chat.with_media_policy(policy);
        self
    }

    /// Replaces the accepted input media types.
    #[must_use]
    pub fn with_media_types(mut self, media_types: Vec<String>) -> Self {
        self.chat = self.chat.with_media_types(media_types);
        self
    }

    async fn format_all(&self, msgs: &[Msg]) -> Result<Vec<Value>, ModelError> {
        let view = self.chat.parts();
        let mut out = Vec::new();
        let mut rest = msgs;
        if let Some((first, tail)) = msgs.split_first()
            && first.role == Role::System
        {
            out.push(json!({"role": "user", "parts": [text(&first.text("\n"))]}));
            rest = tail;
        }
        let mut first_run = true;
        let mut run: Vec<&Msg> = Vec::new();
        for msg in rest {
            if msg.has_blocks(BlockKind::ToolCall) || msg.has_blocks(BlockKind::ToolResult) {
                if !run.is_empty() {
                    self.speakers(view, &std::mem::take(&mut run), first_run, &mut out)
                        .await?;
                    first_run = false;
                }
                view.chat_message(msg, &mut out).await?;
            } else {
                run.push(msg);
            }
        }
        if !run.is_empty() {
            self.speakers(view, &run, first_run, &mut out).await?;
        }
        Ok(out)
    }

    /// The folded user message of one run of speakers (none when the run
    /// said nothing).
    async fn speakers(
        &self,
        view: Parts<'_>,
        msgs: &[&Msg],
        first: bool,
        out: &mut Vec<Value>,
    ) -> Result<(), ModelError> {
        let mut parts: Vec<Value> = Vec::new();
        let mut lines: Vec<String> = Vec::new();
        for msg in msgs {
            for block in &msg.content {
                match block {
                    ContentBlock::Text(t) => lines.push(format!("{}: {}", msg.name, t.text)),
                    ContentBlock::Data(d) => {
                        if !lines.is_empty() {
                            parts.push(text(&std::mem::take(&mut lines).join("\n")));
                        }
                        parts.push(view.data(d).await?);
                    }
                    _ => {}
                }
            }
        }
        if !lines.is_empty() {
            parts.push(text(&lines.join("\n")));
        }
        if parts.is_empty() {
            return Ok(());
        }
        let prompt = if first {
            self.history_prompt.as_str()
        } else {
            ""
        };
        let opening = format!("{prompt}<history>\n");
        match parts.first_mut().and_then(nonempty_text) {
            Some(first_text) => first_text.insert_str(0, &opening),
            None => parts.insert(0, text(&opening)),
        }
        match parts.last_mut().and_then(nonempty_text) {
            Some(last_text) => last_text.push_str("\n</history>"),
            None => parts.push(text("</history>")),
        }
        out.push(json!({"role": "user", "parts": parts}));
        Ok(())
    }
}

impl Formatter for GeminiMultiAgentFormatter {
    fn supported_input_media_types(&self) -> &[String] {
        self.chat.supported_input_media_types()
    }

    fn format<'a>(&'a self, msgs: &'a [Msg]) -> BoxFuture<'a, Result<Vec<Value>, ModelError>> {
        Box::pin(self.format_all(msgs))
    }
}

/// The text of a text part with something in it, for editing in place.
fn nonempty_text(part: &mut Value) -> Option<&mut String> {
    match part.get_mut("text")? {
        Value::String(s) if !s.is_empty() => Some(s),
        _ => None,
    }
}
