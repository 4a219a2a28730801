//! The reference data produced by AgentScope 2.0.11 and stored in the
//! repository under `fixtures/agentscope-2.0.11/`, for golden tests.
//!
//! These helpers are for tests: a missing or malformed fixture, or an
//! example that does not round-trip, panics with the file (and example)
//! named.

// Test helpers fail loudly, naming the fixture.
#![allow(clippy::panic)]

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The fixture directory, with a trailing `/`.
pub const ROOT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fixtures/agentscope-2.0.11/"
);

/// The path of `fixtures/agentscope-2.0.11/<relative>`.
#[must_use]
pub fn path(relative: &str) -> PathBuf {
    PathBuf::from(ROOT).join(relative)
}

/// Parses `fixtures/agentscope-2.0.11/<relative>` as JSON.
///
/// # Panics
/// When the file cannot be read or is not JSON.
#[must_use]
pub fn load(relative: &str) -> Value {
    let p = path(relative);
    let text = std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", p.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("fixture {} is not JSON: {e}", p.display()))
}

/// The `(label, value)` of every `{"label", "value"}` entry of
/// `wire/<file>` (a `*.examples.json` file).
///
/// # Panics
/// When the file cannot be read, is not an array, or an entry has no
/// string `label`.
#[must_use]
pub fn examples(file: &str) -> Vec<(String, Value)> {
    let Value::Array(items) = load(&format!("wire/{file}")) else {
        panic!("{file} is not an array")
    };
    items
        .into_iter()
        .map(|mut item| {
            let Some(label) = item["label"].as_str().map(str::to_owned) else {
                panic!("{file}: an example without a label")
            };
            (label, item["value"].take())
        })
        .collect()
}

/// Parses every example of `wire/<file>` as `T` and checks it serialises
/// back to the identical JSON text (same values, same key order). Returns
/// the parsed values, in file order.
///
/// # Panics
/// As [`examples`]; when the file has no examples, or an example does not
/// parse or does not serialise back to the same text (naming its label).
pub fn assert_round_trips<T: DeserializeOwned + Serialize>(file: &str) -> Vec<T> {
    let items = examples(file);
    assert!(!items.is_empty(), "{file} has no examples");
    items
        .iter()
        .map(|(label, value)| {
            let parsed: T = serde_json::from_value(value.clone())
                .unwrap_or_else(|e| panic!("{file} / {label}: does not parse: {e}"));
            let back = serde_json::to_string(&parsed)
                .unwrap_or_else(|e| panic!("{file} / {label}: does not serialise: {e}"));
            let expected =
                serde_json::to_string(value).unwrap_or_else(|e| panic!("{file} / {label}: {e}"));
            assert_eq!(back, expected, "{file} / {label}");
            parsed
        })
        .collect()
}
