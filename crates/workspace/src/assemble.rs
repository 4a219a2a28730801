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

/// What a workspace gives an agent, before it is put on a builder: the
/// toolkit of [`assemble_toolkit`] (which a caller may extend, as the
/// console does with its configured skills and servers), the system
/// prompt followed by the workspace's instructions, the working directory
/// and the workspace itself (backend and offloader).
pub struct Equipment {
    /// The tools, MCP tools and skills.
    pub toolkit: Toolkit,
    /// The system prompt with the workspace's instructions.
    pub prompt: String,
    /// Where the agent works.
    pub workdir: std::path::PathBuf,
    /// The workspace: backend of the tools, offloader of the context.
    pub workspace: Arc<dyn Workspace>,
}

impl std::fmt::Debug for Equipment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Equipment")
            .field("workspace", &self.workspace.id())
            .field("workdir", &self.workdir)
            .finish_non_exhaustive()
    }
}

impl Equipment {
    /// What the workspace of `agent_id` in `session_id` gives an agent
    /// whose own system prompt is `system_prompt`; with MCP servers that
    /// failed to start (their tools missing) in the registration.
    ///
    /// `cwd`, when given, is a directory inside the workspace (relative to
    /// its working directory) that the agent starts in: relative paths of
    /// its tools and its commands' working directory are there.
    ///
    /// # Errors
    /// As [`assemble_toolkit`].
    pub async fn of(
        workspace: Arc<dyn Workspace>,
        agent_id: &str,
        session_id: &str,
        system_prompt: &str,
        cwd: Option<&Path>,
    ) -> Result<(Self, McpRegistration)> {
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
        let equipment = Self {
            toolkit,
            prompt,
            workdir,
            workspace,
        };
        Ok((equipment, registration))
    }

    /// The same with its toolkit shared, so several agents can be built
    /// from it (the console builds a new one when the model changes).
    #[must_use]
    pub fn share(self) -> SharedEquipment {
        SharedEquipment {
            toolkit: Arc::new(self.toolkit),
            prompt: self.prompt,
            workdir: self.workdir,
            workspace: self.workspace,
        }
    }
}

/// [`Equipment`] with its toolkit shared: what [`SharedEquipment::apply`]
/// puts on each agent's builder.
#[derive(Clone)]
pub struct SharedEquipment {
    /// The tools, MCP tools and skills.
    pub toolkit: Arc<Toolkit>,
    /// The system prompt with the workspace's instructions.
    pub prompt: String,
    /// Where the agent works.
    pub workdir: std::path::PathBuf,
    /// The workspace: backend of the tools, offloader of the context.
    pub workspace: Arc<dyn Workspace>,
}

impl std::fmt::Debug for SharedEquipment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedEquipment")
            .field("workspace", &self.workspace.id())
            .field("workdir", &self.workdir)
            .finish_non_exhaustive()
    }
}

impl SharedEquipment {
    /// Puts it on `builder`: system prompt, toolkit, working directory,
    /// backend and offloader.
    #[must_use]
    pub fn apply(&self, builder: AgentBuilder) -> AgentBuilder {
        builder
            .system_prompt(self.prompt.clone())
            .toolkit(Arc::clone(&self.toolkit))
            .workdir(self.workdir.clone())
            .backend(self.workspace.backend())
            .offloader(Arc::clone(&self.workspace) as Arc<dyn oxiscope_tool::Offloader>)
    }
}

/// Equips `builder` with the workspace of `agent_id` in `session_id`:
/// [`Equipment::of`] put on the builder.
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
    let (equipment, registration) =
        Equipment::of(workspace, agent_id, session_id, system_prompt, cwd).await?;
    Ok((equipment.share().apply(builder), registration))
}
