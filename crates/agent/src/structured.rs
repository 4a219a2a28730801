//! Structured output: the `GenerateStructuredOutput` tool a reply is given
//! when it must produce a value that follows a JSON schema.

use oxiscope_model::ToolSchema;
use oxiscope_tool::args::ArgumentSchema;
use serde_json::{Map, Value};

/// The name of the tool (AgentScope's, so saved contexts stay compatible).
pub(crate) const TOOL_NAME: &str = "GenerateStructuredOutput";

/// The source of the hint that tells the model an output is required.
pub(crate) const HINT_SOURCE: &str =
    r#"{"label": "System", "sublabel": "Structured Output Requirement"}"#;

/// The hint that tells the model an output is required.
pub(crate) const HINT_TEXT: &str = "<system-reminder>This reply must end with a call of the      'GenerateStructuredOutput' tool carrying the required output. Call it once you have      everything the output needs.</system-reminder>";

/// The result text of a successful submission.
pub(crate) const DONE_TEXT: &str = "Structured output generated successfully.";

/// The tool schema offered to the model: the required schema as its input.
pub(crate) fn tool_schema(schema: &Value) -> ToolSchema {
    ToolSchema::function(
        TOOL_NAME,
        "Submit the structured output this reply must produce. Its input schema is the \
         required output. Gather what you need first (other tools are available); when \
         ready, end your response by calling this tool: the call finishes the reply and its \
         input is delivered to the user.",
        schema.clone(),
    )
}

/// Validates (and repairs what is safe to repair) a submission.
///
/// # Errors
/// A message for the model naming every problem, field path included.
pub(crate) fn validate(schema: &Value, raw_input: &str) -> Result<Map<String, Value>, String> {
    let checker = ArgumentSchema::new(schema.clone())
        .map_err(|e| format!("The required output schema is not a valid JSON schema: {e}"))?;
    match checker.prepare(TOOL_NAME, raw_input) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "The structured output must be a JSON object, got {other}"
        )),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"city": {"type": "string"},
               "population": {"type": "integer"}}, "required": ["city", "population"]})
    }

    #[test]
    fn a_valid_submission_passes_and_a_numeric_string_is_repaired() {
        let out = validate(&schema(), r#"{"city": "Paris", "population": "2102650"}"#).unwrap();
        assert_eq!(out["population"], json!(2_102_650));
    }

    #[test]
    fn a_missing_field_is_reported_by_name() {
        let err = validate(&schema(), r#"{"city": "Paris"}"#).unwrap_err();
        assert!(err.contains("population"), "{err}");
    }
}
