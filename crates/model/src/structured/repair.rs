//! Turning a model's raw argument text into a value that matches a schema.

use std::fmt;

use jsonschema::Validator;
use serde_json::Value;

use super::coerce::coerce;
use super::error::{RepairError, Violation};
use super::parse::parse_json_lenient;

/// At most this many violations are reported for one value.
const MAX_VIOLATIONS: usize = 16;

/// A compiled schema that repairs and validates raw JSON arguments.
///
/// Compile once per schema (a tool, a structured-output request) and reuse
/// it: [`JsonRepairer::repair`] does no schema work beyond validation.
/// Only local `$ref`s resolve: nothing is fetched over the network or from
/// files.
pub struct JsonRepairer {
    schema: Value,
    validator: Validator,
}

impl fmt::Debug for JsonRepairer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonRepairer")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl JsonRepairer {
    /// Compiles `schema` (its draft is read from `$schema`, 2020-12 when
    /// absent).
    ///
    /// # Errors
    /// [`RepairError::InvalidSchema`] when the schema is not a valid JSON
    /// Schema or names a `$ref` that cannot be resolved locally.
    pub fn new(schema: &Value) -> Result<Self, RepairError> {
        Self::from_schema(schema.clone())
    }

    /// Like [`JsonRepairer::new`], taking the schema by value.
    ///
    /// # Errors
    /// As [`JsonRepairer::new`].
    pub fn from_schema(schema: Value) -> Result<Self, RepairError> {
        let validator =
            jsonschema::validator_for(&schema).map_err(|e| RepairError::InvalidSchema {
                message: e.to_string(),
            })?;
        Ok(Self { schema, validator })
    }

    /// The schema.
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Parses `raw` leniently ([`parse_json_lenient`]), coerces what the
    /// schema settles, and validates.
    ///
    /// Repairs: JSON in a markdown fence; text before or after the JSON
    /// object; the whole object, or a field, encoded as a JSON string;
    /// `"3"` where an integer or number is expected; `"true"` / `"false"`
    /// where a boolean is expected; `"null"` where null is expected.
    ///
    /// # Errors
    /// [`RepairError::InvalidJson`] when no JSON can be found;
    /// [`RepairError::SchemaMismatch`] listing every violation (with its
    /// JSON-pointer path) that remains after coercion.
    pub fn repair(&self, raw: &str) -> Result<Value, RepairError> {
        self.check(parse_json_lenient(raw)?)
    }

    /// Coerces and validates an already parsed value.
    ///
    /// # Errors
    /// [`RepairError::SchemaMismatch`], as for [`JsonRepairer::repair`].
    pub fn check(&self, mut value: Value) -> Result<Value, RepairError> {
        // Always: a valid value still gets its defaults filled in.
        coerce(&mut value, &self.schema, &self.schema);
        let violations: Vec<Violation> = self
            .validator
            .iter_errors(&value)
            .take(MAX_VIOLATIONS)
            .map(|e| Violation {
                path: e.instance_path().to_string(),
                message: e.to_string(),
            })
            .collect();
        if violations.is_empty() {
            Ok(value)
        } else {
            Err(RepairError::SchemaMismatch { violations })
        }
    }
}

/// Repairs and validates a model's raw JSON arguments against `schema`:
/// [`JsonRepairer::new`] then [`JsonRepairer::repair`]. Compile a
/// [`JsonRepairer`] instead when the schema is used more than once.
///
/// # Errors
/// [`RepairError::InvalidSchema`], [`RepairError::InvalidJson`] or
/// [`RepairError::SchemaMismatch`]; the message names the field path and
/// what is wrong with it.
///
/// ```
/// use oxiscope_model::{RepairError, repair_json_arguments};
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
///     "required": ["city", "population"],
/// });
/// let v = repair_json_arguments(r#"{"city": "Paris", "population": "2102650"}"#, &schema)?;
/// assert_eq!(v, json!({"city": "Paris", "population": 2102650}));
///
/// let err = repair_json_arguments(r#"{"city": "Paris", "population": "many"}"#, &schema)
///     .unwrap_err();
/// assert!(err.to_string().contains("`/population`"));
/// # Ok::<(), RepairError>(())
/// ```
pub fn repair_json_arguments(raw: &str, schema: &Value) -> Result<Value, RepairError> {
    JsonRepairer::new(schema)?.repair(raw)
}

#[cfg(test)]
#[path = "repair_tests.rs"]
mod tests;
