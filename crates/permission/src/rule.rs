//! The rule syntax shared by the CLI, the config file and the console:
//! `Tool(content)` for one pattern, `Tool` for every call of the tool.

use oxiscope_message::{PermissionBehavior, PermissionRule};

use crate::error::{Error, Result};

/// Parses `Tool(content)` or `Tool` into a rule with the given behaviour and source.
///
/// The content runs to the last `)`, so it may itself contain parentheses
/// (`Bash(echo (x))`). `Tool()` is rejected: an empty pattern is almost
/// certainly a typo for the whole tool, which is written without parentheses.
///
/// # Errors
/// [`Error::InvalidRule`] when the tool name is empty or not a plain
/// identifier (letters, digits, `_`, `-`, `.`), when a `(` is not closed by a
/// final `)`, or when the content is empty.
///
/// ```
/// use oxiscope_message::PermissionBehavior;
/// use oxiscope_permission::parse_rule;
///
/// let rule = parse_rule("Bash(git commit:*)", PermissionBehavior::Allow, "cli").unwrap();
/// assert_eq!(rule.tool_name, "Bash");
/// assert_eq!(rule.rule_content.as_deref(), Some("git commit:*"));
/// ```
pub fn parse_rule(
    text: &str,
    behavior: PermissionBehavior,
    source: &str,
) -> Result<PermissionRule> {
    let invalid = |reason| Error::InvalidRule {
        rule: text.to_owned(),
        reason,
    };
    let trimmed = text.trim();
    let (name, content) = match trimmed.find('(') {
        None => {
            if trimmed.contains(')') {
                return Err(invalid("`)` without `(`"));
            }
            (trimmed, None)
        }
        Some(open) => {
            let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                return Err(invalid("the pattern must end with `)`"));
            };
            if inner.trim().is_empty() {
                return Err(invalid(
                    "empty pattern; write the tool name alone to match every call",
                ));
            }
            (trimmed[..open].trim_end(), Some(inner.to_owned()))
        }
    };
    if name.is_empty() {
        return Err(invalid("missing tool name"));
    }
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(invalid(
            "the tool name may only hold letters, digits, `_`, `-` and `.`",
        ));
    }
    Ok(PermissionRule::new(name, content, behavior, source))
}

/// Writes a rule back in the `Tool(content)` / `Tool` syntax.
#[must_use]
pub fn format_rule(rule: &PermissionRule) -> String {
    match &rule.rule_content {
        Some(content) => format!("{}({content})", rule.tool_name),
        None => rule.tool_name.clone(),
    }
}
