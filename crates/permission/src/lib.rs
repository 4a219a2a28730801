//! Oxiscope's permission engine: the guard between a model's tool calls and
//! the user's machine. Pure and synchronous.
#![deny(missing_docs)]
#![doc = include_str!("../docs/decision-table.md")]
#![cfg_attr(test, allow(clippy::panic))]

mod bash_policy;
mod context;
mod decision;
mod engine;
mod error;
mod file_policy;
mod file_rules;
mod mode;
mod paths;
mod policy;
mod rule;
pub mod shell;

pub use bash_policy::BashPolicy;
pub use context::{PermissionContext, WorkingDirectory};
pub use decision::PermissionDecision;
pub use engine::decide;
pub use error::{Error, Result};
pub use file_policy::{FilePolicy, FileTool};
pub use file_rules::{escape_glob, file_rule_matches, folder_rule};
pub use mode::PermissionMode;
pub use oxiscope_message::{PermissionBehavior, PermissionRule};
pub use paths::{DangerousPaths, PathEnv, is_system_path, is_within, normalise};
pub use policy::{GenericPolicy, ToolPolicy};
pub use rule::{format_rule, parse_rule};

/// The policy for a tool name: Bash, the file tools, or a [`GenericPolicy`].
#[must_use]
pub fn policy_for(tool_name: &str, env: &PathEnv) -> Box<dyn ToolPolicy> {
    if tool_name == "Bash" {
        Box::new(BashPolicy::new(env.clone()))
    } else if let Some(tool) = FileTool::from_name(tool_name) {
        Box::new(FilePolicy::new(tool, env.clone()))
    } else {
        Box::new(GenericPolicy::new(tool_name))
    }
}
