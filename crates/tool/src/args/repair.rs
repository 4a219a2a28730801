//! Schema-directed repair of argument values.

use serde_json::{Map, Number, Value};

/// How deep `$ref`s and nesting are followed before giving up on repairs.
const MAX_DEPTH: usize = 32;

/// Repairs `value` in place where `schema` makes the intent unambiguous.
/// Never fails; what it cannot repair is left for validation to report.
pub fn repair(value: &mut Value, schema: &Value) {
    fix(value, schema, schema, 0);
}

fn resolve<'a>(schema: &'a Value, root: &'a Value, depth: usize) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) if depth < MAX_DEPTH => {
            let target = reference
                .strip_prefix('#')
                .and_then(|pointer| root.pointer(pointer));
            target.map_or(schema, |t| resolve(t, root, depth + 1))
        }
        _ => schema,
    }
}

fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

/// Whether `schema` accepts `null` at its top level.
fn allows_null(schema: &Value, root: &Value, depth: usize) -> bool {
    let schema = resolve(schema, root, depth);
    if types_of(schema).contains(&"null") {
        return true;
    }
    ["anyOf", "oneOf"].iter().any(|key| {
        schema
            .get(*key)
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(|b| allows_null(b, root, depth + 1)))
    })
}

/// The value converted to `ty`, when the conversion loses nothing.
fn coerce(value: &Value, ty: &str) -> Option<Value> {
    match (ty, value) {
        ("integer", Value::String(s)) => s.trim().parse::<i64>().ok().map(Value::from),
        ("integer", Value::Number(n)) => n.as_f64().and_then(whole),
        ("number", Value::String(s)) => {
            let s = s.trim();
            match s.parse::<i64>() {
                Ok(i) => Some(Value::from(i)),
                Err(_) => s
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .and_then(Number::from_f64)
                    .map(Value::Number),
            }
        }
        ("boolean", Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        ("object" | "array", Value::String(s)) => serde_json::from_str::<Value>(s.trim())
            .ok()
            .filter(|parsed| has_type(parsed, ty)),
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        _ => None,
    }
}

/// `f` as an integer value when it has no fractional part and fits.
#[allow(clippy::cast_possible_truncation)]
fn whole(f: f64) -> Option<Value> {
    (f.fract() == 0.0 && f.abs() < 9.0e15).then(|| Value::from(f as i64))
}

fn fix(value: &mut Value, schema: &Value, root: &Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = resolve(schema, root, depth);

    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            fix_union(value, branches, root, depth);
            return;
        }
    }
    if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
        for part in parts {
            fix(value, part, root, depth + 1);
        }
    }

    let types = types_of(schema);
    if !types.is_empty()
        && !types.iter().any(|t| has_type(value, t))
        && let Some(fixed) = types.iter().find_map(|t| coerce(value, t))
    {
        *value = fixed;
    }

    match value {
        Value::Object(map) => fix_object(map, schema, root, depth),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for item in items {
                    fix(item, item_schema, root, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn fix_union(value: &mut Value, branches: &[Value], root: &Value, depth: usize) {
    // A branch that takes the value as it is wins; repair inside it.
    let direct = branches.iter().find(|b| {
        let b = resolve(b, root, depth + 1);
        let types = types_of(b);
        types.is_empty() || types.iter().any(|t| has_type(value, t))
    });
    if let Some(branch) = direct {
        fix(value, branch, root, depth + 1);
        return;
    }
    for branch in branches {
        let mut candidate = value.clone();
        fix(&mut candidate, branch, root, depth + 1);
        let b = resolve(branch, root, depth + 1);
        if types_of(b).iter().any(|t| has_type(&candidate, t)) {
            *value = candidate;
            return;
        }
    }
}

fn fix_object(map: &mut Map<String, Value>, schema: &Value, root: &Value, depth: usize) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, prop_schema) in properties {
        let optional = !required.contains(&name.as_str());
        match map.get_mut(name) {
            Some(Value::Null) if optional && !allows_null(prop_schema, root, depth + 1) => {
                map.remove(name);
            }
            Some(v) => fix(v, prop_schema, root, depth + 1),
            None => {}
        }
        if !map.contains_key(name) {
            let prop = resolve(prop_schema, root, depth + 1);
            if let Some(default) = prop.get("default") {
                map.insert(name.clone(), default.clone());
            }
        }
    }
}
