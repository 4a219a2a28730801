//! Python's `repr` of JSON values, for result texts AgentScope builds with
//! it (a task's metadata, a quoted argument).

use std::fmt::Write as _;

use serde_json::Value;

/// A JSON value as Python prints the equal object (`{'k': True, 'n': None}`),
/// which is how AgentScope shows a task's metadata.
pub(super) fn py_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => py_str(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(py_repr).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", py_str(k), py_repr(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

/// A string as Python's `repr` writes it: single quotes unless the text
/// has one and no double quote, control characters escaped.
pub(super) fn py_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{py_repr, py_str};

    #[test]
    fn strings_are_quoted_as_python_quotes_them() {
        assert_eq!(py_str("1-5"), "'1-5'");
        assert_eq!(py_str("it's"), "\"it's\"");
        assert_eq!(py_str("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(py_str("a\tb\u{1}"), "'a\\tb\\x01'");
        assert_eq!(py_str("été"), "'été'");
    }

    #[test]
    fn values_print_as_python_objects() {
        assert_eq!(
            py_repr(&json!({"a": [1, 2.5, null], "b": {"c": false}})),
            "{'a': [1, 2.5, None], 'b': {'c': False}}"
        );
        assert_eq!(py_repr(&json!([])), "[]");
        assert_eq!(py_repr(&json!({})), "{}");
    }
}
