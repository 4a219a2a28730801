//! `generate_structured_output`: a forced tool call whose arguments are the
//! answer, validated and repaired, retried with feedback.

use futures_util::StreamExt;
use oxiscope_message::{
    ContentBlock, FinishedReason, Msg, ToolCallState, ToolResultBlock, ToolResultState,
};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::error::{AttemptFailure, RepairError, StructuredError, Violation};
use super::repair::JsonRepairer;
use crate::chat::{
    ChatRequest, ChatResponse, ChatUsage, DynChatModel, ModelError, ToolChoice, ToolSchema,
};

/// The name of the structured-output tool; AgentScope 2.0 uses the same.
pub const STRUCTURED_OUTPUT_TOOL: &str = "GenerateStructuredOutput";

const TOOL_DESCRIPTION: &str = "Submit the final answer as structured data. The input schema \
is the shape the answer must have. Call this tool exactly once, with the complete answer as \
its arguments, when you have everything you need; calling it ends your response.";

/// Options of [`generate_structured_output`].
#[derive(Debug, Clone)]
pub struct StructuredOptions {
    max_retries: usize,
    tool_name: String,
    tool_description: String,
    cancel: CancellationToken,
}

impl Default for StructuredOptions {
    fn default() -> Self {
        Self {
            max_retries: 3,
            tool_name: STRUCTURED_OUTPUT_TOOL.to_owned(),
            tool_description: TOOL_DESCRIPTION.to_owned(),
            cancel: CancellationToken::new(),
        }
    }
}

impl StructuredOptions {
    /// How many times the model is asked again after a rejected answer
    /// (default 3, so at most 4 calls; 0 means one call only).
    #[must_use]
    pub fn with_max_retries(mut self, retries: usize) -> Self {
        self.max_retries = retries;
        self
    }

    /// The tool's name (default [`STRUCTURED_OUTPUT_TOOL`]).
    #[must_use]
    pub fn with_tool_name(mut self, name: impl Into<String>) -> Self {
        self.tool_name = name.into();
        self
    }

    /// The tool's description, for the model.
    #[must_use]
    pub fn with_tool_description(mut self, description: impl Into<String>) -> Self {
        self.tool_description = description.into();
        self
    }

    /// A token that interrupts the generation.
    #[must_use]
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// The retry bound.
    #[must_use]
    pub fn max_retries(&self) -> usize {
        self.max_retries
    }

    /// The tool's name.
    #[must_use]
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }
}

/// A validated structured answer.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredOutput {
    /// The answer: a JSON object that matches the schema (after repair).
    pub value: Map<String, Value>,
    /// The usage summed over every attempt (tokens and time).
    pub usage: ChatUsage,
    /// How many model calls it took (1 when the first answer was valid).
    pub attempts: usize,
}

/// The tool offered for structured output: `schema` as the parameters,
/// without its `title` annotations (as AgentScope sends it).
#[must_use]
pub fn structured_output_tool(name: &str, description: &str, schema: &Value) -> ToolSchema {
    let mut parameters = schema.clone();
    strip_titles(&mut parameters);
    ToolSchema::function(name, description, parameters)
}

/// Asks `model` for a JSON object matching `schema`.
///
/// Offers one tool built from the schema ([`structured_output_tool`]) and
/// forces it with [`ToolChoice::tool`]. Each answer is read to its final
/// chunk; the first call of the tool is repaired and validated
/// ([`JsonRepairer`]). When the model calls no tool, or its arguments stay
/// invalid, the conversation is extended and the model asked again, up to
/// [`StructuredOptions::with_max_retries`] times:
/// - invalid arguments: an assistant message with the model's answer and an
///   error tool result that quotes the validation error;
/// - no tool call: the model's answer, then a user message reminding it to
///   call the tool.
///
/// # Errors
/// - [`StructuredError::InvalidSchema`]: `schema` is not an object JSON
///   Schema that compiles;
/// - [`StructuredError::Model`]: a call failed (no retry here: the HTTP
///   layer already retries transient failures);
/// - [`StructuredError::Interrupted`]: the options' cancel token fired;
/// - [`StructuredError::Exhausted`]: every attempt was rejected; it holds
///   the last rejection.
///
/// # Cancel safety
/// Dropping the future stops the running call. Cancelling the token in the
/// options ends the current call (the model stream is drained to its
/// interrupted final chunk) and returns `Interrupted` with the usage so far.
pub async fn generate_structured_output(
    model: &dyn DynChatModel,
    messages: &[Msg],
    schema: &Value,
    options: StructuredOptions,
) -> Result<StructuredOutput, StructuredError> {
    let repairer = JsonRepairer::new(schema).map_err(|e| StructuredError::InvalidSchema {
        message: e.to_string(),
    })?;
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(StructuredError::InvalidSchema {
            message: "the schema must describe an object (`\"type\": \"object\"`)".to_owned(),
        });
    }
    let name = options.tool_name.as_str();
    let tools = [structured_output_tool(
        name,
        &options.tool_description,
        schema,
    )];
    let choice = ToolChoice::tool(name);
    let mut conversation = messages.to_vec();
    let mut usage = ChatUsage::tokens(0, 0);
    let max_attempts = options.max_retries.saturating_add(1);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let request = ChatRequest {
            messages: &conversation,
            tools: &tools,
            tool_choice: Some(&choice),
        };
        let response = match run_call(model, request, &options.cancel).await {
            Ok(r) => r,
            Err(error) => {
                return Err(StructuredError::Model {
                    attempt,
                    error,
                    usage,
                });
            }
        };
        if let Some(u) = &response.usage {
            add_usage(&mut usage, u);
        }
        if response.finished_reason == FinishedReason::Interrupted {
            return Err(StructuredError::Interrupted { attempt, usage });
        }
        let failure = match check_answer(&response, name, &repairer) {
            Ok(value) => {
                return Ok(StructuredOutput {
                    value,
                    usage,
                    attempts: attempt,
                });
            }
            Err(failure) => failure,
        };
        if attempt >= max_attempts {
            return Err(StructuredError::Exhausted {
                attempts: attempt,
                last: failure,
                usage,
            });
        }
        if options.cancel.is_cancelled() {
            // Cancelled after a complete but rejected answer: no retry.
            return Err(StructuredError::Interrupted { attempt, usage });
        }
        append_feedback(&mut conversation, response.content, name, &failure, model);
    }
}

/// Runs one call to its final chunk.
async fn run_call(
    model: &dyn DynChatModel,
    request: ChatRequest<'_>,
    cancel: &CancellationToken,
) -> Result<ChatResponse, ModelError> {
    let mut stream = model.call_boxed(request, cancel.child_token()).await?;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if chunk.is_last {
            return Ok(chunk);
        }
    }
    Err(ModelError::Stream {
        message: "the model's stream ended without its final chunk".to_owned(),
    })
}

fn check_answer(
    response: &ChatResponse,
    tool: &str,
    repairer: &JsonRepairer,
) -> Result<Map<String, Value>, AttemptFailure> {
    let call = response.content.iter().find_map(|b| match b {
        ContentBlock::ToolCall(c) if c.name == tool => Some(c),
        _ => None,
    });
    let Some(call) = call else {
        return Err(AttemptFailure::NoToolCall {
            tool: tool.to_owned(),
        });
    };
    match repairer.repair(&call.input) {
        Ok(Value::Object(map)) => Ok(map),
        // An object schema refuses anything else; kept total all the same.
        Ok(_) => Err(AttemptFailure::InvalidArguments {
            tool: tool.to_owned(),
            raw: call.input.clone(),
            error: RepairError::SchemaMismatch {
                violations: vec![Violation {
                    path: String::new(),
                    message: "the structured output must be a JSON object".to_owned(),
                }],
            },
        }),
        Err(error) => Err(AttemptFailure::InvalidArguments {
            tool: tool.to_owned(),
            raw: call.input.clone(),
            error,
        }),
    }
}

/// Extends the conversation so the model sees its answer and what was
/// wrong with it.
fn append_feedback(
    conversation: &mut Vec<Msg>,
    content: Vec<ContentBlock>,
    tool: &str,
    failure: &AttemptFailure,
    model: &dyn DynChatModel,
) {
    let mut blocks = Vec::with_capacity(content.len() * 2);
    let mut results = Vec::new();
    for block in content {
        if let ContentBlock::ToolCall(mut call) = block {
            let text = match failure {
                AttemptFailure::InvalidArguments { error, .. } if call.name == tool => format!(
                    "Error: {error}. Call `{tool}` again with arguments that match its schema."
                ),
                _ => format!("Error: only the `{tool}` tool may be called now."),
            };
            results.push(ContentBlock::ToolResult(ToolResultBlock::new(
                call.id.clone(),
                call.name.clone(),
                text,
                ToolResultState::Error,
            )));
            call.state = ToolCallState::Finished;
            blocks.push(ContentBlock::ToolCall(call));
        } else {
            blocks.push(block);
        }
    }
    blocks.extend(results);
    if !blocks.is_empty()
        && let Ok(answer) = Msg::assistant(model.model_name(), blocks)
    {
        conversation.push(answer);
    }
    if matches!(failure, AttemptFailure::NoToolCall { .. }) {
        let reminder = format!(
            "<system-reminder>You must now call the `{tool}` tool, with the complete \
             structured output as its arguments.</system-reminder>"
        );
        if let Ok(msg) = Msg::user("user", reminder) {
            conversation.push(msg);
        }
    }
}

fn add_usage(total: &mut ChatUsage, u: &ChatUsage) {
    total.input_tokens += u.input_tokens;
    total.output_tokens += u.output_tokens;
    total.cache_creation_input_tokens += u.cache_creation_input_tokens;
    total.cache_input_tokens += u.cache_input_tokens;
    total.time += u.time;
}

/// Removes `title` annotations from a schema and its subschemas; a property
/// that is *named* `title` is kept.
fn strip_titles(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if map.get("title").is_some_and(Value::is_string) {
        map.remove("title");
    }
    for (key, sub) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(children) = sub {
                    children.values_mut().for_each(strip_titles);
                }
            }
            "items" | "additionalProperties" | "not" | "if" | "then" | "else" | "contains" => {
                strip_titles(sub);
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(branches) = sub {
                    branches.iter_mut().for_each(strip_titles);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn titles_are_stripped_but_a_property_named_title_is_kept() {
        let mut schema = json!({
            "title": "Book",
            "type": "object",
            "properties": {
                "title": {"title": "Title", "type": "string"},
                "tags": {"title": "Tags", "type": "array", "items": {"title": "Tag", "type": "string"}},
                "author": {"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]},
            },
            "$defs": {"Person": {"title": "Person", "type": "object", "properties": {}}},
        });
        strip_titles(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "author": {"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]},
                },
                "$defs": {"Person": {"type": "object", "properties": {}}},
            })
        );
    }

    #[test]
    fn usage_adds_up_field_by_field() {
        let mut total = ChatUsage::tokens(1, 2);
        let mut more = ChatUsage::tokens(10, 20);
        more.cache_input_tokens = 3;
        more.time = 0.5;
        add_usage(&mut total, &more);
        assert_eq!(
            (
                total.input_tokens,
                total.output_tokens,
                total.cache_input_tokens
            ),
            (11, 22, 3)
        );
        assert!((total.time - 0.5).abs() < f64::EPSILON);
    }
}
