//! The permission behaviour of the file tools: Read, Write, Edit, Glob, Grep.

use std::path::{Path, PathBuf};

use oxiscope_message::{PermissionBehavior, PermissionRule};
use serde_json::Value;

use crate::context::PermissionContext;
use crate::decision::PermissionDecision;
use crate::file_rules::{file_rule_matches, folder_rule};
use crate::mode::PermissionMode;
use crate::paths::{DangerousPaths, PathEnv, is_system_path, is_within};
use crate::policy::ToolPolicy;

/// Which file tool a [`FilePolicy`] speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileTool {
    /// Reads one file (`file_path`).
    Read,
    /// Creates or overwrites one file (`file_path`).
    Write,
    /// Edits one file in place (`file_path`).
    Edit,
    /// Lists files matching a pattern under `path` (default: the current directory).
    Glob,
    /// Searches file contents under `path` (default: the current directory).
    Grep,
}

impl FileTool {
    /// The tool name rules use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "Read",
            Self::Write => "Write",
            Self::Edit => "Edit",
            Self::Glob => "Glob",
            Self::Grep => "Grep",
        }
    }

    /// The tool for a rule name (`Read`, `Write`, `Edit`, `Glob`, `Grep`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Read, Self::Write, Self::Edit, Self::Glob, Self::Grep]
            .into_iter()
            .find(|tool| tool.name() == name)
    }

    fn modifies(self) -> bool {
        matches!(self, Self::Write | Self::Edit)
    }

    fn path_key(self) -> &'static str {
        match self {
            Self::Read | Self::Write | Self::Edit => "file_path",
            Self::Glob | Self::Grep => "path",
        }
    }
}

/// Permission behaviour of a file tool, reusable by the tool implementations.
///
/// - Reading tools are read-only unless the path (or a Glob/Grep pattern)
///   touches a dangerous path; then they ask, bypass-immune.
/// - Write/Edit on a dangerous path or inside a system directory is a
///   safety ask; inside a working directory it is allowed in `accept_edits`
///   and `dont_ask`; otherwise the engine decides (passthrough).
/// - Rules are globs on the path argument, see [`file_rule_matches`].
#[derive(Debug, Clone)]
pub struct FilePolicy {
    tool: FileTool,
    env: PathEnv,
    dangerous: DangerousPaths,
}

impl FilePolicy {
    /// A policy for `tool` resolving paths against `env`.
    #[must_use]
    pub fn new(tool: FileTool, env: PathEnv) -> Self {
        Self {
            tool,
            env,
            dangerous: DangerousPaths::default(),
        }
    }

    /// Replaces the dangerous-path list (e.g. an extended default).
    #[must_use]
    pub fn with_dangerous_paths(mut self, dangerous: DangerousPaths) -> Self {
        self.dangerous = dangerous;
        self
    }

    /// The path argument as given: `None` when missing or not a string
    /// (Glob/Grep default to the current directory).
    fn raw_path(&self, input: &Value) -> Option<String> {
        match input.get(self.tool.path_key()) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Null) | None if !self.tool.modifies() && self.tool != FileTool::Read => {
                Some(".".to_owned())
            }
            _ => None,
        }
    }

    /// Why this call touches something sensitive, if it does.
    fn danger(&self, input: &Value) -> Option<String> {
        let raw = self.raw_path(input)?;
        let resolved = self.env.resolve(&raw);
        if self.dangerous.matches(Path::new(&raw))
            || resolved
                .as_deref()
                .is_some_and(|p| self.dangerous.matches(p))
        {
            return Some(format!("{raw} is a sensitive path"));
        }
        for key in ["pattern", "glob"] {
            if self.tool == FileTool::Grep && key == "pattern" {
                continue;
            }
            if let Some(Value::String(pattern)) = input.get(key)
                && self.dangerous.pattern_reaches(pattern)
            {
                return Some(format!("pattern {pattern} reaches sensitive files"));
            }
        }
        if self.tool.modifies() && resolved.as_deref().is_some_and(is_system_path) {
            return Some(format!("{raw} is inside a system directory"));
        }
        None
    }

    fn roots(&self, context: &PermissionContext) -> Vec<PathBuf> {
        self.env.working_roots(context.working_directory_paths())
    }
}

impl ToolPolicy for FilePolicy {
    fn tool_name(&self) -> &str {
        self.tool.name()
    }

    fn check_read_only(&self, input: &Value) -> bool {
        !self.tool.modifies() && self.raw_path(input).is_some() && self.danger(input).is_none()
    }

    fn check_permissions(&self, input: &Value, context: &PermissionContext) -> PermissionDecision {
        let tool = self.tool.name();
        let Some(raw) = self.raw_path(input) else {
            return PermissionDecision::passthrough(format!(
                "{tool} call without a usable `{}` argument",
                self.tool.path_key()
            ));
        };
        if let Some(why) = self.danger(input) {
            return PermissionDecision::safety_ask(format!("Permission required: {why}"))
                .with_reason("Safety check: sensitive path");
        }
        if !self.tool.modifies() {
            return PermissionDecision::passthrough("File reading is read-only.");
        }
        let edits_allowed = matches!(
            context.mode,
            PermissionMode::AcceptEdits | PermissionMode::DontAsk
        );
        if edits_allowed
            && let Some(resolved) = self.env.resolve(&raw)
            && is_within(&resolved, &self.roots(context))
        {
            return PermissionDecision::allow(format!(
                "Permission granted for {tool} (file in a working directory)"
            ))
            .with_reason(format!(
                "{} mode allows edits inside working directories",
                context.mode
            ));
        }
        PermissionDecision::passthrough(format!("{tool} {raw}"))
    }

    fn match_rule(
        &self,
        rule: &PermissionRule,
        input: &Value,
        context: &PermissionContext,
    ) -> bool {
        let Some(pattern) = rule.rule_content.as_deref() else {
            return true;
        };
        let Some(raw) = self.raw_path(input) else {
            return false;
        };
        let resolved = self.env.resolve(&raw);
        let broad = rule.behavior != PermissionBehavior::Allow;
        file_rule_matches(
            pattern,
            &raw,
            resolved.as_deref(),
            &self.env,
            &self.roots(context),
            broad,
        )
    }

    fn generate_suggestions(
        &self,
        input: &Value,
        context: &PermissionContext,
    ) -> Vec<PermissionRule> {
        let Some(raw) = self.raw_path(input) else {
            return Vec::new();
        };
        let Some(resolved) = self.env.resolve(&raw) else {
            return Vec::new();
        };
        let dir = match self.tool {
            FileTool::Read | FileTool::Write | FileTool::Edit => match resolved.parent() {
                Some(parent) => parent.to_path_buf(),
                None => return Vec::new(),
            },
            FileTool::Glob | FileTool::Grep => resolved,
        };
        vec![PermissionRule::new(
            self.tool.name(),
            Some(folder_rule(&dir, &self.roots(context))),
            PermissionBehavior::Allow,
            "suggested",
        )]
    }
}
