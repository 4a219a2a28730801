//! Schema-guided repair of the values a model wrote: the one
//! implementation behind structured output and tool arguments.

use serde_json::{Number, Value};

/// How deep `$ref` chains and nested schemas are followed.
const MAX_DEPTH: usize = 64;

/// How many (value, schema) pairs one coercion visits at most, so that
/// unions of self-references cannot blow up.
const MAX_STEPS: usize = 100_000;

/// Repairs `value` in place where `schema` makes the intent unambiguous;
/// never fails (what it cannot repair is left for validation to report):
/// - `"3"` for an `integer` (also `"3.0"`), `"2.5"` for a `number`;
/// - `"true"` / `"false"` (any case) for a `boolean`, `"null"` for `null`;
/// - a string holding JSON for an `object` or `array`;
/// - a whole float (`3.0`) for an `integer`;
/// - a number or boolean where only a `string` is allowed (`7` → `"7"`);
/// - in an object: an optional property sent as `null` that does not allow
///   `null` is dropped, and a missing property with a `default` gets it.
///
/// A string is left alone when the schema also allows strings there, or
/// when it does not convert. Follows `properties`, `additionalProperties`,
/// `items`, `prefixItems`, local `$ref`s (`#/...`), `allOf`, and the
/// `anyOf` / `oneOf` branches.
pub fn coerce_to_schema(value: &mut Value, schema: &Value) {
    coerce(value, schema, schema);
}

pub(crate) fn coerce(value: &mut Value, schema: &Value, root: &Value) {
    let mut steps = MAX_STEPS;
    coerce_at(value, schema, root, 0, &mut steps);
}

fn coerce_at(value: &mut Value, schema: &Value, root: &Value, depth: usize, steps: &mut usize) {
    if depth > MAX_DEPTH || *steps == 0 {
        return;
    }
    *steps -= 1;
    let Some(schema) = resolve(schema, root, depth) else {
        return;
    };
    let mut types = Vec::new();
    collect_types(schema, root, depth, &mut types);
    if let Value::String(s) = value
        && !types.is_empty()
        && !types.contains(&"string")
        && let Some(converted) = convert(s, &types)
    {
        *value = converted;
    }
    if let Some(converted) = convert_scalar(value, &types) {
        *value = converted;
    }
    for branch in ["allOf", "anyOf", "oneOf"]
        .into_iter()
        .filter_map(|k| schema.get(k).and_then(Value::as_array))
        .flatten()
    {
        if branch_fits(value, branch, root, depth) {
            coerce_at(value, branch, root, depth + 1, steps);
        }
    }
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(props) = props {
                fill_object(map, schema, props, root, depth);
            }
            let extra = schema.get("additionalProperties").filter(|s| s.is_object());
            for (key, v) in map.iter_mut() {
                if let Some(sub) = props.and_then(|p| p.get(key)).or(extra) {
                    coerce_at(v, sub, root, depth + 1, steps);
                }
            }
        }
        Value::Array(items) => {
            let prefix = schema.get("prefixItems").and_then(Value::as_array);
            let rest = schema.get("items").filter(|s| s.is_object());
            for (i, v) in items.iter_mut().enumerate() {
                if let Some(sub) = prefix.and_then(|p| p.get(i)).or(rest) {
                    coerce_at(v, sub, root, depth + 1, steps);
                }
            }
        }
        _ => {}
    }
}

/// A number or boolean in a place whose types do not take it: a whole
/// float for an `integer`, the text of the scalar for a `string`.
fn convert_scalar(value: &Value, types: &[&str]) -> Option<Value> {
    let fits = |t: &&str| match *t {
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        _ => false,
    };
    if types.is_empty() || types.iter().any(fits) {
        return None;
    }
    match value {
        Value::Number(n) if types.contains(&"integer") => n.as_f64().and_then(whole),
        Value::Number(n) if types.contains(&"string") => Some(Value::String(n.to_string())),
        Value::Bool(b) if types.contains(&"string") => Some(Value::String(b.to_string())),
        _ => None,
    }
}

/// `f` as an integer when it has no fractional part and fits exactly.
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
fn whole(f: f64) -> Option<Value> {
    let i = f as i64;
    (f.is_finite() && f.fract() == 0.0 && (i as f64) == f).then(|| i.into())
}

/// Drops optional properties sent as `null` that do not allow it, and
/// fills missing properties that have a `default`.
fn fill_object(
    map: &mut serde_json::Map<String, Value>,
    schema: &Value,
    props: &serde_json::Map<String, Value>,
    root: &Value,
    depth: usize,
) {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, sub) in props {
        let resolved = resolve(sub, root, depth + 1);
        if map.get(name).is_some_and(Value::is_null) && !required.contains(&name.as_str()) {
            let mut types = Vec::new();
            if let Some(r) = resolved {
                collect_types(r, root, depth + 1, &mut types);
            }
            // An untyped property takes null as it is.
            if !types.is_empty() && !types.contains(&"null") {
                map.remove(name);
            }
        }
        if !map.contains_key(name)
            && let Some(default) = resolved.and_then(|r| r.get("default"))
        {
            map.insert(name.clone(), default.clone());
        }
    }
}

/// Follows local `$ref`s to the schema they name.
fn resolve<'a>(mut schema: &'a Value, root: &'a Value, depth: usize) -> Option<&'a Value> {
    for _ in depth..MAX_DEPTH {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => schema = root.pointer(r.strip_prefix('#')?)?,
            None => return Some(schema),
        }
    }
    None
}

/// The `type`s allowed here, including those of the direct `anyOf` /
/// `oneOf` branches (one level: enough for optional fields and simple
/// unions).
fn collect_types<'a>(schema: &'a Value, root: &'a Value, depth: usize, out: &mut Vec<&'a str>) {
    push_types(schema, out);
    for branch in ["anyOf", "oneOf"]
        .into_iter()
        .filter_map(|k| schema.get(k).and_then(Value::as_array))
        .flatten()
    {
        if let Some(b) = resolve(branch, root, depth + 1) {
            push_types(b, out);
        }
    }
}

fn push_types<'a>(schema: &'a Value, out: &mut Vec<&'a str>) {
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t),
        Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str)),
        _ => {}
    }
}

/// Whether a union branch is meant for this kind of value.
fn branch_fits(value: &Value, branch: &Value, root: &Value, depth: usize) -> bool {
    let Some(branch) = resolve(branch, root, depth + 1) else {
        return false;
    };
    let mut types = Vec::new();
    collect_types(branch, root, depth + 1, &mut types);
    if types.is_empty() {
        return true;
    }
    types.iter().any(|t| match *t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" | "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    })
}

fn convert(s: &str, types: &[&str]) -> Option<Value> {
    let t = s.trim();
    types.iter().find_map(|ty| match *ty {
        "integer" => integer(t),
        "number" => integer(t).or_else(|| {
            let f: f64 = t.parse().ok()?;
            Number::from_f64(f).map(Value::Number)
        }),
        "boolean" => match t.to_ascii_lowercase().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "null" => (t == "null").then_some(Value::Null),
        "object" => serde_json::from_str::<Value>(t)
            .ok()
            .filter(Value::is_object),
        "array" => serde_json::from_str::<Value>(t)
            .ok()
            .filter(Value::is_array),
        _ => None,
    })
}

fn integer(t: &str) -> Option<Value> {
    if let Ok(i) = t.parse::<i64>() {
        return Some(i.into());
    }
    if let Ok(u) = t.parse::<u64>() {
        return Some(u.into());
    }
    // A whole number written with a fraction ("3.0"); i64 range only.
    whole(t.parse().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn run(mut value: Value, schema: &Value) -> Value {
        coerce(&mut value, schema, schema);
        value
    }

    #[test]
    fn scalars_written_as_strings_become_what_the_schema_says() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
            "z": {"type": "null"}, "s": {"type": "string"}, "f": {"type": "integer"},
        }});
        let got = run(
            json!({"n": " 3 ", "x": "2.5", "b": "False", "z": "null", "s": "7", "f": "3.0"}),
            &schema,
        );
        assert_eq!(
            got,
            json!({"n": 3, "x": 2.5, "b": false, "z": null, "s": "7", "f": 3})
        );
    }

    #[test]
    fn strings_that_do_not_convert_are_left_for_validation() {
        let schema = json!({"properties": {"n": {"type": "integer"}, "b": {"type": "boolean"}}});
        let got = run(json!({"n": "3.5", "b": "yes"}), &schema);
        assert_eq!(got, json!({"n": "3.5", "b": "yes"}));
    }

    #[test]
    fn json_inside_a_string_becomes_the_object_or_array() {
        let schema = json!({"properties": {
            "o": {"type": "object", "properties": {"k": {"type": "integer"}}},
            "a": {"type": "array", "items": {"type": "integer"}},
        }});
        let got = run(json!({"o": "{\"k\": \"1\"}", "a": "[\"1\", 2]"}), &schema);
        assert_eq!(got, json!({"o": {"k": 1}, "a": [1, 2]}));
    }

    #[test]
    fn refs_unions_and_additional_properties_are_followed() {
        let schema = json!({
            "$defs": {"Item": {"type": "object", "properties": {"qty": {"type": "integer"}}}},
            "properties": {
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "wrapped": {"allOf": [{"$ref": "#/$defs/Item"}]},
                "map": {"type": "object", "additionalProperties": {"type": "boolean"}},
            }
        });
        let got = run(
            json!({"items": [{"qty": "2"}], "maybe": "5", "either": "5",
                   "wrapped": {"qty": "4"}, "map": {"a": "true"}}),
            &schema,
        );
        assert_eq!(
            got,
            json!({"items": [{"qty": 2}], "maybe": 5, "either": "5",
                   "wrapped": {"qty": 4}, "map": {"a": true}})
        );
    }

    #[test]
    fn a_self_referencing_schema_does_not_loop() {
        let schema = json!({"$ref": "#"});
        assert_eq!(run(json!("1"), &schema), json!("1"));
        let schema = json!({"$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}, "v": {"type": "integer"}}}}, "$ref": "#/$defs/N"});
        let got = run(json!({"v": "1", "next": {"v": "2"}}), &schema);
        assert_eq!(got, json!({"v": 1, "next": {"v": 2}}));
    }

    #[test]
    fn unions_of_self_references_stop_early() {
        let schema = json!({"anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"$ref": "#"}]});
        assert_eq!(run(json!({"a": "1"}), &schema), json!({"a": "1"}));
    }

    #[test]
    fn huge_or_odd_numbers_do_not_panic() {
        let schema = json!({"type": "integer"});
        assert_eq!(
            run(json!("18446744073709551615"), &schema),
            json!(18_446_744_073_709_551_615_u64)
        );
        assert_eq!(run(json!("1e400"), &schema), json!("1e400"));
        assert_eq!(run(json!("NaN"), &json!({"type": "number"})), json!("NaN"));
    }
}
