//! Lenient parsing of a model's JSON text.

use serde_json::{Map, Value};

use super::error::RepairError;

/// How many times a JSON document nested in a string is unwrapped.
const MAX_STRING_NESTING: usize = 3;

/// Parses a model's JSON text, forgiving the usual slips.
///
/// In order:
/// 1. empty or blank text is the empty object `{}` (providers send `""` for
///    a call without arguments);
/// 2. the text as it is;
/// 3. the content of a markdown code fence (```` ```json ... ``` ````),
///    wherever the fence starts;
/// 4. the first JSON object or array in the text, ignoring text before it
///    and anything after it.
///
/// A result that is a string holding a JSON object or array (arguments
/// encoded twice) is unwrapped, up to three levels.
///
/// # Errors
/// [`RepairError::InvalidJson`] with the position of the first error in the
/// text as it was, when no step finds a JSON value.
///
/// ```
/// use oxiscope_model::parse_json_lenient;
/// use serde_json::json;
///
/// let v = parse_json_lenient("```json\n{\"a\": 1}\n```")?;
/// assert_eq!(v, json!({"a": 1}));
/// let v = parse_json_lenient("{\"a\": 1} I hope this helps!")?;
/// assert_eq!(v, json!({"a": 1}));
/// let v = parse_json_lenient("\"{\\\"a\\\": 1}\"")?;
/// assert_eq!(v, json!({"a": 1}));
/// # Ok::<(), oxiscope_model::RepairError>(())
/// ```
pub fn parse_json_lenient(raw: &str) -> Result<Value, RepairError> {
    let text = raw.trim();
    if text.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    // Parse the raw text, not the trimmed one, so error positions refer to
    // what the model sent (JSON allows the surrounding whitespace).
    let first_error = match serde_json::from_str::<Value>(raw) {
        Ok(v) => return Ok(unwrap_nested(v)),
        Err(e) => e,
    };
    if let Some(inner) = fenced(text)
        && let Some(v) = parse_whole_or_first(inner)
    {
        return Ok(unwrap_nested(v));
    }
    if let Some(v) = first_value(text) {
        return Ok(unwrap_nested(v));
    }
    Err(RepairError::InvalidJson {
        message: strip_position(&first_error.to_string()),
        line: first_error.line(),
        column: first_error.column(),
    })
}

/// serde_json appends " at line L column C" to its messages; the position
/// is reported in fields instead.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

fn parse_whole_or_first(text: &str) -> Option<Value> {
    serde_json::from_str(text.trim())
        .ok()
        .or_else(|| first_value(text))
}

/// The text between the first code fence and its closing fence (or the end).
fn fenced(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after = &text[start + 3..];
    // Skip the info string (`json`, `JSON`, ...) up to the end of its line.
    let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
    let body = &after[body_start..];
    Some(body.find("```").map_or(body, |end| &body[..end]))
}

/// The first complete JSON object or array in the text, if any.
fn first_value(text: &str) -> Option<Value> {
    let mut offset = 0;
    while let Some(i) = text[offset..].find(['{', '[']) {
        let start = offset + i;
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        if let Some(Ok(v)) = values.next() {
            return Some(v);
        }
        offset = start + 1;
    }
    None
}

fn unwrap_nested(mut value: Value) -> Value {
    for _ in 0..MAX_STRING_NESTING {
        let Value::String(s) = &value else {
            break;
        };
        match serde_json::from_str::<Value>(s.trim()) {
            Ok(inner @ (Value::Object(_) | Value::Array(_) | Value::String(_))) => value = inner,
            _ => break,
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn ok(raw: &str) -> Value {
        parse_json_lenient(raw).unwrap()
    }

    #[test]
    fn plain_json_parses_as_is() {
        assert_eq!(ok(r#"{"a": [1, 2]}"#), json!({"a": [1, 2]}));
        assert_eq!(ok("  42 "), json!(42));
    }

    #[test]
    fn blank_text_is_the_empty_object() {
        assert_eq!(ok(""), json!({}));
        assert_eq!(ok(" \n\t"), json!({}));
    }

    #[test]
    fn fenced_json_is_unwrapped_with_or_without_a_language_tag() {
        assert_eq!(ok("```json\n{\"a\": 1}\n```"), json!({"a": 1}));
        assert_eq!(ok("```\n{\"a\": 1}\n```"), json!({"a": 1}));
        assert_eq!(
            ok("Sure:\n```JSON\n{\"a\": 1}\n```\nDone."),
            json!({"a": 1})
        );
        assert_eq!(ok("```json\n{\"a\": 1}"), json!({"a": 1}), "unclosed fence");
    }

    #[test]
    fn text_around_the_first_object_is_ignored() {
        assert_eq!(ok(r#"{"a": 1} trailing words"#), json!({"a": 1}));
        assert_eq!(ok(r#"{"a": 1}{"b": 2}"#), json!({"a": 1}));
        assert_eq!(ok(r#"Here it is: {"a": "}"} ok"#), json!({"a": "}"}));
        assert_eq!(ok(r#"note {broken then {"a": 1}"#), json!({"a": 1}));
    }

    #[test]
    fn json_encoded_twice_is_unwrapped() {
        assert_eq!(ok(r#""{\"a\": 1}""#), json!({"a": 1}));
        let thrice =
            serde_json::to_string(&serde_json::to_string(&json!({"a": 1}).to_string()).unwrap())
                .unwrap();
        assert_eq!(ok(&thrice), json!({"a": 1}));
        assert_eq!(ok(r#""plain words""#), json!("plain words"));
    }

    #[test]
    fn unparseable_text_reports_the_first_error_position() {
        let err = parse_json_lenient("\n\n  {\"a\": 1,,}").unwrap_err();
        let RepairError::InvalidJson {
            line,
            column,
            message,
        } = err
        else {
            panic!("expected InvalidJson, got {err:?}");
        };
        assert_eq!((line, column), (3, 11));
        assert!(!message.contains(" at line "), "{message}");
        assert!(matches!(
            parse_json_lenient("no json here"),
            Err(RepairError::InvalidJson { line: 1, .. })
        ));
    }

    #[test]
    fn a_truncated_object_is_an_error_not_a_panic() {
        assert!(parse_json_lenient(r#"{"city": "Par"#).is_err());
        assert!(parse_json_lenient("{").is_err());
        assert!(parse_json_lenient("```").is_err());
    }
}
