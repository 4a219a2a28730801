//! The body of `POST {base}/responses`.

use oxiscope_model::{ToolChoice, ToolChoiceMode, ToolSchema};
use serde_json::{Map, Value, json};

use super::format::ENCRYPTED_CONTENT;
use super::params::OpenAiResponseParameters;

/// What goes into one request besides the formatted input.
#[derive(Debug)]
pub(crate) struct RequestParts<'a> {
    pub(crate) model: &'a str,
    pub(crate) instructions: Option<&'a str>,
    pub(crate) params: &'a OpenAiResponseParameters,
    pub(crate) tools: &'a [ToolSchema],
    pub(crate) tool_choice: Option<&'a ToolChoice>,
    pub(crate) stream: bool,
    /// Whether the provider keeps the response (`store`).
    pub(crate) store: bool,
    /// Whether reasoning items come back with their encrypted content.
    pub(crate) encrypted_reasoning: bool,
}

/// Builds the request body from the formatter's items.
///
/// Without `store`, the provider keeps nothing, so a `reasoning` item that
/// has only an id (from a call that stored it) cannot be found and is left
/// out; items with their encrypted content go back whole.
pub(crate) fn body(parts: &RequestParts<'_>, input: Vec<Value>) -> Value {
    let input: Vec<Value> = if parts.store {
        input
    } else {
        input.into_iter().filter(replayable).collect()
    };
    let mut body = Map::new();
    body.insert("model".into(), parts.model.into());
    if let Some(instructions) = parts.instructions {
        body.insert("instructions".into(), instructions.into());
    }
    body.insert("input".into(), input.into());
    if !parts.tools.is_empty() {
        body.insert("tools".into(), tools(parts.tools).into());
        if let Some(choice) = parts.tool_choice {
            body.insert("tool_choice".into(), tool_choice(choice));
        }
    }
    if let Some(max) = parts.params.max_tokens {
        body.insert("max_output_tokens".into(), max.into());
    }
    if let Some(t) = parts.params.temperature {
        body.insert("temperature".into(), t.into());
    }
    if let Some(reasoning) = parts.params.reasoning() {
        body.insert("reasoning".into(), reasoning);
    }
    body.insert("store".into(), parts.store.into());
    if parts.encrypted_reasoning && !parts.store {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    body.insert("stream".into(), parts.stream.into());
    Value::Object(body)
}

/// Whether an input item can be sent without stored state.
fn replayable(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str) != Some("reasoning")
        || item
            .get(ENCRYPTED_CONTENT)
            .and_then(Value::as_str)
            .is_some_and(|e| !e.is_empty())
}

/// Every tool, in the Responses shape (the list is sent whole so the
/// provider's prompt cache holds; a restriction goes into `tool_choice`).
fn tools(tools: &[ToolSchema]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            json!({
                "type": "function",
                "name": t.function.name,
                "description": t.function.description,
                "parameters": t.function.parameters,
            })
        })
        .collect()
}

/// `auto`, `none`, `required`, one named function, or `allowed_tools` when
/// the choice restricts the tools.
fn tool_choice(choice: &ToolChoice) -> Value {
    let mode = match &choice.mode {
        ToolChoiceMode::Tool(name) => return json!({"type": "function", "name": name}),
        ToolChoiceMode::Auto => "auto",
        ToolChoiceMode::None => "none",
        ToolChoiceMode::Required => "required",
    };
    match &choice.tools {
        Some(names) => json!({
            "type": "allowed_tools",
            "mode": mode,
            "tools": names
                .iter()
                .map(|n| json!({"type": "function", "name": n}))
                .collect::<Vec<_>>(),
        }),
        None => mode.into(),
    }
}
