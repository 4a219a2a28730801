//! The [`Workspace`] trait: where an agent acts and what it acts with.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use oxiscope_mcp::McpClient;
use oxiscope_permission::PathEnv;
use oxiscope_tool::{ExecBackend, Offloader, Skill, Tool};

use crate::decl::McpDeclaration;
use crate::error::Result;

/// An agent's execution environment.
///
/// A workspace owns a directory (the agent's working directory) and
/// everything living in it, in four roles:
///
/// - **lifecycle** — [`initialize`](Self::initialize) prepares it (the
///   directory layout, the skill seed), [`close`](Self::close) stops its
///   MCP servers, [`reset`](Self::reset) empties its MCP declarations,
///   skills and session files;
/// - **discovery** — [`list_tools`](Self::list_tools) (the built-in tools
///   bound to the workspace's [`backend`](Self::backend)),
///   [`list_mcps`](Self::list_mcps) (connected clients, per agent and
///   session), [`list_skills`](Self::list_skills) (per agent),
///   [`instructions`](Self::instructions) (a system-prompt fragment);
/// - **offloading** — the workspace is the agent's [`Offloader`]: what
///   leaves the context lands in `sessions/` and `data/` where the file
///   tools can read it back;
/// - **dynamic management** — [`add_mcp`](Self::add_mcp),
///   [`remove_mcp`](Self::remove_mcp), [`add_skill`](Self::add_skill),
///   [`remove_skill`](Self::remove_skill), persisted so they survive a
///   restart.
///
/// The layout of the state directory:
///
/// ```text
/// .mcp/{agent_id}/{session_id}.json   MCP declarations (AgentScope's MCPClient JSON, an array)
/// skills/.seed/{skill}/SKILL.md       the template each agent's partition starts from
/// skills/{agent_id}/{skill}/SKILL.md  an agent's skills
/// sessions/{session_id}/...           offloaded context and tool results
/// data/{sha256}.{ext}                 offloaded binary payloads
/// ```
///
/// MCP connections are separate per agent and session even when several
/// share one workspace; skills are separate per agent.
///
/// `assemble_toolkit` (in this crate) turns a workspace into an agent's
/// toolkit.
pub trait Workspace: Offloader {
    /// The workspace's id.
    fn id(&self) -> &str;

    /// The working directory as the agent's tools see it (`/workspace`
    /// in a sandbox).
    fn workdir(&self) -> &Path;

    /// Where the built-in tools act: files and processes of this
    /// workspace.
    fn backend(&self) -> Arc<dyn ExecBackend>;

    /// The paths the permission engine judges tool calls against.
    fn path_env(&self) -> PathEnv;

    /// Prepares the workspace: its directories, the skill seed.
    ///
    /// # Errors
    /// The directories cannot be created.
    fn initialize(&self) -> BoxFuture<'_, Result<()>>;

    /// Stops every MCP server the workspace started. The workspace can be
    /// used again afterwards (servers start on the next
    /// [`list_mcps`](Self::list_mcps)).
    fn close(&self) -> BoxFuture<'_, ()>;

    /// Closes the MCP servers and deletes every MCP declaration, skill
    /// partition and session file; the skill seed stays.
    ///
    /// # Errors
    /// Something could not be deleted.
    fn reset(&self) -> BoxFuture<'_, Result<()>>;

    /// The built-in tools, bound to [`backend`](Self::backend).
    fn list_tools(&self) -> Vec<Arc<dyn Tool>> {
        oxiscope_tool::builtin_tools(&self.path_env())
    }

    /// The MCP clients of `agent_id` in `session_id`: the workspace's
    /// default servers plus those added for them, connected on first use
    /// and kept until [`close`](Self::close).
    ///
    /// # Errors
    /// The declarations cannot be read.
    fn list_mcps<'a>(
        &'a self,
        agent_id: &'a str,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<McpClient>>>;

    /// The MCP declarations of `agent_id` in `session_id`, as stored.
    ///
    /// # Errors
    /// The declarations cannot be read.
    fn mcp_declarations<'a>(
        &'a self,
        agent_id: &'a str,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<McpDeclaration>>>;

    /// Declares an MCP server for `agent_id` in `session_id` (persisted).
    ///
    /// # Errors
    /// A server of that name exists, or the declaration is not usable here.
    fn add_mcp<'a>(
        &'a self,
        declaration: McpDeclaration,
        agent_id: &'a str,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<()>>;

    /// Removes (and stops) the MCP server `name`; `false` when there was
    /// none.
    ///
    /// # Errors
    /// The declarations cannot be written.
    fn remove_mcp<'a>(
        &'a self,
        name: &'a str,
        agent_id: &'a str,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<bool>>;

    /// The skills of `agent_id` (its partition, copied from the seed the
    /// first time).
    ///
    /// # Errors
    /// The partition cannot be read.
    fn list_skills<'a>(&'a self, agent_id: &'a str) -> BoxFuture<'a, Result<Vec<Skill>>>;

    /// Copies the skill directory `source` (a directory of the host with a
    /// `SKILL.md`) into the partition of `agent_id`; returns the skill's
    /// name. `source` is trusted: a service must decide which host
    /// directories a tenant may name.
    ///
    /// # Errors
    /// No valid `SKILL.md`, or a skill of that name exists.
    fn add_skill<'a>(&'a self, source: PathBuf, agent_id: &'a str)
    -> BoxFuture<'a, Result<String>>;

    /// Deletes the skill `name` from the partition of `agent_id`.
    ///
    /// # Errors
    /// [`Error::UnknownSkill`](crate::Error::UnknownSkill).
    fn remove_skill<'a>(&'a self, name: &'a str, agent_id: &'a str) -> BoxFuture<'a, Result<()>>;

    /// A system-prompt fragment describing the workspace to the model.
    fn instructions(&self) -> String;
}
