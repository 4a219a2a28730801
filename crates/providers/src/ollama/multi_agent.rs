//! The multi-agent formatter: several named speakers folded into one
//! conversation for an Ollama model.

use oxiscope_message::{ContentBlock, Msg};
use oxiscope_model::ModelError;
use serde_json::Value;

use super::format::{Gathered, OllamaChatFormatter};
use crate::common::formatter::multi_agent_formatter;
use crate::common::history;

pub use crate::common::formatter::DEFAULT_HISTORY_PROMPT;

multi_agent_formatter! {
    /// Formats a conversation between several speakers for Ollama.
    ///
    /// Consecutive messages of speakers are folded into one user message, each
    /// speaker's name on its own line before what they said; the first such
    /// message starts with the history prompt and wraps the lines in
    /// `<history>` tags, and their images go in its `images`. Messages with tool
    /// calls or results, and system messages, are formatted as by
    /// [`OllamaChatFormatter`]. Hints and thinking of folded messages are left
    /// out.
    pub struct OllamaMultiAgentFormatter(OllamaChatFormatter, parts);
}

impl OllamaMultiAgentFormatter {
    /// The folded user message of one run of speakers.
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
