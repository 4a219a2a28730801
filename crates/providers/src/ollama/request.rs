//! The body of `POST /api/chat`.

use oxiscope_model::{ToolChoice, ToolChoiceMode, ToolSchema};
use serde_json::{Map, Value, json};

use super::params::OllamaParameters;

/// Builds the request body. Ollama has no `tool_choice`: `none` sends no
/// tools, a named tool sends only that one, `required` cannot be enforced
/// and behaves as `auto`.
pub(crate) fn body(
    model: &str,
    params: &OllamaParameters,
    messages: Vec<Value>,
    tools: &[ToolSchema],
    choice: Option<&ToolChoice>,
    stream: bool,
) -> Value {
    Value::Object(body_map(model, params, messages, tools, choice, stream))
}

/// [`body`] as a map, keys in the order they are encoded.
pub(crate) fn body_map(
    model: &str,
    params: &OllamaParameters,
    messages: Vec<Value>,
    tools: &[ToolSchema],
    choice: Option<&ToolChoice>,
    stream: bool,
) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("messages".into(), messages.into());
    let tools: Vec<Value> = tools
        .iter()
        .filter(|t| offered(&t.function.name, choice))
        .map(|t| json!({"type": "function", "function": t.function}))
        .collect();
    if !tools.is_empty() {
        body.insert("tools".into(), tools.into());
    }
    if let Some(think) = params.thinking_enable {
        body.insert("think".into(), think.into());
    }
    let options = params.options();
    if !options.is_empty() {
        body.insert("options".into(), options.into());
    }
    if let Some(keep_alive) = &params.keep_alive {
        body.insert("keep_alive".into(), keep_alive.clone());
    }
    body.insert("stream".into(), stream.into());
    body
}

fn offered(name: &str, choice: Option<&ToolChoice>) -> bool {
    let Some(choice) = choice else {
        return true;
    };
    if choice
        .tools
        .as_ref()
        .is_some_and(|names| !names.iter().any(|n| n == name))
    {
        return false;
    }
    match &choice.mode {
        ToolChoiceMode::None => false,
        ToolChoiceMode::Tool(only) => only == name,
        ToolChoiceMode::Auto | ToolChoiceMode::Required => true,
    }
}
