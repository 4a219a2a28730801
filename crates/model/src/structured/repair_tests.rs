use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;

fn city() -> Value {
    json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "population": {"type": "integer"},
            "capital": {"type": "boolean"},
            "area": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["city", "population"],
        "additionalProperties": false,
    })
}

fn violations(err: RepairError) -> Vec<Violation> {
    match err {
        RepairError::SchemaMismatch { violations } => violations,
        other => panic!("expected a schema mismatch, got {other:?}"),
    }
}

#[test]
fn valid_arguments_pass_unchanged() {
    let raw = r#"{"city": "Paris", "population": 2102650, "tags": ["fr"]}"#;
    assert_eq!(
        repair_json_arguments(raw, &city()).unwrap(),
        json!({"city": "Paris", "population": 2_102_650, "tags": ["fr"]})
    );
}

#[test]
fn numbers_and_booleans_written_as_strings_are_coerced() {
    let raw = r#"{"city": "Paris", "population": "3", "capital": "true", "area": "105.4"}"#;
    assert_eq!(
        repair_json_arguments(raw, &city()).unwrap(),
        json!({"city": "Paris", "population": 3, "capital": true, "area": 105.4})
    );
}

#[test]
fn the_whole_object_encoded_as_a_string_is_unwrapped() {
    let raw = serde_json::to_string(r#"{"city": "Paris", "population": 3}"#).unwrap();
    assert_eq!(
        repair_json_arguments(&raw, &city()).unwrap(),
        json!({"city": "Paris", "population": 3})
    );
}

#[test]
fn a_nested_array_encoded_as_a_string_is_unwrapped() {
    let raw = r#"{"city": "Paris", "population": 3, "tags": "[\"a\", \"b\"]"}"#;
    assert_eq!(
        repair_json_arguments(raw, &city()).unwrap()["tags"],
        json!(["a", "b"])
    );
}

#[test]
fn fences_and_trailing_text_are_stripped() {
    let fenced = "```json\n{\"city\": \"Paris\", \"population\": 3}\n```";
    let trailing = "{\"city\": \"Paris\", \"population\": 3}\nLet me know if you need more.";
    for raw in [fenced, trailing] {
        assert_eq!(
            repair_json_arguments(raw, &city()).unwrap(),
            json!({"city": "Paris", "population": 3}),
            "{raw}"
        );
    }
}

#[test]
fn a_wrong_type_names_the_field_path() {
    let err =
        repair_json_arguments(r#"{"city": "Paris", "population": "many"}"#, &city()).unwrap_err();
    let text = err.to_string();
    let v = violations(err);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].path, "/population");
    assert!(v[0].message.contains("integer"), "{}", v[0].message);
    assert!(text.contains("at `/population`"), "{text}");
}

#[test]
fn a_missing_field_is_reported_at_the_top_level() {
    let v = violations(repair_json_arguments(r#"{"city": "Paris"}"#, &city()).unwrap_err());
    assert_eq!(v[0].path, "");
    assert!(v[0].message.contains("population"), "{}", v[0].message);
    assert!(v[0].to_string().starts_with("at the top level: "));
}

#[test]
fn every_violation_is_listed_with_its_own_path() {
    // (A number where a string is expected is repaired into its text, so
    // the wrong values here are an array and an object.)
    let raw = r#"{"city": [5], "population": 1, "tags": ["ok", {"n": 7}], "extra": 1}"#;
    let mut paths: Vec<String> = violations(repair_json_arguments(raw, &city()).unwrap_err())
        .into_iter()
        .map(|v| v.path)
        .collect();
    paths.sort();
    assert_eq!(paths, ["", "/city", "/tags/1"]);
}

#[test]
fn broken_json_is_an_invalid_json_error() {
    let err = repair_json_arguments(r#"{"city": "Par"#, &city()).unwrap_err();
    assert!(
        matches!(err, RepairError::InvalidJson { line: 1, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("the arguments are not valid JSON")
    );
}

#[test]
fn empty_arguments_are_an_empty_object() {
    let schema = json!({"type": "object", "properties": {}});
    assert_eq!(repair_json_arguments("", &schema).unwrap(), json!({}));
    let v = violations(repair_json_arguments("", &city()).unwrap_err());
    assert_eq!(v.len(), 2, "both required fields are missing: {v:?}");
}

#[test]
fn an_invalid_schema_is_reported_as_such() {
    let err = JsonRepairer::new(&json!({"type": 12})).unwrap_err();
    assert!(matches!(err, RepairError::InvalidSchema { .. }), "{err:?}");
    let err = JsonRepairer::new(&json!({"$ref": "#/$defs/Missing"})).unwrap_err();
    assert!(matches!(err, RepairError::InvalidSchema { .. }), "{err:?}");
}

#[test]
fn a_remote_ref_is_refused_not_fetched() {
    let schema = json!({"$ref": "https://127.0.0.1:9/schema.json"});
    assert!(matches!(
        JsonRepairer::new(&schema),
        Err(RepairError::InvalidSchema { .. })
    ));
}

#[test]
fn a_compiled_repairer_is_reusable_and_checks_parsed_values() {
    let r = JsonRepairer::new(&city()).unwrap();
    assert_eq!(r.schema(), &city());
    assert_eq!(
        r.check(json!({"city": "A", "population": "1"})).unwrap(),
        json!({"city": "A", "population": 1})
    );
    assert!(r.repair(r#"{"city": "B", "population": 2}"#).is_ok());
}

#[test]
fn pydantic_style_refs_and_optionals_are_repaired() {
    let schema = json!({
        "$defs": {"Stop": {"type": "object", "properties": {"minutes": {"type": "integer"}},
                           "required": ["minutes"]}},
        "type": "object",
        "properties": {
            "stops": {"type": "array", "items": {"$ref": "#/$defs/Stop"}},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["stops"],
    });
    let raw = r#"{"stops": [{"minutes": "5"}], "note": "10", "limit": "null"}"#;
    assert_eq!(
        repair_json_arguments(raw, &schema).unwrap(),
        json!({"stops": [{"minutes": 5}], "note": "10", "limit": null})
    );
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            ".{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,4}|city|population|tags", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn on_arbitrary_text(raw in ".{0,64}") {
            let _ = repair_json_arguments(&raw, &city());
        }

        #[test]
        fn on_json_like_text(raw in r#"[\{\}\[\]",:0-9a-z ]{0,48}"#) {
            let _ = parse_json_lenient(&raw);
            let _ = repair_json_arguments(&raw, &city());
        }

        #[test]
        fn on_arbitrary_values_and_their_text(value in json_value()) {
            let repairer = JsonRepairer::new(&city()).unwrap();
            if let Ok(fixed) = repairer.check(value.clone()) {
                prop_assert!(jsonschema::is_valid(&city(), &fixed));
            }
            let _ = repairer.repair(&value.to_string());
            let _ = repairer.repair(&serde_json::to_string(&value.to_string()).unwrap());
        }
    }
}
