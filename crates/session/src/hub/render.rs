//! Filling an MCP card's template: the user's values are checked against
//! the card's `inputs_schema`, then every `${name}` in the template's
//! strings is replaced by its value.

use oxiscope_workspace::{McpDeclaration, McpServerConfig};
use serde_json::{Map, Value, json};

use crate::api::McpCard;
use crate::error::SessionError;

/// Checks an installed MCP's name: 1 to 64 of `[a-zA-Z0-9_-]` (it becomes
/// part of the model-facing tool names).
///
/// # Errors
/// 422 at `loc`.
pub fn validate_name(name: &str, loc: &[&str]) -> Result<(), SessionError> {
    oxiscope_workspace::validate_id("name", name).map_err(|_| {
        SessionError::invalid(
            loc,
            "The name must be 1 to 64 letters, digits, '_' or '-'",
            "value_error",
        )
    })
}

/// The declaration `card` renders to with `values` (the schema's defaults
/// fill what is missing), named `name`; also returns the values used.
///
/// # Errors
/// 422 when the values break the card's schema or a placeholder has no
/// value; 500 when the card itself is unusable.
pub fn render_mcp(
    card: &McpCard,
    name: &str,
    values: Map<String, Value>,
) -> Result<(McpDeclaration, Map<String, Value>), SessionError> {
    let values = with_defaults(&card.inputs_schema, values);
    check_values(&card.inputs_schema, &values)?;
    let mut template = serde_json::to_value(&card.config_template)
        .map_err(|e| SessionError::Internal(format!("card {}: {e}", card.id)))?;
    substitute(&mut template, &values)?;
    let config: McpServerConfig = serde_json::from_value(template).map_err(|e| {
        SessionError::Invalid(format!("The card's rendered config is not usable: {e}"))
    })?;
    let declaration = McpDeclaration {
        name: name.to_owned(),
        is_stateful: card.is_stateful,
        mcp_config: config,
        enable_tools: None,
        disable_tools: None,
        execution_timeout: None,
        stream_progress: false,
    };
    declaration
        .validate()
        .map_err(|e| SessionError::invalid(&["body"], e.to_string(), "value_error"))?;
    Ok((declaration, values))
}

/// `values` with the schema's property defaults added where absent.
fn with_defaults(
    schema: &Map<String, Value>,
    mut values: Map<String, Value>,
) -> Map<String, Value> {
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (key, prop) in props {
            if let Some(default) = prop.get("default")
                && !values.contains_key(key)
            {
                values.insert(key.clone(), default.clone());
            }
        }
    }
    values
}

/// Validates `values` against the card's schema; messages never quote a
/// value (it may be a secret).
fn check_values(
    schema: &Map<String, Value>,
    values: &Map<String, Value>,
) -> Result<(), SessionError> {
    if schema.is_empty() {
        return Ok(());
    }
    let schema = Value::Object(schema.clone());
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| SessionError::Internal(format!("a card's inputs_schema is invalid: {e}")))?;
    let instance = Value::Object(values.clone());
    let items: Vec<Value> = validator
        .iter_errors(&instance)
        .take(20)
        .map(|e| {
            let mut loc = vec![json!("body"), json!("values")];
            loc.extend(
                e.instance_path()
                    .to_string()
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(|s| json!(s)),
            );
            json!({"type": "value_error", "loc": loc, "msg": e.masked().to_string(), "input": null})
        })
        .collect();
    if items.is_empty() {
        Ok(())
    } else {
        Err(SessionError::Fields(items))
    }
}

/// Replaces `${name}` in every string of `value`.
fn substitute(value: &mut Value, values: &Map<String, Value>) -> Result<(), SessionError> {
    match value {
        Value::String(s) => {
            if s.contains("${") {
                *s = fill(s, values)?;
            }
            Ok(())
        }
        Value::Array(items) => items.iter_mut().try_for_each(|v| substitute(v, values)),
        Value::Object(map) => map.values_mut().try_for_each(|v| substitute(v, values)),
        _ => Ok(()),
    }
}

fn fill(text: &str, values: &Map<String, Value>) -> Result<String, SessionError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let key = &after[..end];
        let missing = || {
            SessionError::invalid(
                &["body", "values", key],
                format!("The card's template needs a value for {key:?}"),
                "missing",
            )
        };
        match values.get(key) {
            Some(Value::String(v)) => out.push_str(v),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => out.push_str(&v.to_string()),
            _ => return Err(missing()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn placeholders_are_filled_anywhere_in_a_string() {
        let mut v = json!({"url": "https://x/${a}/p?k=${b}", "list": ["${a}${a}", 3], "n": "${n}"});
        substitute(&mut v, &values(json!({"a": "A", "b": "B", "n": 5}))).unwrap();
        assert_eq!(
            v,
            json!({"url": "https://x/A/p?k=B", "list": ["AA", 3], "n": "5"})
        );
    }

    #[test]
    fn a_placeholder_without_a_value_is_a_422() {
        let mut v = json!({"h": "Bearer ${key}"});
        let e = substitute(&mut v, &Map::new()).unwrap_err();
        assert!(matches!(e, crate::SessionError::Fields(_)), "{e:?}");
        // An unterminated `${` is left as it is.
        assert_eq!(fill("a ${b", &Map::new()).unwrap(), "a ${b");
    }

    #[test]
    fn schema_errors_do_not_quote_the_value() {
        let schema = values(json!({"type": "object", "properties": {"key": {"type": "integer"}}}));
        let e = check_values(&schema, &values(json!({"key": "sk-very-secret"}))).unwrap_err();
        let SessionError::Fields(items) = e else {
            panic!()
        };
        assert!(
            !json!(items).to_string().contains("sk-very-secret"),
            "{items:?}"
        );
        assert_eq!(items[0]["loc"], json!(["body", "values", "key"]));
    }
}
