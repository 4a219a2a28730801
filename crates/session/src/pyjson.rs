//! JSON written the way Python's `json.dumps(value, ensure_ascii=False)`
//! writes it: `", "` between items, `": "` after keys, non-ASCII text as
//! is. SSE frames use it so clients see byte-identical payloads.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, Serializer};

/// The separators of Python's default `json.dumps`.
#[derive(Debug, Clone, Copy, Default)]
struct PythonFormatter;

impl Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        CompactFormatter.write_f64(w, value)
    }
}

/// `value` as Python's `json.dumps(value, ensure_ascii=False)` text.
///
/// # Errors
/// When `value`'s `Serialize` fails (a map with non-string keys).
pub fn to_python_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(256);
    let mut ser = Serializer::with_formatter(&mut out, PythonFormatter);
    value.serialize(&mut ser)?;
    // serde_json only writes UTF-8.
    String::from_utf8(out).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn separators_and_non_ascii_match_python_defaults() {
        let v = json!({"a": [1, 2.5, null], "b": {"c": "héllo ✓ \"q\"\n"}, "d": true});
        assert_eq!(
            to_python_json(&v).unwrap(),
            "{\"a\": [1, 2.5, null], \"b\": {\"c\": \"héllo ✓ \\\"q\\\"\\n\"}, \"d\": true}"
        );
        assert_eq!(to_python_json(&json!({})).unwrap(), "{}");
        assert_eq!(to_python_json(&json!([])).unwrap(), "[]");
    }
}
