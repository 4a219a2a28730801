//! The one place an agent is equipped from a workspace: its toolkit
//! (built-in tools, MCP servers, skills), offloader, working directory,
//! backend and the workspace's instructions.

use std::path::Path;
use std::sync::Arc;

use oxiscope_agent::AgentBuilder;
use oxiscope_mcp::{McpRegistration, register_mcp};
use oxiscope_tool::{BASIC_GROUP, Tool, Toolkit};

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
    assemble(workspace, agent_id, session_id, workspace.list_tools()).await
}

async fn assemble(
    workspace: &dyn Workspace,
    agent_id: &str,
    session_id: &str,
    tools: Vec<Arc<dyn Tool>>,
) -> Result<(Toolkit, McpRegistration)> {
    let mut toolkit = Toolkit::new();
    for tool in tools {
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
/// `cwd`, when given, is a directory inside the workspace (relative to
/// its working directory) that the agent starts in: relative paths of its
/// tools and its commands' working directory are there.
///
/// # Errors
/// As [`assemble_toolkit`].
pub async fn equip(
    builder: AgentBuilder,
    workspace: Arc<dyn Workspace>,
    agent_id: &str,
    session_id: &str,
    system_prompt: &str,
    cwd: Option<&Path>,
) -> Result<(AgentBuilder, McpRegistration)> {
    let workdir = match cwd {
        Some(rel) => workspace.workdir().join(rel),
        None => workspace.workdir().to_path_buf(),
    };
    let tools = if cwd.is_some() {
        oxiscope_tool::builtin_tools(&workspace.path_env().with_cwd(workdir.clone()))
    } else {
        workspace.list_tools()
    };
    let (toolkit, registration) = assemble(&*workspace, agent_id, session_id, tools).await?;
    let instructions = workspace.instructions();
    let prompt = if system_prompt.trim().is_empty() {
        instructions
    } else {
        format!("{system_prompt}\n\n{instructions}")
    };
    let builder = builder
        .system_prompt(prompt)
        .toolkit(Arc::new(toolkit))
        .workdir(workdir)
        .backend(workspace.backend())
        .offloader(workspace);
    Ok((builder, registration))
}
