//! Argument parsing, repair and validation.

use oxiscope_message::ToolResultState;
use oxiscope_tool::args::ArgumentSchema;
use oxiscope_tool::{SessionState, ToolContext};
use pretty_assertions::assert_eq;
use proptest::strategy::Strategy;
use serde_json::{Value, json};

use super::support::{builtin_toolkit, ctx, expect, run};

fn schema() -> ArgumentSchema {
    ArgumentSchema::new(json!({
        "type": "object",
        "properties": {
            "count": {"type": "integer", "minimum": 0},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean", "default": false},
            "name": {"type": "string"},
            "options": {"type": "object", "properties": {"depth": {"type": "integer"}}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
            "mode": {"type": "string", "enum": ["a", "b"], "default": "a"}
        },
        "required": ["count"]
    }))
    .unwrap()
}

fn prepare(raw: &str) -> Result<Value, String> {
    schema().prepare("demo", raw).map_err(|e| e.to_string())
}

#[test]
fn valid_arguments_pass_and_missing_optional_fields_get_their_defaults() {
    assert_eq!(
        prepare(r#"{"count": 2}"#).unwrap(),
        json!({"count": 2, "flag": false, "maybe": null, "mode": "a"})
    );
}

#[test]
fn numbers_and_booleans_sent_as_strings_are_repaired() {
    let value = prepare(r#"{"count": "3", "ratio": "0.5", "flag": "true", "maybe": "7"}"#).unwrap();
    assert_eq!(value["count"], json!(3));
    assert_eq!(value["ratio"], json!(0.5));
    assert_eq!(value["flag"], json!(true));
    assert_eq!(value["maybe"], json!(7));
}

#[test]
fn whole_floats_become_integers_and_scalars_become_strings() {
    let value = prepare(r#"{"count": 4.0, "name": 12}"#).unwrap();
    assert_eq!(value["count"], json!(4));
    assert_eq!(value["name"], json!("12"));
}

#[test]
fn json_nested_in_a_string_is_parsed() {
    let value =
        prepare(r#"{"count": 1, "options": "{\"depth\": \"2\"}", "tags": "[\"x\",\"y\"]"}"#)
            .unwrap();
    assert_eq!(value["options"], json!({"depth": 2}));
    assert_eq!(value["tags"], json!(["x", "y"]));
}

#[test]
fn a_doubly_encoded_argument_object_is_unwrapped() {
    let raw = serde_json::to_string(&json!({"count": 5}).to_string()).unwrap();
    assert_eq!(prepare(&raw).unwrap()["count"], json!(5));
}

#[test]
fn a_null_optional_field_is_treated_as_missing() {
    let value = prepare(r#"{"count": 1, "mode": null, "name": null}"#).unwrap();
    assert_eq!(value["mode"], json!("a"));
    assert!(value.get("name").is_none());
}

#[test]
fn an_empty_argument_string_means_an_empty_object() {
    let err = prepare("  ").unwrap_err();
    assert!(err.contains("\"count\" is a required property"), "{err}");
}

#[test]
fn a_missing_required_field_is_reported() {
    let err = prepare(r#"{"flag": true}"#).unwrap_err();
    assert!(
        err.starts_with("Invalid arguments for tool `demo`:"),
        "{err}"
    );
    assert!(err.contains("count"), "{err}");
}

#[test]
fn values_that_cannot_be_repaired_are_reported_with_their_location() {
    let err = schema()
        .prepare("demo", r#"{"count": "three", "mode": "c"}"#)
        .unwrap_err();
    let paths: Vec<&str> = err.problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["/count", "/mode"]);
    let text = err.to_string();
    assert!(text.contains("at `/count`"), "{text}");
    assert!(text.contains("\"three\""), "{text}");
}

#[test]
fn a_negative_count_violates_the_minimum() {
    let err = prepare(r#"{"count": -1}"#).unwrap_err();
    assert!(err.contains("minimum of 0"), "{err}");
}

#[test]
fn broken_json_is_reported_not_panicked_on() {
    for raw in [
        r#"{"count": 1"#,
        "{count: 1}",
        "\u{0}",
        "[1, 2]",
        "42",
        "\"text\"",
    ] {
        let err = prepare(raw).unwrap_err();
        assert!(
            err.starts_with("Invalid arguments for tool `demo`:"),
            "{raw}: {err}"
        );
    }
}

#[tokio::test]
async fn the_toolkit_returns_argument_problems_as_error_results() {
    let dir = tempfile::tempdir().unwrap();
    let toolkit = builtin_toolkit(dir.path());
    let session = SessionState::default();
    let response = run(
        &toolkit,
        "Bash",
        json!({"timeout": "soon"}),
        ctx(dir.path(), &session),
    )
    .await;
    let text = expect(&response, ToolResultState::Error);
    assert!(text.contains("Invalid arguments for tool `Bash`"), "{text}");
    assert!(text.contains("command"), "{text}");
    assert!(text.contains("/timeout"), "{text}");
}

#[tokio::test]
async fn an_unknown_tool_is_an_error_result_naming_the_available_tools() {
    let dir = tempfile::tempdir().unwrap();
    let toolkit = builtin_toolkit(dir.path());
    let response = run(
        &toolkit,
        "Bsh",
        json!({}),
        ctx(dir.path(), &SessionState::default()),
    )
    .await;
    let text = expect(&response, ToolResultState::Error);
    assert!(
        text.starts_with(
            "ToolNotFoundError: The tool named 'Bsh' doesn't exist. Available tools: "
        ),
        "{text}"
    );
    assert!(text.contains("Bash"), "{text}");
    assert!(
        toolkit
            .prepare("Bsh", "{}", &ToolContext::default())
            .is_err()
    );
}

/// Book a trip.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Trip {
    /// Where to.
    destination: Place,
    /// How many travellers.
    travellers: u32,
    /// Travel class.
    #[serde(default)]
    class: Class,
    /// A note for the agent, if any.
    note: Option<String>,
}

/// A place.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Place {
    /// The city.
    city: String,
    /// Nights to stay.
    nights: u8,
}

/// Seat class.
#[derive(Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Class {
    /// The cheap seats.
    #[default]
    Economy,
    /// The others.
    Business,
}

fn trip_toolkit() -> oxiscope_tool::Toolkit {
    let mut toolkit = oxiscope_tool::Toolkit::new();
    toolkit
        .register(oxiscope_tool::FunctionTool::new(
            "book",
            |t: Trip| async move {
                let class = match t.class {
                    Class::Economy => "economy",
                    Class::Business => "business",
                };
                format!(
                    "{} x{} for {} nights, {class}, note: {:?}",
                    t.destination.city, t.travellers, t.destination.nights, t.note
                )
            },
        ))
        .unwrap();
    toolkit
}

#[tokio::test]
async fn nested_schemars_definitions_are_repaired_through_refs() {
    let toolkit = trip_toolkit();
    let schema = &toolkit.schemas(&ToolContext::default())[0].function;
    assert_eq!(schema.description, "Book a trip.");
    assert!(schema.parameters.get("$schema").is_none() && schema.parameters.get("title").is_none());
    let dir = tempfile::tempdir().unwrap();
    let session = SessionState::default();
    let raw = json!({
        "destination": "{\"city\": \"Oslo\", \"nights\": \"3\"}",
        "travellers": "2",
        "note": null
    });
    let response = run(&toolkit, "book", raw, ctx(dir.path(), &session)).await;
    assert_eq!(
        expect(&response, ToolResultState::Success),
        "Oslo x2 for 3 nights, economy, note: None"
    );
    let wrong =
        json!({"destination": {"city": "Oslo", "nights": 300}, "travellers": 1, "class": "first"});
    let response = run(&toolkit, "book", wrong, ctx(dir.path(), &session)).await;
    let text = expect(&response, ToolResultState::Error);
    assert!(
        text.contains("/destination/nights") && text.contains("/class"),
        "{text}"
    );
}

proptest::proptest! {
    #[test]
    fn arbitrary_argument_strings_never_panic(raw in ".{0,64}") {
        let _ = schema().prepare("demo", &raw);
        let toolkit = trip_toolkit();
        let _ = toolkit.prepare("book", &raw, &ToolContext::default());
    }

    #[test]
    fn arbitrary_json_values_never_panic(
        count in proptest::prop_oneof![
            proptest::strategy::Just(json!(null)),
            ".{0,8}".prop_map(Value::from),
            proptest::num::f64::ANY.prop_map(Value::from),
            proptest::num::i64::ANY.prop_map(Value::from),
        ],
        tags in ".{0,16}",
    ) {
        let raw = json!({"count": count, "tags": tags, "options": tags, "maybe": count}).to_string();
        let _ = schema().prepare("demo", &raw);
    }
}
