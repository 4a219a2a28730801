//! The confirmation question about one tool call, and its answers.

use oxiscope_message::{ConfirmResult, ToolCallBlock};
use oxiscope_permission::format_rule;

use crate::render::tool_call_title;

/// What the user answered about one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// `y`: run it this once.
    Once,
    /// `a`: run it, and keep the suggested rules so calls like it stop
    /// asking.
    Always,
    /// Anything else (the default): do not run it.
    Deny,
}

impl Answer {
    /// The answer a typed line gives: `y`/`yes`, `a`/`always`, else deny.
    #[must_use]
    pub fn parse(line: &str) -> Self {
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Self::Once,
            "a" | "always" => Self::Always,
            _ => Self::Deny,
        }
    }

    /// The confirmation result this answer gives for `call`.
    #[must_use]
    pub fn result(self, call: &ToolCallBlock) -> ConfirmResult {
        let rules = (self == Self::Always).then(|| call.suggested_rules.clone());
        ConfirmResult {
            confirmed: self != Self::Deny,
            tool_call: call.clone(),
            rules,
        }
    }
}

/// The one line that asks about `call`: the call, the choices, the rules
/// `a` keeps, and `N` (the default) to deny.
pub(super) fn question(call: &ToolCallBlock) -> String {
    let always = if call.suggested_rules.is_empty() {
        "[a] allow (no rule to keep)".to_owned()
    } else {
        let rules: Vec<String> = call.suggested_rules.iter().map(format_rule).collect();
        format!("[a] always allow {}", rules.join(", "))
    };
    format!(
        "Allow {}?  [y] once  {always}  [N] deny: ",
        tool_call_title(call)
    )
}
