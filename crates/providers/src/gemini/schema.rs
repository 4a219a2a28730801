//! Tool schemas -> the subset of JSON Schema Gemini's `Schema` accepts.

use serde_json::{Map, Value, json};

/// The keywords Gemini's `Schema` object reads; every other one is dropped.
const KEPT: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// The string formats Gemini accepts; others are dropped.
const STRING_FORMATS: &[&str] = &["enum", "date-time"];

/// How many schema nodes one tool's parameters may expand to: `$ref`s are
/// inlined, and a schema whose references fan out could otherwise grow
/// exponentially. Past it, a reference becomes a plain object.
const NODE_BUDGET: usize = 4096;

/// How deep `$ref`s may nest before one becomes a plain object (recursive
/// schemas have no finite expansion).
const MAX_REF_DEPTH: usize = 12;

/// Rewrites a tool's JSON schema into what Gemini's function declarations
/// accept:
///
/// - local `$ref`s (`#/$defs/...`, `#/definitions/...`) are inlined;
///   recursive or too-large expansions end in `{"type": "object"}`;
/// - a `type` list with `"null"` (`["string", "null"]`) becomes the other
///   type with `nullable: true`; several other types become an `anyOf`;
///   a lone `"null"` type becomes a nullable object;
/// - `anyOf` / `oneOf` alternatives of type `null` are dropped and set
///   `nullable`; a single alternative left is inlined; `oneOf` is spelled
///   `anyOf`; `allOf` parts are merged;
/// - `const` becomes a one-value `enum`; an `enum` of values that are not
///   all strings (Gemini takes string enums only) is listed in the
///   description instead;
/// - `required` keeps only names that are properties, string `format`s
///   other than `enum` and `date-time` are dropped, and every keyword Gemini
///   does not know (`$schema`, `additionalProperties`, `examples`,
///   `exclusiveMinimum`, ...) is dropped.
///
/// Never fails: whatever is not a schema object becomes `{}`.
#[must_use]
pub fn sanitize_schema(schema: &Value) -> Value {
    let mut sanitizer = Sanitizer {
        root: schema,
        budget: NODE_BUDGET,
    };
    sanitizer.node(schema, 0)
}

struct Sanitizer<'a> {
    root: &'a Value,
    budget: usize,
}

impl Sanitizer<'_> {
    fn node(&mut self, schema: &Value, ref_depth: usize) -> Value {
        self.budget = self.budget.saturating_sub(1);
        let Value::Object(input) = schema else {
            return Value::Object(Map::new());
        };
        let mut obj = input.clone();
        let mut ref_depth = ref_depth;
        // Inline references, keeping the referring node's own keys.
        while let Some(Value::String(pointer)) = obj.remove("$ref") {
            let target = (ref_depth < MAX_REF_DEPTH && self.budget > 0)
                .then(|| self.resolve(&pointer))
                .flatten();
            ref_depth += 1;
            match target {
                Some(Value::Object(target)) => {
                    for (k, v) in target {
                        obj.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                _ => {
                    obj.entry("type").or_insert_with(|| json!("object"));
                    break;
                }
            }
        }
        merge_all_of(&mut obj);
        let mut nullable = false;
        if let Some(alternatives) = obj.remove("anyOf").or_else(|| obj.remove("oneOf")) {
            let alternatives: Vec<Value> = match alternatives {
                Value::Array(items) => items,
                _ => Vec::new(),
            };
            let before = alternatives.len();
            let mut rest: Vec<Value> = alternatives.into_iter().filter(|v| !is_null(v)).collect();
            nullable |= rest.len() < before;
            if rest.len() == 1 {
                if let Some(Value::Object(only)) = rest.pop() {
                    for (k, v) in only {
                        obj.insert(k, v);
                    }
                    // The inlined alternative may carry its own keywords.
                    let mut merged = self.node(&Value::Object(obj), ref_depth);
                    if nullable && let Value::Object(m) = &mut merged {
                        m.insert("nullable".into(), true.into());
                    }
                    return merged;
                }
            } else if !rest.is_empty() {
                let sanitized: Vec<Value> = rest.iter().map(|v| self.node(v, ref_depth)).collect();
                obj.insert("anyOf".into(), sanitized.into());
            }
        }
        match obj.remove("type") {
            Some(Value::Array(types)) => {
                let before = types.len();
                let types: Vec<Value> = types
                    .into_iter()
                    .filter(|t| t.as_str().is_some_and(|t| t != "null"))
                    .collect();
                nullable |= types.len() < before;
                match types.len() {
                    0 => {
                        obj.insert("type".into(), "object".into());
                    }
                    1 => {
                        obj.insert("type".into(), types[0].clone());
                    }
                    _ => {
                        let any: Vec<Value> = types.iter().map(|t| json!({"type": t})).collect();
                        obj.insert("anyOf".into(), any.into());
                    }
                }
            }
            Some(Value::String(t)) if t == "null" => {
                nullable = true;
                obj.insert("type".into(), "object".into());
            }
            Some(t @ Value::String(_)) => {
                obj.insert("type".into(), t);
            }
            _ => {}
        }
        if let Some(value) = obj.remove("const") {
            obj.entry("enum")
                .or_insert_with(|| Value::Array(vec![value]));
        }
        let mut out = Map::new();
        for (key, value) in obj {
            if !KEPT.contains(&key.as_str()) {
                continue;
            }
            let value = match key.as_str() {
                "properties" => match value {
                    Value::Object(props) => Value::Object(
                        props
                            .iter()
                            .map(|(k, v)| (k.clone(), self.node(v, ref_depth)))
                            .collect(),
                    ),
                    _ => continue,
                },
                "items" => match &value {
                    Value::Object(_) => self.node(&value, ref_depth),
                    Value::Array(tuple) => match tuple.first() {
                        Some(first) => self.node(first, ref_depth),
                        None => continue,
                    },
                    _ => continue,
                },
                "anyOf" => value,
                _ => value,
            };
            out.insert(key, value);
        }
        if nullable {
            out.insert("nullable".into(), true.into());
        }
        keep_known_required(&mut out);
        drop_unknown_format(&mut out);
        describe_non_string_enum(&mut out);
        Value::Object(out)
    }

    /// The schema a local reference points at.
    fn resolve(&self, pointer: &str) -> Option<Value> {
        let path = pointer.strip_prefix('#')?;
        self.root.pointer(path).cloned()
    }
}

fn is_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// Folds `allOf` parts into the node: properties and `required` are
/// united, other keys kept from the first that sets them.
fn merge_all_of(obj: &mut Map<String, Value>) {
    let Some(Value::Array(parts)) = obj.remove("allOf") else {
        return;
    };
    for part in parts {
        let Value::Object(part) = part else { continue };
        for (k, v) in part {
            match (k.as_str(), obj.get_mut(&k), v) {
                ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                    for (name, schema) in theirs {
                        mine.entry(name).or_insert(schema);
                    }
                }
                ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                    for name in theirs {
                        if !mine.contains(&name) {
                            mine.push(name);
                        }
                    }
                }
                (_, Some(_), _) => {}
                (_, None, v) => {
                    obj.insert(k, v);
                }
            }
        }
    }
}

fn keep_known_required(out: &mut Map<String, Value>) {
    let known: Vec<String> = match out.get("properties") {
        Some(Value::Object(props)) => props.keys().cloned().collect(),
        _ => Vec::new(),
    };
    if let Some(required) = out.get_mut("required") {
        let names: Vec<Value> = match required {
            Value::Array(names) => names
                .iter()
                .filter(|n| n.as_str().is_some_and(|n| known.iter().any(|k| k == n)))
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        if names.is_empty() {
            out.remove("required");
        } else {
            *required = Value::Array(names);
        }
    }
}

/// Gemini takes `enum` only for strings: the values of another enum move
/// into the description, so the model still sees them.
fn describe_non_string_enum(out: &mut Map<String, Value>) {
    let Some(Value::Array(values)) = out.get("enum") else {
        if out.contains_key("enum") {
            out.remove("enum");
        }
        return;
    };
    if values.iter().all(Value::is_string) {
        return;
    }
    let listed: Vec<String> = values.iter().map(Value::to_string).collect();
    let note = format!("Allowed values: {}.", listed.join(", "));
    out.remove("enum");
    let description = match out.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d} {note}"),
        _ => note,
    };
    out.insert("description".into(), description.into());
}

fn drop_unknown_format(out: &mut Map<String, Value>) {
    let is_string = out.get("type").and_then(Value::as_str) == Some("string");
    let keep = match out.get("format") {
        Some(Value::String(f)) => !is_string || STRING_FORMATS.contains(&f.as_str()),
        Some(_) => false,
        None => true,
    };
    if !keep {
        out.remove("format");
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
