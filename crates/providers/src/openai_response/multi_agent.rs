//! The multi-agent formatter: several named speakers folded into one
//! conversation for the Responses API.

use std::time::Duration;

use futures_util::future::BoxFuture;
use oxiscope_http::HttpClient;
use oxiscope_message::{BlockKind, ContentBlock, Msg, Role};
use oxiscope_model::{Formatter, ModelError};
use serde_json::{Value, json};

use super::format::{OpenAiResponseFormatter, input_text};
use crate::MediaPolicy;

/// The default text that introduces the folded conversation.
pub const DEFAULT_HISTORY_PROMPT: &str = "# Conversation History\nThe content between \
     <history></history> tags contains your conversation history\n";

/// Formats a conversation between several speakers as Responses API
/// `input`, exactly as AgentScope's `OpenAIResponseMultiAgentFormatter`
/// does.
///
/// A leading system message becomes `{"role": "system", "content": text}`.
/// Each run of messages without tool calls or results is folded into one
/// user message: a `<history>` transcript with one `name: text` line per
/// text block (the first run opens with the history prompt), followed by
/// the run's images and files. Messages with tool calls or results are
/// formatted as by [`OpenAiResponseFormatter`], so the tool protocol stays
/// native. Hints and thinking of folded messages are left out.
#[derive(Debug, Clone)]
pub struct OpenAiResponseMultiAgentFormatter {
    chat: OpenAiResponseFormatter,
    history_prompt: String,
}

impl Default for OpenAiResponseMultiAgentFormatter {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenAiResponseMultiAgentFormatter {
    /// A formatter with the default history prompt and media settings.
    #[must_use]
    pub fn new() -> Self {
        Self {
            chat: OpenAiResponseFormatter::new(),
            history_prompt: DEFAULT_HISTORY_PROMPT.to_owned(),
        }
    }

    /// Replaces the text that introduces the folded conversation.
    #[must_use]
    pub fn with_history_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.history_prompt = prompt.into();
        self
    }

    /// Uses `http` for reading remote media.
    #[must_use]
    pub fn with_http_client(mut self, http: HttpClient) -> Self {
        self.chat = self.chat.with_http_client(http);
        self
    }

    /// Reads media as `policy` allows.
    #[must_use]
    pub fn with_media_policy(mut self, policy: MediaPolicy) -> Self {
        self.chat = self.chat.with_media_policy(policy);
        self
    }

    /// Caps each inlined file at `max_bytes` and each download at `timeout`.
    #[must_use]
    pub fn with_media_limits(mut self, max_bytes: u64, timeout: Duration) -> Self {
        self.chat = self.chat.with_media_limits(max_bytes, timeout);
        self
    }

    /// The folded user message of one run of speakers, if it says anything.
    async fn speakers(&self, msgs: &[&Msg], first: bool) -> Result<Option<Value>, ModelError> {
        let mut lines: Vec<String> = Vec::new();
        let mut media: Vec<Value> = Vec::new();
        for msg in msgs {
            for block in &msg.content {
                match block {
                    ContentBlock::Text(t) => lines.push(format!("{}: {}", msg.name, t.text)),
                    ContentBlock::Data(d) => media.push(self.chat.data(d).await?),
                    _ => {}
                }
            }
        }
        if lines.is_empty() && media.is_empty() {
            return Ok(None);
        }
        let prompt = if first {
            self.history_prompt.as_str()
        } else {
            ""
        };
        let wrapped = format!("{prompt}<history>\n{}\n</history>", lines.join("\n"));
        let mut content = vec![input_text(&wrapped)];
        content.append(&mut media);
        Ok(Some(json!({"role": "user", "content": content})))
    }
}

fn uses_tools(msg: &Msg) -> bool {
    msg.has_blocks(BlockKind::ToolCall) || msg.has_blocks(BlockKind::ToolResult)
}

impl Formatter for OpenAiResponseMultiAgentFormatter {
    fn supported_input_media_types(&self) -> &[String] {
        &self.chat.media_types
    }

    fn format<'a>(&'a self, msgs: &'a [Msg]) -> BoxFuture<'a, Result<Vec<Value>, ModelError>> {
        Box::pin(async move {
            let mut out = Vec::new();
            let mut rest = msgs;
            if let Some((head, tail)) = msgs.split_first()
                && head.role == Role::System
            {
                out.push(json!({"role": "system", "content": head.text("\n")}));
                rest = tail;
            }
            let mut first = true;
            let mut run: Vec<&Msg> = Vec::new();
            for msg in rest {
                if uses_tools(msg) {
                    if !run.is_empty() {
                        out.extend(self.speakers(&run, first).await?);
                        first = false;
                        run.clear();
                    }
                    self.chat.message(msg, &mut out).await?;
                } else {
                    run.push(msg);
                }
            }
            if !run.is_empty() {
                out.extend(self.speakers(&run, first).await?);
            }
            Ok(out)
        })
    }
}
