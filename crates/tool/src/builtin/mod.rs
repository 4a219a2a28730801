//! The built-in tools, one file each, over an
//! [`ExecBackend`](crate::ExecBackend). Parameter names, types, required
//! lists and defaults follow AgentScope's tools so saved calls stay valid.

mod bash;
mod diff;
mod edit;
mod file_state;
mod file_tool;
mod glob;
mod grep;
mod pdf;
mod pyrepr;
mod read;
mod tasks;
mod write;

use std::sync::Arc;

use oxiscope_permission::PathEnv;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use bash::Bash;
pub use edit::Edit;
pub use glob::Glob;
pub use grep::Grep;
pub use read::Read;
pub use tasks::{TaskCreate, TaskGet, TaskList, TaskUpdate};
pub use write::Write;

use crate::chunk::ToolChunk;
use crate::tool::Tool;

/// Every built-in tool, in the order AgentScope lists them, with
/// permission checks relative to `env` (working directory and home).
#[must_use]
pub fn builtin_tools(env: &PathEnv) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(Bash::new(env.clone())),
        Arc::new(Read::new(env.clone())),
        Arc::new(Write::new(env.clone())),
        Arc::new(Edit::new(env.clone())),
        Arc::new(Glob::new(env.clone())),
        Arc::new(Grep::new(env.clone())),
        Arc::new(TaskCreate),
        Arc::new(TaskGet),
        Arc::new(TaskList),
        Arc::new(TaskUpdate),
    ]
}

/// The result of a call the user interrupted, in AgentScope's words.
pub(crate) const INTERRUPTED_TEXT: &str =
    "<system-reminder>The tool call has been interrupted by the user.</system-reminder>";

/// `Error: {name} must be non-negative.` unless `value` is at least zero
/// (AgentScope's check of paging arguments); the value as a `usize`.
fn non_negative(name: &str, value: i64) -> Result<usize, ToolChunk> {
    usize::try_from(value)
        .map_err(|_| ToolChunk::error(format!("Error: {name} must be non-negative.")))
}

/// The arguments as `T`, or an error chunk naming the tool.
fn parse<T: DeserializeOwned>(tool: &str, input: Value) -> Result<T, ToolChunk> {
    serde_json::from_value(input)
        .map_err(|e| ToolChunk::error(format!("Invalid arguments for tool `{tool}`: {e}")))
}

/// Implements the permission hooks of [`Tool`] by delegating to a
/// permission-engine policy stored in `self.policy`.
macro_rules! delegate_permissions {
    () => {
        fn check_read_only(&self, input: &serde_json::Value) -> bool {
            oxiscope_permission::ToolPolicy::check_read_only(&self.policy, input)
        }

        fn check_permissions(
            &self,
            input: &serde_json::Value,
            context: &oxiscope_permission::PermissionContext,
        ) -> oxiscope_permission::PermissionDecision {
            oxiscope_permission::ToolPolicy::check_permissions(&self.policy, input, context)
        }

        fn match_rule(
            &self,
            rule: &oxiscope_message::PermissionRule,
            input: &serde_json::Value,
            context: &oxiscope_permission::PermissionContext,
        ) -> bool {
            oxiscope_permission::ToolPolicy::match_rule(&self.policy, rule, input, context)
        }

        fn generate_suggestions(
            &self,
            input: &serde_json::Value,
            context: &oxiscope_permission::PermissionContext,
        ) -> Vec<oxiscope_message::PermissionRule> {
            oxiscope_permission::ToolPolicy::generate_suggestions(&self.policy, input, context)
        }

        fn match_allow_rules(
            &self,
            rules: &[oxiscope_message::PermissionRule],
            input: &serde_json::Value,
            context: &oxiscope_permission::PermissionContext,
        ) -> Option<String> {
            oxiscope_permission::ToolPolicy::match_allow_rules(&self.policy, rules, input, context)
        }
    };
}
use delegate_permissions;
