//! The agent state and configs read and write AgentScope's JSON.

use oxiscope_agent::{AgentState, ContextConfig, InjectionConfig, ModelConfig, ReActConfig};
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
fn context_config_examples_round_trip_and_defaults_agree() {
    let configs = round_trips::<ContextConfig>("context_config.examples.json");
    for c in &configs {
        c.validate().unwrap();
    }
    // Our prompt and template are worded differently; every other default
    // is AgentScope's, and the summary schema has the same five fields.
    let ours = ContextConfig::default();
    let theirs = &configs[0];
    assert_eq!(ours.trigger_ratio, theirs.trigger_ratio);
    assert_eq!(ours.reserve_ratio, theirs.reserve_ratio);
    assert_eq!(ours.context_buffer_ratio, theirs.context_buffer_ratio);
    assert_eq!(ours.tool_result_limit, theirs.tool_result_limit);
    assert_eq!(ours.max_image_num, theirs.max_image_num);
    assert_eq!(
        ours.compression_fallback_to_truncation,
        theirs.compression_fallback_to_truncation
    );
    assert_eq!(
        ours.compression_tool_enabled,
        theirs.compression_tool_enabled
    );
    assert_eq!(
        ours.summary_schema["required"],
        theirs.summary_schema["required"]
    );
    assert!(ours.compression_prompt.contains("{current_time}"));
    for field in [
        "task_overview",
        "current_state",
        "important_discoveries",
        "next_steps",
        "context_to_preserve",
    ] {
        assert!(ours.summary_template.contains(&format!("{{{field}}}")));
    }
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
