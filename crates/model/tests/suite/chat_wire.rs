//! Chat responses, usage and tool choices round-trip AgentScope's examples
//! to the identical JSON text.

use oxiscope_model::{ChatResponse, ChatUsage, ToolChoice, ToolChoiceMode};
use oxiscope_test_support::fixtures::assert_round_trips as round_trips;

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
