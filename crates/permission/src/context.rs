//! The permission context: mode, rules and working directories.

use std::collections::BTreeMap;

use oxiscope_message::{PermissionBehavior, PermissionRule};
use serde::{Deserialize, Serialize};

use crate::mode::PermissionMode;

/// A directory inside which edits count as "in the project".
///
/// Wire name in AgentScope: `AdditionalWorkingDirectory`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WorkingDirectory {
    /// The directory, as configured (absolute paths are expected).
    pub path: String,
    /// Where it came from (`session`, `userSettings`, ...).
    pub source: String,
}

/// Everything the engine needs besides the tool: mode, rules, directories.
///
/// Rules are grouped per tool name, and per behaviour, exactly like
/// AgentScope's `PermissionContext`; missing keys deserialise as empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PermissionContext {
    /// The global policy.
    pub mode: PermissionMode,
    /// Working directories keyed by their path.
    pub working_directories: BTreeMap<String, WorkingDirectory>,
    /// Rules that allow calls, keyed by tool name.
    pub allow_rules: BTreeMap<String, Vec<PermissionRule>>,
    /// Rules that deny calls, keyed by tool name.
    pub deny_rules: BTreeMap<String, Vec<PermissionRule>>,
    /// Rules that ask before calls, keyed by tool name.
    pub ask_rules: BTreeMap<String, Vec<PermissionRule>>,
}

impl PermissionContext {
    /// An empty context in the given mode.
    #[must_use]
    pub fn new(mode: PermissionMode) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }

    /// Adds a working directory (keyed by its path).
    pub fn add_working_directory(&mut self, path: impl Into<String>, source: impl Into<String>) {
        let path = path.into();
        self.working_directories.insert(
            path.clone(),
            WorkingDirectory {
                path,
                source: source.into(),
            },
        );
    }

    /// Adds a rule to the list matching its behaviour.
    ///
    /// A `passthrough` rule has no meaning and is ignored; the return value
    /// says whether the rule was stored.
    pub fn add_rule(&mut self, rule: PermissionRule) -> bool {
        let map = match rule.behavior {
            PermissionBehavior::Allow => &mut self.allow_rules,
            PermissionBehavior::Deny => &mut self.deny_rules,
            PermissionBehavior::Ask => &mut self.ask_rules,
            PermissionBehavior::Passthrough => return false,
        };
        let rules = map.entry(rule.tool_name.clone()).or_default();
        if !rules.contains(&rule) {
            rules.push(rule);
        }
        true
    }

    /// The rules of one behaviour for one tool (empty if none).
    #[must_use]
    pub fn rules_for(&self, behavior: PermissionBehavior, tool_name: &str) -> &[PermissionRule] {
        let map = match behavior {
            PermissionBehavior::Allow => &self.allow_rules,
            PermissionBehavior::Deny => &self.deny_rules,
            PermissionBehavior::Ask => &self.ask_rules,
            PermissionBehavior::Passthrough => return &[],
        };
        map.get(tool_name).map_or(&[], Vec::as_slice)
    }

    /// The configured working-directory paths.
    pub fn working_directory_paths(&self) -> impl Iterator<Item = &str> {
        self.working_directories.values().map(|wd| wd.path.as_str())
    }
}
