//! Building the agent `oxiscope chat` talks to: a local workspace on the
//! working directory (the built-in tools, MCP servers and skills declared
//! in its state under the data directory), the skills and MCP servers of
//! the config file and flags, the permission rules, a saved state.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oxiscope_agent::{Agent, AgentState};
use oxiscope_model::DynChatModel;
use oxiscope_permission::PermissionContext;
use oxiscope_tool::Toolkit;
use oxiscope_workspace::{Equipment, LocalWorkspace, SharedEquipment, Workspace};

use super::mcp_start::{Servers, StatusLines};
use super::settings::Settings;
use super::skills::load_skills;

/// The agent's name in the console.
pub(crate) const AGENT_NAME: &str = "Oxiscope";

/// The agent id the console's MCP declarations and skills are kept under.
const AGENT_ID: &str = "oxiscope";

/// The directory the agent works in: `cwd` (from `--cwd`) made absolute,
/// else the current directory. The workspace runs tools and resolves path
/// rules there; the process itself stays where it was started.
///
/// # Errors
/// When `cwd` is missing or not a directory.
pub(crate) fn working_dir(cwd: Option<&Path>) -> anyhow::Result<PathBuf> {
    let Some(dir) = cwd else {
        return Ok(std::env::current_dir()?);
    };
    let absolute = match std::fs::canonicalize(dir) {
        Ok(path) => path,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            anyhow::bail!("--cwd {}: no such directory", dir.display())
        }
        Err(e) => anyhow::bail!("--cwd {}: {e}", dir.display()),
    };
    anyhow::ensure!(
        absolute.is_dir(),
        "--cwd {}: not a directory",
        dir.display()
    );
    Ok(absolute)
}

/// What the console's agent is made of besides its model and state: the
/// workspace's equipment (toolkit, which MCP servers join as they start;
/// system prompt; working directory; backend and offloader). `/model`
/// builds a new agent from it.
#[derive(Clone, Debug)]
pub(crate) struct AgentKit {
    equipment: SharedEquipment,
}

impl AgentKit {
    /// An agent thinking with `model`, starting from `state`.
    ///
    /// # Errors
    /// When the agent cannot be built (an invalid configuration).
    pub(crate) fn agent(
        &self,
        model: Arc<dyn DynChatModel>,
        state: AgentState,
    ) -> anyhow::Result<Agent> {
        Ok(self
            .equipment
            .apply(Agent::builder(AGENT_NAME, model).state(state))
            .build()?)
    }
}

/// The agent, starting from `saved` when a session is resumed (whose name
/// keys its MCP connections), the configured MCP servers, starting in the
/// background (their tools join the agent's as each one connects; `lines`
/// says which status lines they print), and the kit it was built from.
///
/// The workspace equips it as it equips the service's agents
/// ([`Equipment`]); its toolkit then gains the configured skills and
/// servers.
pub(crate) async fn agent(
    model: Arc<dyn DynChatModel>,
    settings: &Settings,
    saved: Option<AgentState>,
    workdir: &Path,
    session: Option<&str>,
    lines: StatusLines,
) -> anyhow::Result<(Agent, Servers, AgentKit)> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(Into::into);
    // What leaves the context (compressed messages, cut tool results,
    // dropped images), MCP declarations and skills live in the data
    // directory, not in the user's project.
    let state_dir = super::settings::data_dir()
        .unwrap_or_else(|_| std::env::temp_dir().join("oxiscope"))
        .join("workspace");
    let workspace = LocalWorkspace::builder("console", workdir)
        .state_dir(state_dir)
        .home(home)
        .build()?;
    workspace.initialize().await?;
    let workspace: Arc<dyn Workspace> = Arc::new(workspace);
    let mut state = saved.unwrap_or_default();
    state.permission_context = merge_permissions(state.permission_context, &settings.permissions);
    let session_key = session
        .filter(|s| oxiscope_workspace::validate_id("session", s).is_ok())
        .unwrap_or("default");
    let (mut equipment, mcp) =
        Equipment::of(workspace, AGENT_ID, session_key, &system_prompt(), None).await?;
    for (server, error) in &mcp.failed {
        eprintln!("warning: MCP server {server} is unavailable: {error}");
    }
    add_skills(&mut equipment.toolkit, settings.skills.clone()).await?;
    let servers = Servers::start(&settings.mcp, workdir, &mut equipment.toolkit, lines)?;
    let kit = AgentKit {
        equipment: equipment.share(),
    };
    let agent = kit.agent(model, state)?;
    Ok((agent, servers, kit))
}

/// Adds the skills of `dirs` the toolkit does not have yet (the
/// workspace's come first), warning once about each one skipped.
async fn add_skills(toolkit: &mut Toolkit, dirs: Vec<PathBuf>) -> anyhow::Result<()> {
    if dirs.is_empty() {
        return Ok(());
    }
    let taken: Vec<String> = toolkit.skills().iter().map(|s| s.name.clone()).collect();
    let (skills, warnings) =
        tokio::task::spawn_blocking(move || load_skills(&dirs, &taken)).await?;
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    if !skills.is_empty() {
        toolkit.add_skills(skills)?;
    }
    Ok(())
}

/// The saved context keeps its rules (accepted ones included) and gains
/// the configured ones; the mode is this run's (so `-p` on a saved
/// session still denies what would ask).
fn merge_permissions(
    saved: PermissionContext,
    configured: &PermissionContext,
) -> PermissionContext {
    let mut merged = saved;
    merged.mode = configured.mode;
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

fn system_prompt() -> String {
    format!(
        "You are {AGENT_NAME}, an assistant for software and operations work at a terminal. \
         Use the tools to look at files, search, edit and run commands; read before you \
         change, keep changes small, and say briefly what you did."
    )
}

#[cfg(test)]
mod tests {
    use oxiscope_message::PermissionBehavior;
    use oxiscope_permission::{PermissionMode, format_rule, parse_rule};
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_resumed_session_keeps_its_rules_and_takes_this_runs_mode() {
        let mut saved = PermissionContext::new(PermissionMode::Default);
        saved.add_rule(parse_rule("Bash(touch a:*)", PermissionBehavior::Allow, "user").unwrap());
        let mut configured = PermissionContext::new(PermissionMode::DontAsk);
        configured.add_rule(parse_rule("Read", PermissionBehavior::Allow, "cli").unwrap());
        configured
            .add_rule(parse_rule("Bash(touch a:*)", PermissionBehavior::Allow, "user").unwrap());
        let merged = merge_permissions(saved, &configured);
        assert_eq!(merged.mode, PermissionMode::DontAsk);
        let allowed: Vec<String> = merged
            .allow_rules
            .values()
            .flatten()
            .map(format_rule)
            .collect();
        assert_eq!(allowed, ["Bash(touch a:*)", "Read"]);
    }
}
