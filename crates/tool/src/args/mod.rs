//! Tool arguments from the model: parse, repair what is safe to repair,
//! validate, and explain the rest.
//!
//! Repairs: a whole argument object sent as a JSON string, JSON objects or
//! arrays nested in a string, numbers and booleans sent as strings
//! (`"3"` → `3`), whole floats where integers are expected, scalars where
//! strings are expected, and a `null` or missing optional field (dropped,
//! then filled with the schema default when there is one). Everything else
//! is reported back to the model as an [`ArgumentError`].

use std::fmt;

use oxiscope_model::{JsonRepairer, RepairError};
use serde_json::Value;

/// Repairs `value` in place where `schema` makes the intent unambiguous
/// (the repairs listed in the module docs); never fails. The same repair
/// serves structured output: see [`oxiscope_model::coerce_to_schema`].
pub fn repair(value: &mut Value, schema: &Value) {
    oxiscope_model::coerce_to_schema(value, schema);
}

/// One problem found in the arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentProblem {
    /// A JSON pointer to the offending value (`""` for the whole object).
    pub path: String,
    /// What is wrong, for the model.
    pub message: String,
}

/// Why a tool call's arguments were rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ArgumentError {
    /// The tool called.
    pub tool: String,
    /// Every problem found.
    pub problems: Vec<ArgumentProblem>,
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid arguments for tool `{}`:", self.tool)?;
        for p in &self.problems {
            if p.path.is_empty() {
                write!(f, "\n- {}", p.message)?;
            } else {
                write!(f, "\n- at `{}`: {}", p.path, p.message)?;
            }
        }
        write!(
            f,
            "\nFix the arguments to match the tool's input schema and call it again."
        )
    }
}

/// A tool's input schema compiled for validation.
#[derive(Debug)]
pub struct ArgumentSchema {
    repairer: JsonRepairer,
}

impl ArgumentSchema {
    /// Compiles `schema`.
    ///
    /// # Errors
    ///
    /// The schema is not a valid JSON schema; the message says why.
    pub fn new(schema: Value) -> Result<Self, String> {
        let repairer = JsonRepairer::from_schema(schema).map_err(|e| match e {
            RepairError::InvalidSchema { message } => message,
            other => other.to_string(),
        })?;
        Ok(Self { repairer })
    }

    /// The schema.
    #[must_use]
    pub fn schema(&self) -> &Value {
        self.repairer.schema()
    }

    /// Parses the model's argument string, repairs it and validates it.
    ///
    /// An empty string stands for `{}`.
    ///
    /// # Errors
    ///
    /// Invalid JSON, a non-object, or values the schema rejects after the
    /// repairs; each problem names where it is and what was expected.
    pub fn prepare(&self, tool: &str, raw: &str) -> Result<Value, ArgumentError> {
        let fail = |path: &str, message: String| ArgumentError {
            tool: tool.to_owned(),
            problems: vec![ArgumentProblem {
                path: path.to_owned(),
                message,
            }],
        };
        let trimmed = raw.trim();
        let mut value = if trimmed.is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            serde_json::from_str::<Value>(trimmed)
                .map_err(|e| fail("", format!("the arguments are not valid JSON ({e})")))?
        };
        // A whole argument object encoded once more as a string.
        if let Value::String(inner) = &value
            && let Ok(parsed @ Value::Object(_)) = serde_json::from_str::<Value>(inner)
        {
            value = parsed;
        }
        if !value.is_object() {
            return Err(fail(
                "",
                format!(
                    "the arguments must be a JSON object, got {}",
                    describe(&value)
                ),
            ));
        }
        self.check(tool, value)
    }

    /// Repairs and validates already-parsed arguments.
    ///
    /// # Errors
    ///
    /// As [`prepare`](Self::prepare).
    pub fn check(&self, tool: &str, value: Value) -> Result<Value, ArgumentError> {
        self.repairer.check(value).map_err(|e| {
            let problems = match e {
                RepairError::SchemaMismatch { violations } => violations
                    .into_iter()
                    .map(|v| ArgumentProblem {
                        path: v.path,
                        message: v.message,
                    })
                    .collect(),
                other => vec![ArgumentProblem {
                    path: String::new(),
                    message: other.to_string(),
                }],
            };
            ArgumentError {
                tool: tool.to_owned(),
                problems,
            }
        })
    }
}

/// A short description of a JSON value for error messages.
pub(crate) fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let mut text = value.to_string();
    if text.len() > 60 {
        let mut cut = 57;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("...");
    }
    format!("{kind} ({text})")
}
