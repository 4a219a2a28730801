//! Serde shapes against AgentScope's examples.

use oxiscope_permission::{PermissionContext, PermissionDecision, PermissionMode, PermissionRule};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::common::load;

/// The values of the examples of `wire/<file>`.
fn examples(file: &str) -> Vec<Value> {
    oxiscope_test_support::fixtures::examples(file)
        .into_iter()
        .map(|(_, value)| value)
        .collect()
}

#[test]
fn permission_contexts_round_trip() {
    for value in examples("permission_context.examples.json") {
        let ctx: PermissionContext = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&ctx).unwrap(), value);
    }
}

#[test]
fn permission_decisions_round_trip() {
    for value in examples("permission_decision.examples.json") {
        let decision: PermissionDecision = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&decision).unwrap(), value);
    }
}

#[test]
fn permission_rules_round_trip() {
    let path = "permission_rule.schema.json";
    let schema = load(&format!("wire/{path}"));
    assert_eq!(schema["required"].as_array().unwrap().len(), 4);
    let rule: PermissionRule = serde_json::from_value(serde_json::json!({
        "tool_name": "Bash", "rule_content": "git status:*", "behavior": "allow", "source": "suggested"
    }))
    .unwrap();
    assert_eq!(rule.rule_content.as_deref(), Some("git status:*"));
}

#[test]
fn decision_fields_follow_the_schema_and_optional_fields_default() {
    let schema = load("wire/permission_decision.schema.json");
    let fields: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let decision = PermissionDecision::ask("x");
    let value = serde_json::to_value(&decision).unwrap();
    let written: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(written, fields);
    let minimal: PermissionDecision =
        serde_json::from_str(r#"{"behavior":"deny","message":"no"}"#).unwrap();
    assert!(!minimal.bypass_immune);
    assert_eq!(minimal.suggested_rules, None);
}

#[test]
fn mode_spellings() {
    let schema = load("wire/permission_context.schema.json");
    let wire: Vec<&str> = schema["$defs"]["PermissionMode"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let ours: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
    assert_eq!(ours, wire);
    assert_eq!(
        "accept-edits".parse::<PermissionMode>().unwrap(),
        PermissionMode::AcceptEdits
    );
    assert_eq!(
        "DONT_ASK".parse::<PermissionMode>().unwrap(),
        PermissionMode::DontAsk
    );
    assert!("yolo".parse::<PermissionMode>().is_err());
}

#[test]
fn a_context_missing_keys_deserialises_with_defaults() {
    let ctx: PermissionContext = serde_json::from_str(r#"{"mode":"explore"}"#).unwrap();
    assert_eq!(ctx, PermissionContext::new(PermissionMode::Explore));
}
