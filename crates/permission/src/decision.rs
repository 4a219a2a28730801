//! The outcome of a permission check.

use oxiscope_message::{PermissionBehavior, PermissionRule};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What the engine (or a tool's own check) decided about one tool call.
///
/// The serde shape is AgentScope's `PermissionDecision`: every field is
/// written, absent values as `null`; on input only `behavior` and `message`
/// are required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDecision {
    /// Allow, deny, ask, or (from a tool) passthrough.
    pub behavior: PermissionBehavior,
    /// A sentence for the user or the model.
    pub message: String,
    /// Why: the rule, the mode or the safety check that decided.
    #[serde(default)]
    pub decision_reason: Option<String>,
    /// The tool input the call runs with, when the decision carries it.
    #[serde(default)]
    pub updated_input: Option<Map<String, Value>>,
    /// Rules the user may accept so that similar calls stop asking.
    #[serde(default)]
    pub suggested_rules: Option<Vec<PermissionRule>>,
    /// A safety ask: allow rules cannot silence it (only `bypass` skips it).
    #[serde(default)]
    pub bypass_immune: bool,
}

impl PermissionDecision {
    fn new(behavior: PermissionBehavior, message: impl Into<String>) -> Self {
        Self {
            behavior,
            message: message.into(),
            decision_reason: None,
            updated_input: None,
            suggested_rules: None,
            bypass_immune: false,
        }
    }

    /// An allow decision.
    pub fn allow(message: impl Into<String>) -> Self {
        Self::new(PermissionBehavior::Allow, message)
    }

    /// A deny decision.
    pub fn deny(message: impl Into<String>) -> Self {
        Self::new(PermissionBehavior::Deny, message)
    }

    /// A regular ask decision (allow rules may override it).
    pub fn ask(message: impl Into<String>) -> Self {
        Self::new(PermissionBehavior::Ask, message)
    }

    /// A safety ask: `bypass_immune` is set, allow rules cannot override it.
    pub fn safety_ask(message: impl Into<String>) -> Self {
        Self {
            bypass_immune: true,
            ..Self::new(PermissionBehavior::Ask, message)
        }
    }

    /// "No opinion": the engine continues with rules and the mode default.
    pub fn passthrough(message: impl Into<String>) -> Self {
        Self::new(PermissionBehavior::Passthrough, message)
    }

    /// Sets the reason.
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.decision_reason = Some(reason.into());
        self
    }

    /// Sets the suggested rules.
    #[must_use]
    pub fn with_suggestions(mut self, rules: Vec<PermissionRule>) -> Self {
        self.suggested_rules = Some(rules);
        self
    }

    /// Sets the input the call runs with.
    #[must_use]
    pub fn with_updated_input(mut self, input: Map<String, Value>) -> Self {
        self.updated_input = Some(input);
        self
    }

    /// Whether the call may run.
    #[must_use]
    pub fn is_allowed(&self) -> bool {
        self.behavior == PermissionBehavior::Allow
    }
}
