//! Workspaces: where an Oxiscope agent acts. A [`Workspace`] owns a
//! directory and everything living in it — the built-in tools bound to an
//! execution backend, MCP servers (declared per agent and session,
//! persisted), skills (per agent), and the files offloaded from the
//! context — and [`equip`] turns it into an agent's toolkit, offloader and
//! working directory: the one place an agent is assembled, for the
//! console and the service alike.
//!
//! - [`LocalWorkspace`]: the host, unconfined (a person's own machine).
//! - [`SandboxWorkspace`]: every command and MCP stdio server in a
//!   bubblewrap sandbox, every file-tool path confined to the workspace
//!   directory by the kernel ([`ConfinedDir`]).
//! - [`WorkspaceManager`]: workspaces per user and agent, session or user
//!   ([`Isolation`]), cached, closed when idle.
//!
//! This crate does not decide whether a call may run (the permission
//! engine does) and does not drive the conversation (the agent does).
//!
//! # Example
//!
//! ```
//! use oxiscope_workspace::{LocalWorkspace, Workspace, assemble_toolkit};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let dir = std::env::temp_dir().join(format!("ws-doc-{}", std::process::id()));
//! let workspace = LocalWorkspace::new("demo", &dir)?;
//! workspace.initialize().await?;
//! let (toolkit, _mcp) = assemble_toolkit(&workspace, "agent-1", "session-1").await?;
//! assert!(toolkit.tool("Bash").is_some());
//! assert!(dir.join(".mcp").is_dir() && dir.join("skills/.seed").is_dir());
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod assemble;
mod confined;
mod core;
mod decl;
mod error;
mod local;
mod manager;
mod sandbox;
mod skill_import;
mod workspace;

pub use assemble::{Equipment, SharedEquipment, assemble_toolkit, equip};
pub use confined::{ConfinedDir, EntryKind};
pub use decl::{McpDeclaration, McpServerConfig};
pub use error::{Error, Result, validate_id};
pub use local::{LocalWorkspace, LocalWorkspaceBuilder};
pub use manager::{Isolation, WorkspaceFactory, WorkspaceManager, WorkspaceSpec, user_dir_name};
pub use sandbox::{
    LANDLOCK_LAUNCHER_ARG, Limits, SANDBOX_ROOT, SandboxBackend, SandboxConfig, SandboxTier,
    SandboxWorkspace, landlock_launcher, probe as probe_sandbox, probe_at as probe_sandbox_at,
    probe_landlock, sandbox_user,
};
pub use skill_import::{
    SkillLimits, SkillStage, StagedFile, safe_relative_path, stage_skill_archive, stage_skill_dir,
};
pub use workspace::Workspace;
