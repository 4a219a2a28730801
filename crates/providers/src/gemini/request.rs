//! The body of `generateContent` / `streamGenerateContent`.

use oxiscope_model::{ToolChoice, ToolChoiceMode, ToolSchema};
use serde_json::{Map, Value, json};

use super::params::GeminiParameters;
use super::schema::sanitize_schema;

/// What goes into one request besides the formatted contents.
#[derive(Debug)]
pub(crate) struct RequestParts<'a> {
    /// The text of the leading system messages.
    pub(crate) system: Option<String>,
    pub(crate) params: &'a GeminiParameters,
    pub(crate) tools: &'a [ToolSchema],
    pub(crate) tool_choice: Option<&'a ToolChoice>,
}

/// Builds the request body: `contents`, the `systemInstruction`, the
/// function declarations with their choice, and the `generationConfig`.
pub(crate) fn body(parts: &RequestParts<'_>, contents: Vec<Value>) -> Value {
    let mut body = Map::new();
    body.insert("contents".into(), contents.into());
    if let Some(system) = &parts.system {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}]}),
        );
    }
    let declarations = declarations(parts.tools, parts.tool_choice);
    if !declarations.is_empty() {
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    if let Some(choice) = parts.tool_choice {
        body.insert("toolConfig".into(), tool_config(choice));
    }
    body.insert("generationConfig".into(), parts.params.generation_config());
    Value::Object(body)
}

/// The function declarations, restricted to `choice.tools` when set, with
/// their parameter schemas rewritten into Gemini's subset.
fn declarations(tools: &[ToolSchema], choice: Option<&ToolChoice>) -> Vec<Value> {
    let allowed = choice.and_then(|c| c.tools.as_ref());
    tools
        .iter()
        .filter(|t| allowed.is_none_or(|names| names.contains(&t.function.name)))
        .map(|t| {
            let mut decl = Map::new();
            decl.insert("name".into(), t.function.name.clone().into());
            decl.insert("description".into(), t.function.description.clone().into());
            let parameters = sanitize_schema(&t.function.parameters);
            // A tool without arguments declares none (an empty object
            // schema is refused).
            if parameters
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty())
            {
                decl.insert("parameters".into(), parameters);
            }
            Value::Object(decl)
        })
        .collect()
}

/// `AUTO`, `NONE`, `ANY` (required), or `ANY` limited to one named tool.
fn tool_config(choice: &ToolChoice) -> Value {
    let config = match &choice.mode {
        ToolChoiceMode::Auto => json!({"mode": "AUTO"}),
        ToolChoiceMode::None => json!({"mode": "NONE"}),
        ToolChoiceMode::Required => json!({"mode": "ANY"}),
        ToolChoiceMode::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
    };
    json!({"functionCallingConfig": config})
}
