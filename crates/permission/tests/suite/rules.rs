//! The `Tool(content)` rule syntax.

use oxiscope_permission::{Error, PermissionBehavior, PermissionRule, format_rule, parse_rule};
use pretty_assertions::assert_eq;

#[test]
fn parses_tool_and_content() {
    let rule = parse_rule(" Bash(git commit:*) ", PermissionBehavior::Allow, "cli").unwrap();
    assert_eq!(
        rule,
        PermissionRule::new(
            "Bash",
            Some("git commit:*".into()),
            PermissionBehavior::Allow,
            "cli"
        )
    );
    let rule = parse_rule("Bash(echo (x))", PermissionBehavior::Deny, "cli").unwrap();
    assert_eq!(rule.rule_content.as_deref(), Some("echo (x)"));
    let rule = parse_rule("mcp__github__create_issue", PermissionBehavior::Ask, "cli").unwrap();
    assert_eq!(rule.rule_content, None);
}

#[test]
fn formats_back_to_the_same_text() {
    for text in [
        "Bash(git commit:*)",
        "Write(**/.env)",
        "Read",
        "my_tool({\"a\":1})",
    ] {
        let rule = parse_rule(text, PermissionBehavior::Allow, "x").unwrap();
        assert_eq!(format_rule(&rule), text);
    }
}

#[test]
fn rejects_malformed_rules() {
    for bad in [
        "",
        "(x)",
        "Bash(",
        "Bash(x",
        "Bash()",
        "Bash)",
        "Ba sh(x)",
        "Bash(x) y",
    ] {
        let err = parse_rule(bad, PermissionBehavior::Allow, "x").unwrap_err();
        assert!(matches!(err, Error::InvalidRule { .. }), "{bad:?}: {err}");
    }
}
