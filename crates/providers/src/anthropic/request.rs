//! The body of `POST /v1/messages`.

use oxiscope_model::{ToolChoice, ToolChoiceMode, ToolSchema};
use serde_json::{Map, Value, json};

use super::params::AnthropicParameters;

/// What goes into one request besides the formatted messages.
#[derive(Debug)]
pub(crate) struct RequestParts<'a> {
    pub(crate) model: &'a str,
    pub(crate) max_tokens: u64,
    pub(crate) params: &'a AnthropicParameters,
    pub(crate) tools: &'a [ToolSchema],
    pub(crate) tool_choice: Option<&'a ToolChoice>,
    pub(crate) stream: bool,
}

/// Builds the request body from the formatter's output: system messages
/// move into `system`, the rest stay in `messages`.
pub(crate) fn body(parts: &RequestParts<'_>, formatted: Vec<Value>) -> Value {
    Value::Object(body_map(parts, formatted))
}

/// [`body`] as a map, keys in the order they are encoded.
pub(crate) fn body_map(parts: &RequestParts<'_>, formatted: Vec<Value>) -> Map<String, Value> {
    let mut system: Vec<Value> = Vec::new();
    let mut messages = Vec::with_capacity(formatted.len());
    for msg in formatted {
        if msg.get("role").and_then(Value::as_str) == Some("system") {
            match msg.get("content") {
                Some(Value::Array(blocks)) => system.extend(blocks.iter().cloned()),
                Some(Value::String(text)) => system.push(json!({"type": "text", "text": text})),
                _ => {}
            }
        } else {
            messages.push(msg);
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), parts.model.into());
    body.insert("max_tokens".into(), parts.max_tokens.into());
    if !system.is_empty() {
        body.insert("system".into(), system.into());
    }
    body.insert("messages".into(), messages.into());
    let tools = tools(parts.tools, parts.tool_choice);
    if !tools.is_empty() {
        body.insert("tools".into(), tools.into());
        if let Some(choice) = parts.tool_choice {
            body.insert("tool_choice".into(), tool_choice(choice));
        }
    }
    if let Some(thinking) = parts.params.thinking() {
        body.insert("thinking".into(), thinking);
    }
    if let Some(effort) = &parts.params.reasoning_effort {
        body.insert("output_config".into(), json!({"effort": effort}));
    }
    if let Some(t) = parts.params.temperature {
        body.insert("temperature".into(), t.into());
    }
    if let Some(p) = parts.params.top_p {
        body.insert("top_p".into(), p.into());
    }
    body.insert("stream".into(), parts.stream.into());
    body
}

/// The tools in Anthropic's shape, restricted to `choice.tools` when set.
fn tools(tools: &[ToolSchema], choice: Option<&ToolChoice>) -> Vec<Value> {
    let allowed = choice.and_then(|c| c.tools.as_ref());
    tools
        .iter()
        .filter(|t| allowed.is_none_or(|names| names.contains(&t.function.name)))
        .map(|t| {
            json!({
                "name": t.function.name,
                "description": t.function.description,
                "input_schema": t.function.parameters,
            })
        })
        .collect()
}

/// `auto`, `any` (required), `none`, or one named tool. Tools stay in the
/// request with `none`, so the tool calls already in the conversation
/// remain valid.
fn tool_choice(choice: &ToolChoice) -> Value {
    match &choice.mode {
        ToolChoiceMode::Auto => json!({"type": "auto"}),
        ToolChoiceMode::None => json!({"type": "none"}),
        ToolChoiceMode::Required => json!({"type": "any"}),
        ToolChoiceMode::Tool(name) => json!({"type": "tool", "name": name}),
    }
}
