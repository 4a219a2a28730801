//! The multi-agent formatter: several named speakers folded into one
//! conversation for an Ollama model.

use std::time::Duration;

use futures_util::future::BoxFuture;
use oxiscope_http::HttpClient;
use oxiscope_message::{ContentBlock, Msg};
use oxiscope_model::{Formatter, ModelError};
use serde_json::Value;

use super::format::{Gathered, OllamaChatFormatter};
use super::history::{self, Group};

/// The default text that introduces the folded conversation.
pub const DEFAULT_HISTORY_PROMPT: &str = "# Conversation History\nThe content between \
     <history></history> tags contains your conversation history\n";

/// Formats a conversation between several speakers for Ollama.
///
/// Consecutive messages of speakers are folded into one user message, each
/// speaker's name on its own line before what they said; the first such
/// message starts with the history prompt and wraps the lines in
/// `<history>` tags, and their images go in its `images`. Messages with tool
/// calls or results, and system messages, are formatted as by
/// [`OllamaChatFormatter`]. Hints and thinking of folded messages are left
/// out.
#[derive(Debug, Clone)]
pub struct OllamaMultiAgentFormatter {
    chat: OllamaChatFormatter,
    history_prompt: String,
}

impl Default for OllamaMultiAgentFormatter {
    fn default() -> Self {
        Self::new()
    }
}

impl OllamaMultiAgentFormatter {
    /// A formatter with the default history prompt and media settings.
    #[must_use]
    pub fn new() -> Self {
        Self {
            chat: OllamaChatFormatter::new(),
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

    async fn speakers(&self, msgs: &[&Msg], first: bool) -> Result<Value, ModelError> {
        let parts = self.chat.parts();
        let mut gathered = Gathered::default();
        for msg in msgs {
            for block in &msg.content {
                if let ContentBlock::Data(data) = block {
                    parts.data(data, &mut gathered).await?;
                }
            }
            let said = history::spoken_texts(msg);
            if !said.is_empty() {
                gathered
                    .lines
                    .push(format!("{}:\n{}", msg.name, said.join("\n")));
            }
        }
        if first {
            let body = gathered.lines.join("\n");
            gathered.lines = vec![format!(
                "{}<history>\n{body}\n</history>",
                self.history_prompt
            )];
        }
        Ok(gathered.message("user"))
    }
}

impl Formatter for OllamaMultiAgentFormatter {
    fn supported_input_media_types(&self) -> &[String] {
        self.chat.supported_input_media_types()
    }

    fn format<'a>(&'a self, msgs: &'a [Msg]) -> BoxFuture<'a, Result<Vec<Value>, ModelError>> {
        Box::pin(async move {
            let parts = self.chat.parts();
            let mut out = Vec::new();
            let mut first = true;
            for group in history::group(msgs) {
                match group {
                    Group::System(msg) | Group::Tools(msg) => {
                        parts.chat_message(msg, &mut out).await?;
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
