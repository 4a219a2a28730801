//! The decision table, walked with a scripted tool.

use oxiscope_permission::{
    PermissionBehavior, PermissionContext, PermissionDecision, PermissionMode, PermissionRule,
    ToolPolicy, decide,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::outcome;

/// A tool whose answers are fixed by the test.
struct Scripted {
    read_only: bool,
    check: PermissionDecision,
}

impl ToolPolicy for Scripted {
    fn tool_name(&self) -> &str {
        "Deploy"
    }

    fn check_read_only(&self, _input: &Value) -> bool {
        self.read_only
    }

    fn check_permissions(&self, _input: &Value, _ctx: &PermissionContext) -> PermissionDecision {
        self.check.clone()
    }

    fn match_rule(&self, rule: &PermissionRule, input: &Value, _ctx: &PermissionContext) -> bool {
        rule.rule_content.as_deref() == input["target"].as_str()
    }

    fn generate_suggestions(&self, input: &Value, _ctx: &PermissionContext) -> Vec<PermissionRule> {
        vec![PermissionRule::new(
            "Deploy",
            input["target"].as_str().map(str::to_owned),
            PermissionBehavior::Allow,
            "suggested",
        )]
    }
}

fn tool(read_only: bool, check: &str) -> Scripted {
    let check = match check {
        "allow" => PermissionDecision::allow("tool allows"),
        "deny" => PermissionDecision::deny("tool denies"),
        "ask" => PermissionDecision::ask("tool asks"),
        "ask!" => PermissionDecision::safety_ask("tool safety ask"),
        _ => PermissionDecision::passthrough("no opinion"),
    };
    Scripted { read_only, check }
}

fn rule(behavior: PermissionBehavior) -> PermissionRule {
    PermissionRule::new("Deploy", Some("prod".to_owned()), behavior, "test")
}

/// The outcome per mode (default, accept_edits, explore, bypass, dont_ask).
fn row(policy: &Scripted, rules: &[PermissionRule]) -> Vec<String> {
    PermissionMode::ALL
        .into_iter()
        .map(|mode| {
            let mut ctx = PermissionContext::new(mode);
            for r in rules {
                ctx.add_rule(r.clone());
            }
            outcome(&decide(policy, &json!({ "target": "prod" }), &ctx))
        })
        .collect()
}

fn expect(cells: [&str; 5]) -> Vec<String> {
    cells.iter().map(|c| (*c).to_owned()).collect()
}

#[test]
fn deny_rules_win_in_every_mode_even_over_read_only() {
    let rules = [
        rule(PermissionBehavior::Deny),
        rule(PermissionBehavior::Allow),
    ];
    assert_eq!(row(&tool(true, "allow"), &rules), expect(["deny"; 5]));
}

#[test]
fn ask_rules_ask_in_every_mode_and_deny_in_dont_ask() {
    let rules = [
        rule(PermissionBehavior::Ask),
        rule(PermissionBehavior::Allow),
    ];
    assert_eq!(
        row(&tool(true, "allow"), &rules),
        expect(["ask", "ask", "ask", "ask", "deny"])
    );
}

#[test]
fn read_only_calls_are_allowed_in_every_mode() {
    assert_eq!(row(&tool(true, "ask!"), &[]), expect(["allow"; 5]));
}

#[test]
fn explore_denies_everything_else_and_ignores_allow_rules_and_the_tool() {
    let allow = [rule(PermissionBehavior::Allow)];
    assert_eq!(row(&tool(false, "allow"), &allow)[2], "deny");
    assert_eq!(row(&tool(false, "passthrough"), &[])[2], "deny");
}

#[test]
fn tool_allow_and_deny_are_final_outside_explore() {
    assert_eq!(
        row(&tool(false, "allow"), &[]),
        expect(["allow", "allow", "deny", "allow", "allow"])
    );
    let allow = [rule(PermissionBehavior::Allow)];
    assert_eq!(row(&tool(false, "deny"), &allow), expect(["deny"; 5]));
}

#[test]
fn a_safety_ask_survives_allow_rules_except_in_bypass() {
    let allow = [rule(PermissionBehavior::Allow)];
    assert_eq!(
        row(&tool(false, "ask!"), &allow),
        expect(["ask!", "ask!", "deny", "allow", "deny"])
    );
    assert_eq!(
        row(&tool(false, "ask!"), &[]),
        expect(["ask!", "ask!", "deny", "allow", "deny"])
    );
}

#[test]
fn a_regular_ask_is_overridden_by_an_allow_rule() {
    let allow = [rule(PermissionBehavior::Allow)];
    assert_eq!(
        row(&tool(false, "ask"), &allow),
        expect(["allow", "allow", "deny", "allow", "allow"])
    );
    assert_eq!(
        row(&tool(false, "ask"), &[]),
        expect(["ask", "ask", "deny", "allow", "deny"])
    );
}

#[test]
fn passthrough_falls_back_to_the_mode_default() {
    assert_eq!(
        row(&tool(false, "passthrough"), &[]),
        expect(["ask", "ask", "deny", "allow", "deny"])
    );
}

#[test]
fn a_rule_for_another_input_does_not_apply() {
    let mut ctx = PermissionContext::new(PermissionMode::Default);
    ctx.add_rule(rule(PermissionBehavior::Deny));
    let decision = decide(
        &tool(false, "passthrough"),
        &json!({ "target": "staging" }),
        &ctx,
    );
    assert_eq!(outcome(&decision), "ask");
}

#[test]
fn asks_carry_suggestions_and_dont_ask_keeps_them_on_the_denial() {
    let policy = tool(false, "passthrough");
    let ctx = PermissionContext::new(PermissionMode::Default);
    let ask = decide(&policy, &json!({ "target": "prod" }), &ctx);
    let suggested = vec![PermissionRule::new(
        "Deploy",
        Some("prod".to_owned()),
        PermissionBehavior::Allow,
        "suggested",
    )];
    assert_eq!(ask.suggested_rules, Some(suggested.clone()));
    let ctx = PermissionContext::new(PermissionMode::DontAsk);
    let deny = decide(&policy, &json!({ "target": "prod" }), &ctx);
    assert_eq!(deny.behavior, PermissionBehavior::Deny);
    assert_eq!(deny.suggested_rules, Some(suggested));
    assert!(
        deny.decision_reason
            .unwrap_or_default()
            .contains("DONT_ASK")
    );
}

#[test]
fn a_rule_without_content_matches_every_call() {
    let mut ctx = PermissionContext::new(PermissionMode::Default);
    ctx.add_rule(PermissionRule::new(
        "Deploy",
        None,
        PermissionBehavior::Allow,
        "test",
    ));
    let decision = decide(&tool(false, "passthrough"), &json!({ "target": "x" }), &ctx);
    assert_eq!(outcome(&decision), "allow");
    assert_eq!(
        decision.updated_input,
        json!({ "target": "x" }).as_object().cloned()
    );
}
