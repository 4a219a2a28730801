//! The JSON body of a Chat Completions request.

use oxiscope_model::{ToolChoice, ToolChoiceMode, ToolSchema};
use serde_json::{Map, Value, json};

/// Keys the caller's extra parameters may not override.
const RESERVED: &[&str] = &[
    "model",
    "messages",
    "stream",
    "stream_options",
    "tools",
    "tool_choice",
];

/// What goes into one request body.
#[derive(Debug)]
pub(crate) struct Body<'a> {
    pub(crate) model: &'a str,
    pub(crate) messages: Vec<Value>,
    pub(crate) tools: &'a [ToolSchema],
    pub(crate) tool_choice: Option<&'a ToolChoice>,
    pub(crate) stream: bool,
    pub(crate) parameters: &'a Map<String, Value>,
}

impl Body<'_> {
    /// The body: `model`, `messages`, the extra parameters, the streaming
    /// options, `tools` (restricted to the choice's tool list when it has
    /// one) and `tool_choice`.
    pub(crate) fn into_json(self) -> Value {
        Value::Object(self.into_map())
    }

    /// The body as a map, keys in the order they are encoded.
    pub(crate) fn into_map(self) -> Map<String, Value> {
        let mut body = Map::new();
        body.insert("model".into(), self.model.into());
        body.insert("messages".into(), Value::Array(self.messages));
        let allowed = self.tool_choice.and_then(|c| c.tools.as_ref());
        let tools: Vec<Value> = self
            .tools
            .iter()
            .filter(|t| allowed.is_none_or(|names| names.contains(&t.function.name)))
            .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
            .collect();
        let has_tools = !tools.is_empty();
        for (key, value) in self.parameters {
            // The API refuses `parallel_tool_calls` in a call without tools.
            let toolless = key == "parallel_tool_calls" && !has_tools;
            if !RESERVED.contains(&key.as_str()) && !toolless {
                body.insert(key.clone(), value.clone());
            }
        }
        if self.stream {
            body.insert("stream".into(), true.into());
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        if has_tools {
            body.insert("tools".into(), Value::Array(tools));
            if let Some(choice) = self.tool_choice {
                body.insert("tool_choice".into(), tool_choice(&choice.mode));
            }
        }
        body
    }
}

/// `auto` / `none` / `required`, or the named function.
pub(crate) fn tool_choice(mode: &ToolChoiceMode) -> Value {
    match mode {
        ToolChoiceMode::Auto => "auto".into(),
        ToolChoiceMode::None => "none".into(),
        ToolChoiceMode::Required => "required".into(),
        ToolChoiceMode::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}
