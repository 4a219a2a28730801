use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use super::*;

fn base() -> Value {
    json!({
        "type": "object",
        "properties": {
            "max_tokens": {"anyOf": [{"exclusiveMinimum": 0, "type": "integer"}, {"type": "null"}], "default": null},
            "thinking_enable": {"default": false, "type": "boolean"},
            "thinking_budget": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
            "temperature": {"anyOf": [{"maximum": 2, "minimum": 0, "type": "number"}, {"type": "null"}], "default": null},
            "voice": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
        },
        "required": ["temperature", "voice"],
    })
}

fn overrides(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("overrides must be an object, got {other}"),
    }
}

/// Output types that keep every parameter of `base()`.
fn thinking() -> Vec<String> {
    vec![
        "text/plain".into(),
        THINKING_OUTPUT_TYPE.into(),
        "audio/wav".into(),
    ]
}

fn property_names(schema: &Value) -> Vec<&str> {
    schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[test]
fn hidden_override_removes_the_property() {
    let merged = merge_parameter_schema(
        &base(),
        &overrides(json!({"voice": {"hidden": true}})),
        &thinking(),
        100,
    );
    assert_eq!(
        property_names(&merged),
        [
            "max_tokens",
            "thinking_enable",
            "thinking_budget",
            "temperature"
        ]
    );
    assert_eq!(merged["required"], json!(["temperature"]));
}

#[test]
fn null_override_removes_the_property() {
    let merged = merge_parameter_schema(
        &base(),
        &overrides(json!({"temperature": null})),
        &thinking(),
        100,
    );
    assert_eq!(
        property_names(&merged),
        ["max_tokens", "thinking_enable", "thinking_budget", "voice"]
    );
    assert_eq!(merged["required"], json!(["voice"]));
}

#[test]
fn object_override_merges_shallowly_in_place() {
    let merged = merge_parameter_schema(
        &base(),
        &overrides(json!({
            "voice": {"default": "Tina", "enum": ["Tina", "Ethan"], "hidden": false},
            "temperature": {"anyOf": [{"maximum": 1, "minimum": 0, "type": "number"}, {"type": "null"}]},
            "not_in_base": {"default": 3},
        })),
        &thinking(),
        100,
    );
    assert_eq!(
        merged["properties"]["voice"],
        json!({"anyOf": [{"type": "string"}, {"type": "null"}], "default": "Tina", "enum": ["Tina", "Ethan"]})
    );
    let voice_keys: Vec<_> = merged["properties"]["voice"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(voice_keys, ["anyOf", "default", "enum"]);
    assert_eq!(
        merged["properties"]["temperature"]["anyOf"][0]["maximum"],
        json!(1)
    );
    assert_eq!(merged["properties"].get("not_in_base"), None);
}

#[test]
fn thinking_parameters_are_dropped_without_thinking_output() {
    let text_and_audio = ["text/plain".to_owned(), "audio/wav".to_owned()];
    let merged = merge_parameter_schema(&base(), &Map::new(), &text_and_audio, 100);
    assert_eq!(
        property_names(&merged),
        ["max_tokens", "temperature", "voice"]
    );

    let kept = merge_parameter_schema(&base(), &Map::new(), &thinking(), 100);
    assert_eq!(
        property_names(&kept),
        [
            "max_tokens",
            "thinking_enable",
            "thinking_budget",
            "temperature",
            "voice"
        ]
    );
}

#[test]
fn max_tokens_is_capped_at_output_size_unless_an_override_sets_a_maximum() {
    let capped = merge_parameter_schema(&base(), &Map::new(), &thinking(), 8192);
    assert_eq!(capped["properties"]["max_tokens"]["maximum"], json!(8192));

    let explicit = merge_parameter_schema(
        &base(),
        &overrides(json!({"max_tokens": {"maximum": 204800}})),
        &thinking(),
        65536,
    );
    assert_eq!(
        explicit["properties"]["max_tokens"]["maximum"],
        json!(204800)
    );
}

#[test]
fn base_is_left_untouched_and_odd_bases_do_not_panic() {
    let original = base();
    let _ = merge_parameter_schema(&original, &overrides(json!({"voice": null})), &[], 1);
    assert_eq!(original, base());

    let from_nothing = merge_parameter_schema(&json!("not a schema"), &Map::new(), &[], 1);
    assert_eq!(from_nothing, json!({"properties": {}}));
    let bad_override =
        merge_parameter_schema(&base(), &overrides(json!({"voice": 7})), &thinking(), 1);
    assert!(bad_override["properties"].get("voice").is_some());
}

#[test]
fn voice_is_dropped_without_audio_output() {
    let text = ["text/plain".to_owned(), THINKING_OUTPUT_TYPE.to_owned()];
    let merged = merge_parameter_schema(&base(), &Map::new(), &text, 100);
    assert_eq!(
        property_names(&merged),
        [
            "max_tokens",
            "thinking_enable",
            "thinking_budget",
            "temperature"
        ]
    );
    assert_eq!(merged["required"], json!(["temperature"]));
}
