//! Reference data produced by AgentScope 2.0.11, stored in the repository.

use serde_json::Value;

pub(crate) use oxiscope_test_support::fixtures::load;

/// Removes every `description` key from a JSON Schema's top level and from
/// each of its `properties`: the one normalisation our golden comparisons
/// apply, because the prose is ours, not AgentScope's.
pub(crate) fn without_descriptions(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(top) = schema.as_object_mut() {
        top.shift_remove("description");
        if let Some(Value::Object(properties)) = top.get_mut("properties") {
            for property in properties.values_mut() {
                if let Some(property) = property.as_object_mut() {
                    property.shift_remove("description");
                }
            }
        }
    }
    schema
}

/// `(property name, description)` of every property of a schema.
pub(crate) fn descriptions(schema: &Value) -> Vec<(String, String)> {
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| {
            property["description"]
                .as_str()
                .map(|d| (name.clone(), d.to_owned()))
        })
        .collect()
}
