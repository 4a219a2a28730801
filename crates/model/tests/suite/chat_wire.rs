//! Chat responses, usage and tool choices round-trip AgentScope's examples
//! to the identical JSON text.

use oxiscope_model::{ChatResponse, ChatUsage, ToolChoice, ToolChoiceMode};
use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::fixtures::load;

fn round_trips<T: DeserializeOwned + Serialize>(file: &str) -> Vec<T> {
    let Value::Array(items) = load(&format!("wire/{file}")) else {
        panic!("{file}")
    };
    assert!(!items.is_empty());
    items
        .iter()
        .map(|item| {
            let label = item["label"].as_str().unwrap();
            let parsed: T = serde_json::from_value(item["value"].clone())
                .unwrap_or_else(|e| panic!("{file} / {label}: {e}"));
            assert_eq!(
                serde_json::to_string(&parsed).unwrap(),
                serde_json::to_string(&item["value"]).unwrap(),
                "{file} / {label}"
            );
            parsed
        })
        .collect()
}

#[test]
fn chat_response_examples_round_trip() {
    let all = round_trips::<ChatResponse>("chat_response.examples.json");
    assert!(all.iter().any(|r| r.is_last && r.usage.is_some()));
}

#[test]
fn chat_usage_examples_round_trip() {
    round_trips::<ChatUsage>("chat_usage.examples.json");
}

#[test]
fn tool_choice_examples_round_trip_with_typed_modes() {
    let all = round_trips::<ToolChoice>("tool_choice.examples.json");
    let modes: Vec<&ToolChoiceMode> = all.iter().map(|c| &c.mode).collect();
    assert!(modes.contains(&&ToolChoiceMode::Tool("Bash".into())));
    assert!(modes.contains(&&ToolChoiceMode::Required));
}
