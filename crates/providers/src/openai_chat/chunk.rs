//! The JSON shapes of Chat Completions responses, and their decoding into
//! [`ModelDelta`]s. Shared by streamed chunks and whole responses.

use oxiscope_model::{ChatUsage, ModelDelta};
use serde::Deserialize;
use serde_json::{Map, Value};

/// A streamed `chat.completion.chunk`, or a whole `chat.completion`.
#[derive(Debug, Deserialize)]
pub(crate) struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// Some servers report a failure inside a 200 stream.
    #[serde(default)]
    pub(crate) error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    index: usize,
    /// Streamed increments.
    #[serde(default)]
    delta: Option<Message>,
    /// A whole response's message.
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
    /// DeepSeek, Qwen, Kimi and vLLM (older) put reasoning here.
    #[serde(default)]
    reasoning_content: Option<String>,
    /// vLLM (newer) and some gateways use this name instead.
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Debug, Deserialize)]
struct WireToolCall {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Debug, Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl Completion {
    /// Appends this completion's increments to `out` (only the first
    /// choice: requests ask for one). Returns whether a choice finished.
    pub(crate) fn decode_into(self, out: &mut impl Extend<ModelDelta>) -> bool {
        let mut finished = false;
        if let Some(choice) = self.choices.into_iter().find(|c| c.index == 0) {
            finished = choice.finish_reason.is_some();
            if let Some(message) = choice.delta.or(choice.message) {
                message.decode_into(out);
            }
        }
        if let Some(usage) = self.usage {
            out.extend([ModelDelta::Usage(usage.into_chat_usage())]);
        }
        finished
    }
}

impl Message {
    fn decode_into(self, out: &mut impl Extend<ModelDelta>) {
        if let Some(thinking) = self.reasoning_content.or(self.reasoning)
            && !thinking.is_empty()
        {
            out.extend([ModelDelta::Thinking(thinking)]);
        }
        if let Some(text) = self.content
            && !text.is_empty()
        {
            out.extend([ModelDelta::Text(text)]);
        }
        for (position, call) in self.tool_calls.unwrap_or_default().into_iter().enumerate() {
            let (name, arguments) = match call.function {
                Some(f) => (f.name, f.arguments.unwrap_or_default()),
                None => (None, String::new()),
            };
            out.extend([ModelDelta::ToolCall {
                index: call.index.unwrap_or(position),
                id: call.id,
                name,
                arguments,
            }]);
        }
    }
}

impl WireUsage {
    fn into_chat_usage(self) -> ChatUsage {
        let mut usage = ChatUsage::tokens(self.prompt_tokens, self.completion_tokens);
        usage.cache_input_tokens = self
            .prompt_tokens_details
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0);
        usage.metadata = self.completion_tokens_details.filter(|d| !d.is_empty());
        usage
    }
}

/// The message of an `{"error": {...}}` object, or the object as text.
pub(crate) fn error_message(error: &Value) -> String {
    error
        .get("message")
        .and_then(Value::as_str)
        .map_or_else(|| error.to_string(), str::to_owned)
}
