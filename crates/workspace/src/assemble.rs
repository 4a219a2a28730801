//! The one place an agent is equipped from a workspace: its toolkit
//! (built-in tools, MCP servers, skills), offloader, working directory,
//! backend and the workspace's instructions.

use std::sync::Arc;

use oxiscope_agent::AgentBuilder;
use oxiscope_mcp::{McpRegistration, register_mcp};
use oxiscope_tool::{BASIC_GROUP, Toolkit};

use crate::error::Result;
use crate::workspace::Workspace;

/// The toolkit of `agent_id` in `session_id`: the workspace's built-in
/// tools, then its MCP servers (a server that fails to start is skipped
/// and reported in the registration, its tools missing), then its skills.
///
/// # Errors
/// The declarations or skills cannot be read, or a tool name clashes.
pub async fn assemble_toolkit(
    workspace: &dyn Workspace,
    agent_id: &str,
    session_id: &str,
) -> Result<(Toolkit, McpRegistration)> {
    let mut toolkit = Toolkit::new();
    for tool in workspace.list_tools() {
        toolkit.register_arc(tool, BASIC_GROUP)?;
    }
    let clients = workspace.list_mcps(agent_id, session_id).await?;
    let registration = register_mcp(&mut toolkit, &clients, BASIC_GROUP).await;
    let skills = workspace.list_skills(agent_id).await?;
    if !skills.is_empty() {
        toolkit.add_skills(skills)?;
    }
    Ok((toolkit, registration))
}

/// Equips `builder` with the workspace of `agent_id` in `session_id`:
/// the toolkit of [`assemble_toolkit`], the workspace as offloader,
/// its working directory and backend, and `system_prompt` followed by the
/// workspace's instructions.
///
/// # Errors
/// As [`assemble_toolkit`].
pub async fn equip(
    builder: AgentBuilder,
    workspace: Arc<dyn Workspace>,
    agent_id: &str,
    session_id: &str,
    system_prompt: &str,
) -> Result<(AgentBuilder, McpRegistration)> {
    let (toolkit, registration) = assemble_toolkit(&*workspace, agent_id, session_id).await?;
    let instructions = workspace.instructions();
    let prompt = if system_prompt.trim().is_empty() {
        instructions
    } else {
        format!("{system_prompt}\n\n{instructions}")
    };
    let builder = builder
        .system_prompt(prompt)
        .toolkit(Arc::new(toolkit))
        .workdir(workspace.workdir())
        .backend(workspace.backend())
        .offloader(workspace);
    Ok((builder, registration))
}
