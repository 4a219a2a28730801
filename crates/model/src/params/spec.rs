//! Builders for the JSON Schema of one chat parameter.
//!
//! Each builder returns the property exactly as a pydantic model would
//! describe the field (`anyOf` with `null` for optional values, keys sorted),
//! so parameter forms built for AgentScope render our schemas unchanged.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// Numeric limits of a parameter; integers, as the wire writes them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Bounds {
    pub(crate) minimum: Option<i64>,
    pub(crate) exclusive_minimum: Option<i64>,
    pub(crate) maximum: Option<i64>,
    pub(crate) exclusive_maximum: Option<i64>,
}

impl Bounds {
    /// Strictly greater than zero.
    pub(crate) const POSITIVE: Self = Self {
        minimum: None,
        exclusive_minimum: Some(0),
        maximum: None,
        exclusive_maximum: None,
    };

    /// From `low` to `high`, both included.
    pub(crate) const fn closed(low: i64, high: i64) -> Self {
        Self {
            minimum: Some(low),
            exclusive_minimum: None,
            maximum: Some(high),
            exclusive_maximum: None,
        }
    }

    /// Above zero, up to `high` included.
    pub(crate) const fn positive_up_to(high: i64) -> Self {
        Self {
            minimum: None,
            exclusive_minimum: Some(0),
            maximum: Some(high),
            exclusive_maximum: None,
        }
    }

    /// From `low` included up to `high` excluded.
    pub(crate) const fn half_open(low: i64, high: i64) -> Self {
        Self {
            minimum: Some(low),
            exclusive_minimum: None,
            maximum: None,
            exclusive_maximum: Some(high),
        }
    }
}

/// An object with its keys in sorted order.
fn sorted(entries: impl IntoIterator<Item = (&'static str, Value)>) -> Value {
    let sorted: BTreeMap<&str, Value> = entries.into_iter().collect();
    Value::Object(
        sorted
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Map<_, _>>(),
    )
}

fn typed(type_name: &'static str, bounds: Bounds) -> Value {
    let mut entries = vec![("type", Value::from(type_name))];
    let limits = [
        ("minimum", bounds.minimum),
        ("exclusiveMinimum", bounds.exclusive_minimum),
        ("maximum", bounds.maximum),
        ("exclusiveMaximum", bounds.exclusive_maximum),
    ];
    entries.extend(
        limits
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, Value::from(v)))),
    );
    sorted(entries)
}

/// A value of `inner`'s type or `null`.
fn nullable(title: &'static str, description: &'static str, inner: Value, default: Value) -> Value {
    sorted([
        ("anyOf", Value::Array(vec![inner, json!({"type": "null"})])),
        ("default", default),
        ("description", Value::from(description)),
        ("title", Value::from(title)),
    ])
}

/// The `max_tokens` parameter: a positive integer or `null`.
pub(crate) fn max_tokens(description: &'static str) -> Value {
    optional_integer("Max Tokens", description, Bounds::POSITIVE)
}

/// An integer within `bounds`, or `null` (the default).
pub(crate) fn optional_integer(
    title: &'static str,
    description: &'static str,
    bounds: Bounds,
) -> Value {
    nullable(title, description, typed("integer", bounds), Value::Null)
}

/// A number within `bounds`, or `null` (the default).
pub(crate) fn optional_number(
    title: &'static str,
    description: &'static str,
    bounds: Bounds,
) -> Value {
    nullable(title, description, typed("number", bounds), Value::Null)
}

/// One of `choices`, or `null` (the default).
pub(crate) fn optional_choice(
    title: &'static str,
    description: &'static str,
    choices: &[&str],
) -> Value {
    let inner = sorted([("enum", json!(choices)), ("type", Value::from("string"))]);
    nullable(title, description, inner, Value::Null)
}

/// Any string, or `null` (the default).
pub(crate) fn optional_string(title: &'static str, description: &'static str) -> Value {
    nullable(title, description, json!({"type": "string"}), Value::Null)
}

/// `true`, `false` or `null` (the default).
pub(crate) fn optional_flag(title: &'static str, description: &'static str) -> Value {
    nullable(title, description, json!({"type": "boolean"}), Value::Null)
}

/// `true` or `false`, with a default.
pub(crate) fn flag(title: &'static str, description: &'static str, default: bool) -> Value {
    sorted([
        ("default", Value::from(default)),
        ("description", Value::from(description)),
        ("title", Value::from(title)),
        ("type", Value::from("boolean")),
    ])
}

/// The object schema holding `properties`, in the given order.
pub(crate) fn object(properties: Vec<(&'static str, Value)>) -> Value {
    let properties: Map<String, Value> = properties
        .into_iter()
        .map(|(name, schema)| (name.to_owned(), schema))
        .collect();
    json!({"type": "object", "properties": properties, "required": []})
}
