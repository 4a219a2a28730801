//! The decision flow: rules, read-only fast path, the tool's check, the mode.

use oxiscope_message::{PermissionBehavior, PermissionRule};
use serde_json::Value;

use crate::context::PermissionContext;
use crate::decision::PermissionDecision;
use crate::mode::PermissionMode;
use crate::policy::ToolPolicy;
use crate::rule::format_rule;

/// Decides one tool call. See the crate documentation for the table.
///
/// Pure apart from what the policy does (the built-in policies may look at
/// the file system to resolve symbolic links); never panics.
#[must_use]
pub fn decide(
    policy: &dyn ToolPolicy,
    input: &Value,
    context: &PermissionContext,
) -> PermissionDecision {
    let tool = policy.tool_name();
    let mode = context.mode;

    // 1. Deny rules, in every mode.
    if let Some(rule) = first_match(policy, PermissionBehavior::Deny, input, context) {
        return PermissionDecision::deny(format!("Permission to use {tool} has been denied"))
            .with_reason(format!("Rule: {}", format_rule(rule)));
    }

    // 2. Ask rules, in every mode (a denial in dont_ask).
    if let Some(rule) = first_match(policy, PermissionBehavior::Ask, input, context) {
        let ask = PermissionDecision::ask(format!("Permission required for {tool}"))
            .with_reason(format!("Rule: {}", format_rule(rule)))
            .with_suggestions(new_suggestions(policy, input, context));
        return settle_ask(ask, tool, mode);
    }

    // 3. The read-only fast path, in every mode.
    if policy.check_read_only(input) {
        return PermissionDecision::allow(format!(
            "Permission granted for {tool} (read-only invocation)"
        ))
        .with_reason("Read-only operations are auto-allowed");
    }

    // Explore stops here: nothing that modifies is allowed, whatever the rules say.
    if mode == PermissionMode::Explore {
        return PermissionDecision::deny(format!(
            "Permission denied for {tool} (explore mode is read-only)"
        ))
        .with_reason("Explore mode does not allow modifications");
    }

    // 4. The tool's own check.
    let check = policy.check_permissions(input, context);
    let mut pending_ask = None;
    match check.behavior {
        PermissionBehavior::Allow | PermissionBehavior::Deny => return check,
        PermissionBehavior::Ask if check.bypass_immune && mode != PermissionMode::Bypass => {
            // No allow rule can override a safety ask, so none is suggested
            // (AgentScope suggests some; they would never take effect).
            let ask = check.with_suggestions(Vec::new());
            return settle_ask(ask, tool, mode);
        }
        PermissionBehavior::Ask => pending_ask = Some(check),
        PermissionBehavior::Passthrough => {}
    }

    // 5. Allow rules.
    let allow_rules = context.rules_for(PermissionBehavior::Allow, tool);
    if let Some(reason) = policy.match_allow_rules(allow_rules, input, context) {
        let decision =
            PermissionDecision::allow(format!("Permission granted for {tool}")).with_reason(reason);
        return match input {
            Value::Object(map) => decision.with_updated_input(map.clone()),
            _ => decision,
        };
    }

    // 6. The mode's default.
    match mode {
        PermissionMode::Bypass => {
            PermissionDecision::allow(format!("Permission granted for {tool} (bypass mode)"))
                .with_reason("Bypass mode allows all operations")
        }
        PermissionMode::Default | PermissionMode::AcceptEdits | PermissionMode::DontAsk => {
            let ask = match pending_ask {
                Some(ask) => with_default_suggestions(ask, policy, input, context),
                None => PermissionDecision::ask(format!("Permission required for {tool}"))
                    .with_reason(format!("Mode: {mode}"))
                    .with_suggestions(new_suggestions(policy, input, context)),
            };
            settle_ask(ask, tool, mode)
        }
        // Unreachable in practice (explore returned above); deny to stay safe.
        PermissionMode::Explore => PermissionDecision::deny(format!(
            "Permission denied for {tool} (explore mode is read-only)"
        ))
        .with_reason("Explore mode does not allow modifications"),
    }
}

/// The first rule of `behavior` for this tool that applies to the call.
fn first_match<'c>(
    policy: &dyn ToolPolicy,
    behavior: PermissionBehavior,
    input: &Value,
    context: &'c PermissionContext,
) -> Option<&'c PermissionRule> {
    context
        .rules_for(behavior, policy.tool_name())
        .iter()
        .find(|rule| rule.rule_content.is_none() || policy.match_rule(rule, input, context))
}

fn with_default_suggestions(
    mut ask: PermissionDecision,
    policy: &dyn ToolPolicy,
    input: &Value,
    context: &PermissionContext,
) -> PermissionDecision {
    if ask.suggested_rules.is_none() {
        ask.suggested_rules = Some(new_suggestions(policy, input, context));
    }
    ask
}

/// The tool's suggestions minus the allow rules the context already has.
fn new_suggestions(
    policy: &dyn ToolPolicy,
    input: &Value,
    context: &PermissionContext,
) -> Vec<PermissionRule> {
    let existing = context.rules_for(PermissionBehavior::Allow, policy.tool_name());
    policy
        .generate_suggestions(input, context)
        .into_iter()
        .filter(|s| {
            !existing
                .iter()
                .any(|r| r.tool_name == s.tool_name && r.rule_content == s.rule_content)
        })
        .collect()
}

/// Turns an ask into a denial when no user is there to answer (dont_ask).
fn settle_ask(ask: PermissionDecision, tool: &str, mode: PermissionMode) -> PermissionDecision {
    if mode != PermissionMode::DontAsk {
        return ask;
    }
    let original = ask
        .decision_reason
        .clone()
        .unwrap_or_else(|| ask.message.clone());
    let mut deny = PermissionDecision::deny(format!(
        "Permission denied for {tool} (dont_ask mode - ASK converted to DENY, user not available)"
    ))
    .with_reason(format!(
        "DONT_ASK mode converted ASK to DENY. Original reason: {original}"
    ));
    deny.suggested_rules = ask.suggested_rules;
    deny
}
