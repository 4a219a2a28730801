//! The permission behaviour of the Bash tool.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use oxiscope_message::{PermissionBehavior, PermissionRule};
use serde_json::Value;

use crate::context::PermissionContext;
use crate::decision::PermissionDecision;
use crate::mode::PermissionMode;
use crate::paths::{DangerousPaths, PathEnv};
use crate::policy::ToolPolicy;
use crate::shell::{
    Analysis, BashPattern, all_parts_allowed, analyze, any_part_matches, edits_within, suggestions,
};

/// Permission behaviour of the `Bash` tool (input `{"command": "..."}`),
/// reusable by the tool implementation.
///
/// - read-only: the command parses, contains nothing dynamic or dangerous,
///   and every sub-command is in the read-only catalogue without output
///   redirection;
/// - `check_permissions`: a safety ask (bypass-immune) for anything that
///   cannot be parsed or analysed, dangerous patterns, sensitive paths (read
///   or written), dangerous removals and `sed` outside its allowlist; allow
///   for file-system commands whose every target is inside a working
///   directory in `accept_edits` / `dont_ask`; otherwise passthrough;
/// - rules: see [`BashPattern`], matched per sub-command.
#[derive(Debug)]
pub struct BashPolicy {
    env: PathEnv,
    dangerous: DangerousPaths,
    /// The last few analyses: one decision asks several questions about
    /// the same command.
    cache: Mutex<Vec<CacheEntry>>,
}

#[derive(Debug)]
struct CacheEntry {
    command: String,
    dirs: Vec<String>,
    analysis: Arc<Analysis>,
}

const CACHE_ENTRIES: usize = 4;

impl Clone for BashPolicy {
    fn clone(&self) -> Self {
        Self {
            env: self.env.clone(),
            dangerous: self.dangerous.clone(),
            cache: Mutex::new(Vec::new()),
        }
    }
}

impl BashPolicy {
    /// A policy resolving paths against `env`.
    #[must_use]
    pub fn new(env: PathEnv) -> Self {
        Self {
            env,
            dangerous: DangerousPaths::default(),
            cache: Mutex::new(Vec::new()),
        }
    }

    /// Replaces the dangerous-path list (e.g. an extended default).
    #[must_use]
    pub fn with_dangerous_paths(mut self, dangerous: DangerousPaths) -> Self {
        self.dangerous = dangerous;
        self
    }

    fn roots(&self, context: Option<&PermissionContext>) -> Vec<PathBuf> {
        match context {
            Some(ctx) => self.env.working_roots(ctx.working_directory_paths()),
            None => self.env.working_roots(std::iter::empty()),
        }
    }

    /// Analyses a command with this policy's environment (cached: one
    /// decision asks several questions about the same command).
    #[must_use]
    pub fn analyze(&self, command: &str, context: Option<&PermissionContext>) -> Arc<Analysis> {
        let dirs: Vec<String> = context
            .map(|ctx| ctx.working_directory_paths().map(str::to_owned).collect())
            .unwrap_or_default();
        if let Ok(cache) = self.cache.lock()
            && let Some(hit) = cache
                .iter()
                .find(|e| e.command == command && e.dirs == dirs)
        {
            return Arc::clone(&hit.analysis);
        }
        let roots = self.roots(context);
        let analysis = Arc::new(analyze(command, &self.env, &self.dangerous, &roots));
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= CACHE_ENTRIES {
                cache.remove(0);
            }
            cache.push(CacheEntry {
                command: command.to_owned(),
                dirs,
                analysis: Arc::clone(&analysis),
            });
        }
        analysis
    }
}

/// The `command` argument; `None` when missing or not a string.
fn command_of(input: &Value) -> Option<&str> {
    input.get("command").and_then(Value::as_str)
}

impl ToolPolicy for BashPolicy {
    fn tool_name(&self) -> &str {
        "Bash"
    }

    fn check_read_only(&self, input: &Value) -> bool {
        command_of(input).is_some_and(|command| self.analyze(command, None).read_only)
    }

    fn check_permissions(&self, input: &Value, context: &PermissionContext) -> PermissionDecision {
        let Some(command) = command_of(input) else {
            return PermissionDecision::safety_ask(
                "Permission required: Bash call without a `command` string",
            )
            .with_reason("Safety check: command could not be parsed");
        };
        let analysis = self.analyze(command, Some(context));
        if let Some(concern) = &analysis.concern {
            return PermissionDecision::safety_ask(concern.message()).with_reason(concern.reason());
        }
        if analysis.read_only {
            return PermissionDecision::allow("Permission granted for read-only command")
                .with_reason("Read-only command is allowed");
        }
        if matches!(
            context.mode,
            PermissionMode::AcceptEdits | PermissionMode::DontAsk
        ) && let Some(script) = &analysis.script
            && let Some(name) = edits_within(script, &self.env, &self.roots(Some(context)))
        {
            return PermissionDecision::allow(format!(
                        "Permission granted for '{name}' command (filesystem command, all targets in working directory)"
                    ))
                    .with_reason(format!(
                        "Filesystem command '{name}' is auto-allowed because all target paths are within a working directory"
                    ));
        }
        PermissionDecision::passthrough(format!("Execute bash command: {command}"))
    }

    fn match_rule(
        &self,
        rule: &PermissionRule,
        input: &Value,
        context: &PermissionContext,
    ) -> bool {
        let Some(content) = rule.rule_content.as_deref() else {
            return true;
        };
        let Some(command) = command_of(input) else {
            return false;
        };
        let pattern = BashPattern::parse(content);
        let analysis = self.analyze(command, Some(context));
        if rule.behavior == PermissionBehavior::Allow {
            analysis.script.as_ref().is_some_and(|script| {
                all_parts_allowed(std::slice::from_ref(&pattern), script, false)
            })
        } else {
            any_part_matches(&pattern, analysis.script.as_ref(), command)
        }
    }

    fn generate_suggestions(
        &self,
        input: &Value,
        context: &PermissionContext,
    ) -> Vec<PermissionRule> {
        let Some(command) = command_of(input) else {
            return Vec::new();
        };
        let analysis = self.analyze(command, Some(context));
        let Some(script) = &analysis.script else {
            return Vec::new();
        };
        suggestions(script)
            .into_iter()
            .map(|content| {
                PermissionRule::new(
                    "Bash",
                    Some(content),
                    PermissionBehavior::Allow,
                    "suggested",
                )
            })
            .collect()
    }

    /// Every sub-command must be read-only or matched by some allow rule; a
    /// rule without content allows every call.
    fn match_allow_rules(
        &self,
        rules: &[PermissionRule],
        input: &Value,
        context: &PermissionContext,
    ) -> Option<String> {
        if rules.iter().any(|r| r.rule_content.is_none()) {
            return Some("Rule: Bash".to_owned());
        }
        let command = command_of(input)?;
        let patterns: Vec<BashPattern> = rules
            .iter()
            .filter_map(|r| r.rule_content.as_deref())
            .map(BashPattern::parse)
            .collect();
        let analysis = self.analyze(command, Some(context));
        let script = analysis.script.as_ref()?;
        if !all_parts_allowed(&patterns, script, true) {
            return None;
        }
        let used: Vec<String> = rules
            .iter()
            .zip(&patterns)
            .filter(|(_, p)| script.commands.iter().any(|c| p.matches(c, false)))
            .map(|(r, _)| crate::format_rule(r))
            .collect();
        Some(format!("Rule: {}", used.join(", ")))
    }
}
