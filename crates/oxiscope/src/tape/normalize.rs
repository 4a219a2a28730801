//! What a comparison leaves out (ids, timestamps, the current time told to
//! the model), and what a recording hides (secrets).

use serde_json::Value;

/// Keys whose values every run draws anew.
const VOLATILE_KEYS: [&str; 8] = [
    "id",
    "reply_id",
    "block_id",
    "created_at",
    "finished_at",
    "timestamp",
    "session_id",
    "time",
];

/// The placeholder of a redacted secret.
pub(super) const REDACTED: &str = "[REDACTED]";

/// `value` with the volatile parts blanked, for comparing two runs.
pub(super) fn normalized(mut value: Value) -> Value {
    blank(&mut value);
    value
}

fn blank(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if VOLATILE_KEYS.contains(&key.as_str()) {
                    *v = Value::Null;
                } else {
                    blank(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(blank),
        Value::String(text) => {
            if let Some(without) = without_between(text, "<current-time>", "</current-time>") {
                *text = without;
            }
        }
        _ => {}
    }
}

/// `value` without the token usage a message or chunk carries (another
/// model run counts other tokens).
pub(super) fn without_usage(mut value: Value) -> Value {
    strip_usage(&mut value);
    value
}

fn strip_usage(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("usage");
            map.values_mut().for_each(strip_usage);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_usage),
        _ => {}
    }
}

/// `text` with what lies between `open` and `close` removed, when it has
/// them.
fn without_between(text: &str, open: &str, close: &str) -> Option<String> {
    let start = text.find(open)? + open.len();
    let end = start + text[start..].find(close)?;
    Some(format!("{}{}", &text[..start], &text[end..]))
}

/// `value` with every occurrence of each pair's first text replaced by its
/// second (a run's directory by its placeholder, or back).
pub(super) fn aliased(mut value: Value, aliases: &[(String, String)]) -> Value {
    if !aliases.is_empty() {
        alias(&mut value, aliases);
    }
    value
}

fn alias(value: &mut Value, aliases: &[(String, String)]) {
    match value {
        Value::Object(map) => map.values_mut().for_each(|v| alias(v, aliases)),
        Value::Array(items) => items.iter_mut().for_each(|v| alias(v, aliases)),
        Value::String(text) => {
            for (from, to) in aliases.iter().filter(|(from, _)| !from.is_empty()) {
                if text.contains(from.as_str()) {
                    *text = text.replace(from.as_str(), to);
                }
            }
        }
        _ => {}
    }
}

/// `value` with every occurrence of `secrets`, and every word shaped like
/// an API key (`sk-…`, `Bearer …`), replaced by [`REDACTED`].
pub(super) fn redacted(mut value: Value, secrets: &[String]) -> Value {
    redact(&mut value, secrets);
    value
}

fn redact(value: &mut Value, secrets: &[String]) {
    match value {
        Value::Object(map) => map.values_mut().for_each(|v| redact(v, secrets)),
        Value::Array(items) => items.iter_mut().for_each(|v| redact(v, secrets)),
        Value::String(text) => {
            let mut out = text.clone();
            for secret in secrets.iter().filter(|s| !s.is_empty()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
            *text = redact_key_shapes(&out);
        }
        _ => {}
    }
}

/// Words that look like API keys: `sk-` then 16 or more key characters,
/// and the token after `Bearer `.
fn redact_key_shapes(text: &str) -> String {
    let key_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = [rest.find("sk-"), rest.find("Bearer ")]
            .into_iter()
            .flatten()
            .min();
        let Some(at) = next else {
            out.push_str(rest);
            return out;
        };
        let prefix = if rest[at..].starts_with("sk-") {
            "sk-"
        } else {
            "Bearer "
        };
        let body = &rest[at + prefix.len()..];
        let len = body.find(|c: char| !key_char(c)).unwrap_or(body.len());
        let long_enough = if prefix == "sk-" { len >= 16 } else { len >= 8 };
        out.push_str(&rest[..at + prefix.len()]);
        if long_enough {
            out.push_str(REDACTED);
            rest = &body[len..];
        } else {
            rest = body;
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn ids_times_and_the_current_time_are_blanked() {
        let value = json!({"id": "x", "nested": [{"reply_id": "r", "text": "a<current-time>12:00</current-time>b"}], "keep": 1});
        assert_eq!(
            normalized(value),
            json!({"id": null, "nested": [{"reply_id": null, "text": "a<current-time></current-time>b"}], "keep": 1})
        );
    }

    #[test]
    fn aliases_replace_every_occurrence_in_strings_only() {
        let value = json!({"/tmp/run": "cd /tmp/run/ws && ls /tmp/run", "n": [1, "/tmp/run"]});
        let aliases = [("/tmp/run".to_owned(), "{run}".to_owned())];
        assert_eq!(
            aliased(value, &aliases),
            json!({"/tmp/run": "cd {run}/ws && ls {run}", "n": [1, "{run}"]})
        );
    }

    #[test]
    fn secrets_and_key_shapes_are_redacted() {
        let value = json!({"a": "my hunter2 pass", "b": ["key sk-abcdefghijklmnop1234 end", "sk-short"], "c": "Bearer abcdefghij."});
        assert_eq!(
            redacted(value, &["hunter2".to_owned()]),
            json!({"a": "my [REDACTED] pass", "b": ["key sk-[REDACTED] end", "sk-short"], "c": "Bearer [REDACTED]."})
        );
    }
}
