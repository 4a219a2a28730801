//! How a card's `parameter_schema` is derived from its class's base schema.

use serde_json::{Map, Value, json};

/// Output MIME type of models that can return their reasoning.
pub const THINKING_OUTPUT_TYPE: &str = "application/x-thinking";

/// Parameters that only make sense for models with
/// [`THINKING_OUTPUT_TYPE`] output; dropped from the other cards.
pub const THINKING_PARAMETERS: [&str; 2] = ["thinking_enable", "thinking_budget"];

/// Parameters that only make sense for models that can speak (an `audio/*`
/// output type); dropped from the other cards.
pub const AUDIO_PARAMETERS: [&str; 1] = ["voice"];

/// Builds the `parameter_schema` of one card: `base` (a class's JSON Schema
/// object) with the card's `overrides` applied, then the card rules.
///
/// In order:
/// 1. each override is applied to the base property of the same name:
///    - `null` removes the property;
///    - an object with `hidden: true` removes it too (the frontend must not
///      offer it);
///    - any other object is merged into the property key by key (its keys
///      replace the base's, new keys are appended); a `hidden: false` key is
///      not copied;
///    - an override naming a property the base does not have is ignored, and
///      so is an override that is neither an object nor `null`
///      ([`CardSpec::into_card`](crate::CardSpec::into_card) rejects those);
/// 2. without [`THINKING_OUTPUT_TYPE`] in `output_types`, the
///    [`THINKING_PARAMETERS`] are removed;
/// 3. without an `audio/*` output type, the [`AUDIO_PARAMETERS`] are removed
///    (AgentScope does this too, although its documentation only mentions
///    the thinking rule);
/// 4. if `max_tokens` is left and has no `maximum` yet, it gets
///    `maximum: output_size`. An override's own `maximum` is kept even if it
///    is larger, as AgentScope does.
///
/// Removed properties are also taken out of `required`. Property order is the
/// base's. A `base` that is not an object is treated as an empty schema.
pub fn merge_parameter_schema(
    base: &Value,
    overrides: &Map<String, Value>,
    output_types: &[String],
    output_size: u64,
) -> Value {
    let mut schema = match base {
        Value::Object(schema) => schema.clone(),
        _ => Map::new(),
    };
    let mut properties = match schema.get("properties") {
        Some(Value::Object(properties)) => properties.clone(),
        _ => Map::new(),
    };
    apply_overrides(&mut properties, overrides);
    apply_card_rules(&mut properties, output_types, output_size);
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|name| {
            name.as_str()
                .is_some_and(|name| properties.contains_key(name))
        });
    }
    // Replacing an existing key keeps its position in the object.
    schema.insert("properties".into(), Value::Object(properties));
    Value::Object(schema)
}

fn apply_overrides(properties: &mut Map<String, Value>, overrides: &Map<String, Value>) {
    for (name, patch) in overrides {
        match patch {
            Value::Object(fields) if fields.get("hidden") == Some(&Value::Bool(true)) => {
                properties.shift_remove(name);
            }
            Value::Object(fields) => {
                if let Some(Value::Object(property)) = properties.get_mut(name) {
                    for (key, value) in fields.iter().filter(|(key, _)| *key != "hidden") {
                        property.insert(key.clone(), value.clone());
                    }
                }
            }
            Value::Null => {
                properties.shift_remove(name);
            }
            _ => {}
        }
    }
}

fn apply_card_rules(
    properties: &mut Map<String, Value>,
    output_types: &[String],
    output_size: u64,
) {
    if !output_types.iter().any(|t| t == THINKING_OUTPUT_TYPE) {
        for name in THINKING_PARAMETERS {
            properties.shift_remove(name);
        }
    }
    if !output_types.iter().any(|t| t.starts_with("audio/")) {
        for name in AUDIO_PARAMETERS {
            properties.shift_remove(name);
        }
    }
    if let Some(Value::Object(max_tokens)) = properties.get_mut("max_tokens")
        && !max_tokens.contains_key("maximum")
    {
        max_tokens.insert("maximum".into(), json!(output_size));
    }
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
