//! Building the agent `oxiscope chat` talks to: the built-in tools rooted
//! at the working directory, the permission rules, a saved state.

use std::path::Path;
use std::sync::Arc;

use oxiscope_agent::{Agent, AgentState};
use oxiscope_model::DynChatModel;
use oxiscope_permission::{PathEnv, PermissionContext};
use oxiscope_tool::{BASIC_GROUP, Toolkit, builtin_tools};

use super::settings::Settings;

/// The agent's name in the console.
pub(crate) const AGENT_NAME: &str = "Oxiscope";

/// The agent, starting from `saved` when a session is resumed.
pub(crate) fn agent(
    model: Arc<dyn DynChatModel>,
    settings: &Settings,
    saved: Option<AgentState>,
    workdir: &Path,
) -> anyhow::Result<Agent> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(Into::into);
    let env = PathEnv::new(workdir, home);
    let mut toolkit = Toolkit::new();
    for tool in builtin_tools(&env) {
        toolkit.register_arc(tool, BASIC_GROUP)?;
    }
    let mut state = saved.unwrap_or_default();
    state.permission_context = merge_permissions(
        state.permission_context,
        &settings.permissions,
        settings.mode_given,
    );
    Ok(Agent::builder(AGENT_NAME, model)
        .system_prompt(system_prompt(workdir))
        .toolkit(Arc::new(toolkit))
        .workdir(workdir)
        .state(state)
        .build())
}

/// The saved context keeps its rules (accepted ones included) and gains
/// the configured ones; its mode stays unless one was chosen this time.
fn merge_permissions(
    saved: PermissionContext,
    configured: &PermissionContext,
    mode_given: bool,
) -> PermissionContext {
    let mut merged = saved;
    if mode_given || merged == PermissionContext::default() {
        merged.mode = configured.mode;
    }
    let maps = [
        &configured.allow_rules,
        &configured.ask_rules,
        &configured.deny_rules,
    ];
    for rule in maps.into_iter().flat_map(|m| m.values().flatten()) {
        merged.add_rule(rule.clone());
    }
    for (key, dir) in &configured.working_directories {
        merged
            .working_directories
            .entry(key.clone())
            .or_insert_with(|| dir.clone());
    }
    merged
}

fn system_prompt(workdir: &Path) -> String {
    format!(
        "You are {AGENT_NAME}, an assistant for software and operations work at a terminal. \
         The working directory is {}. Use the tools to look at files, search, edit and run \
         commands; read before you change, keep changes small, and say briefly what you did.",
        workdir.display()
    )
}
