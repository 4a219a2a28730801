//! Loading the reference vectors copied from AgentScope 2.0.11.

use std::path::PathBuf;

use serde_json::Value;

pub(crate) fn path(relative: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/agentscope-2.0.11"
    ))
    .join(relative)
}

pub(crate) fn load(relative: &str) -> Value {
    let p = path(relative);
    let text = std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", p.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("fixture {} is not JSON: {e}", p.display()))
}

/// The `{"label", "value"}` entries of a `wire/*.examples.json` file.
pub(crate) fn examples(file: &str) -> Vec<(String, Value)> {
    let Value::Array(items) = load(&format!("wire/{file}")) else {
        panic!("{file} is not an array")
    };
    items
        .into_iter()
        .map(|mut item| {
            let label = item["label"].as_str().expect("label").to_owned();
            (label, item["value"].take())
        })
        .collect()
}
