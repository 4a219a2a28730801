//! The questions the engine asks a tool about one call.

use oxiscope_message::PermissionRule;
use serde_json::Value;

use crate::context::PermissionContext;
use crate::decision::PermissionDecision;

/// The permission-relevant answers a tool gives about one call.
///
/// The tool crate implements this for every tool (the built-in tools
/// delegate to [`BashPolicy`](crate::BashPolicy) and
/// [`FilePolicy`](crate::FilePolicy)); [`decide`](crate::decide) combines
/// the answers with the rules and the mode.
///
/// `input` is the call's JSON arguments. Implementations must not panic on
/// any input: a missing or mistyped argument makes the call "not read-only"
/// and, in `check_permissions`, an ask or a passthrough.
pub trait ToolPolicy {
    /// The tool name rules are keyed by (`Bash`, `Write`, ...).
    fn tool_name(&self) -> &str;

    /// Whether this call only reads. A `true` answer allows the call in every
    /// mode once no deny or ask rule matched, so it must be conservative.
    fn check_read_only(&self, input: &Value) -> bool;

    /// The tool's own safety analysis: `Allow`, `Deny`, `Ask` (a safety ask
    /// sets `bypass_immune`) or `Passthrough` (no opinion).
    fn check_permissions(&self, input: &Value, context: &PermissionContext) -> PermissionDecision;

    /// Whether a rule with content applies to this call. Rules without
    /// content are matched by the engine and never reach this method. The
    /// rule's behaviour is available so a tool can read restrictive rules
    /// (deny, ask) more broadly than permissive ones.
    fn match_rule(&self, rule: &PermissionRule, input: &Value, context: &PermissionContext)
    -> bool;

    /// Rules that would allow calls like this one, offered when asking.
    fn generate_suggestions(
        &self,
        input: &Value,
        context: &PermissionContext,
    ) -> Vec<PermissionRule>;

    /// Whether the allow rules (all for this tool, content-less ones
    /// included) together allow this call; returns the reason to report.
    ///
    /// The default takes the first matching rule. Bash overrides it so a
    /// compound command is allowed when every sub-command is matched by some
    /// allow rule.
    fn match_allow_rules(
        &self,
        rules: &[PermissionRule],
        input: &Value,
        context: &PermissionContext,
    ) -> Option<String> {
        rules
            .iter()
            .find(|rule| rule.rule_content.is_none() || self.match_rule(rule, input, context))
            .map(|rule| format!("Rule: {}", crate::format_rule(rule)))
    }
}

/// A tool the engine knows nothing about: never read-only, no own check,
/// rules match on the exact JSON serialisation of its input.
///
/// Used for unknown tools (the CLI) and as the behaviour of plain function
/// tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenericPolicy {
    name: String,
}

impl GenericPolicy {
    /// A policy for the tool called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into() }
    }
}

impl ToolPolicy for GenericPolicy {
    fn tool_name(&self) -> &str {
        &self.name
    }

    fn check_read_only(&self, _input: &Value) -> bool {
        false
    }

    fn check_permissions(
        &self,
        _input: &Value,
        _context: &PermissionContext,
    ) -> PermissionDecision {
        PermissionDecision::passthrough(format!("No tool-specific check for {}", self.name))
    }

    /// The rule content is compared with the input serialised as compact
    /// JSON; both sides are parsed when the content is JSON, so key order
    /// and spacing do not matter.
    fn match_rule(
        &self,
        rule: &PermissionRule,
        input: &Value,
        _context: &PermissionContext,
    ) -> bool {
        let Some(content) = rule.rule_content.as_deref() else {
            return true;
        };
        match serde_json::from_str::<Value>(content) {
            Ok(parsed) => &parsed == input,
            Err(_) => content == *input,
        }
    }

    /// Suggests a rule for exactly this input; for an MCP tool
    /// (`mcp__server__tool`), the tool with any input, since a rule
    /// pinned to one call's arguments would rarely match the next.
    fn generate_suggestions(
        &self,
        input: &Value,
        _context: &PermissionContext,
    ) -> Vec<PermissionRule> {
        let content = (!is_mcp_tool(&self.name)).then(|| input.to_string());
        vec![PermissionRule::new(
            self.name.clone(),
            content,
            oxiscope_message::PermissionBehavior::Allow,
            "suggested",
        )]
    }
}

/// Whether `name` is the name of an MCP server's tool, `mcp__{server}__{tool}`.
fn is_mcp_tool(name: &str) -> bool {
    name.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .is_some_and(|(server, tool)| !server.is_empty() && !tool.is_empty())
}

#[cfg(test)]
mod tests {
    use oxiscope_message::PermissionBehavior;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::PermissionMode;

    fn suggestion(tool: &str) -> Vec<PermissionRule> {
        let context = PermissionContext::new(PermissionMode::Default);
        GenericPolicy::new(tool).generate_suggestions(&json!({"path": "/tmp/a"}), &context)
    }

    #[test]
    fn an_mcp_tool_is_suggested_with_any_arguments() {
        assert_eq!(
            suggestion("mcp__files__read_file"),
            vec![PermissionRule::new(
                "mcp__files__read_file",
                None,
                PermissionBehavior::Allow,
                "suggested"
            )]
        );
    }

    #[test]
    fn another_tool_is_suggested_for_exactly_its_input() {
        assert_eq!(
            suggestion("Deploy"),
            vec![PermissionRule::new(
                "Deploy",
                Some(r#"{"path":"/tmp/a"}"#.to_owned()),
                PermissionBehavior::Allow,
                "suggested"
            )]
        );
        assert_eq!(suggestion("mcp__").len(), 1);
        assert!(suggestion("mcp__only")[0].rule_content.is_some());
    }
}
