//! The agent state and configs read and write AgentScope's JSON.

use oxiscope_agent::{AgentState, InjectionConfig, ModelConfig, ReActConfig};
use oxiscope_test_support::fixtures::assert_round_trips as round_trips;
use pretty_assertions::assert_eq;
use serde_json::Value;

/// Parses `wire/<file>`.
fn load(file: &str) -> Value {
    oxiscope_test_support::fixtures::load(&format!("wire/{file}"))
}

#[test]
fn agent_state_examples_round_trip() {
    let states = round_trips::<AgentState>("agent_state.examples.json");
    assert_eq!(states.len(), 4);
    assert!(states.iter().any(|s| !s.context.is_empty()));
}

#[test]
fn a_legacy_state_moves_reply_id_and_iteration_into_the_reply_context() {
    let case = load("agent_state.legacy_migration.json");
    let state: AgentState = serde_json::from_value(case["input"].clone()).unwrap();
    assert_eq!(serde_json::to_value(&state).unwrap(), case["parsed"]);
}

#[test]
fn react_config_examples_round_trip() {
    // Our default interruption message is worded differently; the examples
    // carry AgentScope's explicitly, so they still round-trip.
    round_trips::<ReActConfig>("react_config.examples.json");
}

#[test]
fn injection_config_examples_round_trip() {
    round_trips::<InjectionConfig>("injection_config.examples.json");
}

#[test]
fn model_config_examples_round_trip() {
    // `fallback_model` is a model object in AgentScope; in JSON it is null.
    let Value::Array(items) = load("model_config.examples.json") else {
        panic!()
    };
    for item in items {
        let parsed: ModelConfig = serde_json::from_value(item["value"].clone()).unwrap();
        assert_eq!(
            Some(&Value::from(parsed.max_retries)),
            item["value"].get("max_retries")
        );
    }
}
