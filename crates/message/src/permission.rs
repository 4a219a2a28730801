//! The permission-rule data type that tool calls carry as suggestions.
//!
//! The decision engine lives in `oxiscope-permission`; this module only owns
//! the serde shapes shared by messages, events and agent state.

use serde::{Deserialize, Serialize};

/// What a permission rule or decision does with a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PermissionBehavior {
    /// Run the tool call without asking.
    Allow,
    /// Refuse the tool call.
    Deny,
    /// Ask the user before running the tool call.
    Ask,
    /// No opinion: the engine goes on with rule matching (tools only).
    Passthrough,
}

impl PermissionBehavior {
    /// The wire spelling (`allow`, `deny`, `ask`, `passthrough`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::Ask => "ask",
            Self::Passthrough => "passthrough",
        }
    }
}

/// A rule that allows, asks for or denies calls of one tool.
///
/// `rule_content` is interpreted by the tool: a command prefix pattern for
/// `Bash` (`git commit:*`), a path glob for file tools (`src/**`), and
/// `None` for the whole tool.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PermissionRule {
    /// The tool the rule applies to, e.g. `Bash`.
    pub tool_name: String,
    /// The tool-specific pattern; `None` matches every call of the tool.
    pub rule_content: Option<String>,
    /// What the rule does.
    pub behavior: PermissionBehavior,
    /// Where the rule came from (`session`, `suggested`, `userSettings`,
    /// `projectSettings`, ...).
    pub source: String,
}

impl PermissionRule {
    /// A rule with the given parts.
    pub fn new(
        tool_name: impl Into<String>,
        rule_content: Option<String>,
        behavior: PermissionBehavior,
        source: impl Into<String>,
    ) -> Self {
        Self {
            tool_name: tool_name.into(),
            rule_content,
            behavior,
            source: source.into(),
        }
    }
}
