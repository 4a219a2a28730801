//! [`LocalWorkspace`]: the host's files and processes, unconfined.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oxiscope_permission::PathEnv;
use oxiscope_tool::LocalBackend;

use crate::confined::ConfinedDir;
use crate::core::Core;
use crate::decl::McpDeclaration;
use crate::error::{Error, Result};
use crate::workspace::Workspace;

/// A workspace on the host: tools act on the working directory with the
/// server's (or the user's) own rights, MCP stdio servers start as host
/// processes. Only the permission engine stands between the model and
/// the machine, so this is for a person's own machine (`oxiscope chat`)
/// or a service whose tenants are trusted.
///
/// The working directory and the state directory (`.mcp/`, `skills/`,
/// `sessions/`, `data/`) are the same directory unless
/// [`with_state_dir`](LocalWorkspaceBuilder::state_dir) puts the state
/// elsewhere (the console keeps it out of the user's project).
#[derive(Debug)]
pub struct LocalWorkspace {
    core: Core,
    workdir: PathBuf,
    home: Option<PathBuf>,
    backend: Arc<LocalBackend>,
}

/// Builds a [`LocalWorkspace`]; see [`LocalWorkspace::builder`].
#[derive(Debug, Clone)]
pub struct LocalWorkspaceBuilder {
    id: String,
    workdir: PathBuf,
    state_dir: Option<PathBuf>,
    home: Option<PathBuf>,
    default_mcps: Vec<McpDeclaration>,
    skill_seed: Vec<PathBuf>,
}

impl LocalWorkspaceBuilder {
    /// Keeps `.mcp/`, `skills/`, `sessions/` and `data/` in `dir` instead
    /// of the working directory.
    #[must_use]
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// The home directory `~` means in tool paths.
    #[must_use]
    pub fn home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// MCP servers every agent and session starts with.
    #[must_use]
    pub fn default_mcps(mut self, mcps: Vec<McpDeclaration>) -> Self {
        self.default_mcps = mcps;
        self
    }

    /// Skill directories copied into the skill seed on
    /// [`initialize`](Workspace::initialize).
    #[must_use]
    pub fn skill_seed(mut self, dirs: Vec<PathBuf>) -> Self {
        self.skill_seed = dirs;
        self
    }

    /// The workspace (directories are created by
    /// [`initialize`](Workspace::initialize)).
    ///
    /// # Errors
    /// The state directory cannot be created or opened.
    pub fn build(self) -> Result<LocalWorkspace> {
        let workdir = std::path::absolute(&self.workdir)
            .map_err(|e| Error::io("the working directory", e))?;
        let state_path = std::path::absolute(self.state_dir.as_ref().unwrap_or(&workdir))
            .map_err(|e| Error::io("the state directory", e))?;
        let state = ConfinedDir::open(&state_path, &state_path)
            .map_err(|e| Error::io("opening the state directory", e))?;
        let core = Core::new(
            self.id,
            state,
            self.default_mcps,
            self.skill_seed,
            Box::new(|decl: &McpDeclaration| Ok(decl.host_config())),
        );
        Ok(LocalWorkspace {
            core,
            workdir,
            home: self.home,
            backend: Arc::new(LocalBackend::new()),
        })
    }
}

impl LocalWorkspace {
    /// A builder for the workspace `id` working in `workdir`.
    pub fn builder(id: impl Into<String>, workdir: impl Into<PathBuf>) -> LocalWorkspaceBuilder {
        LocalWorkspaceBuilder {
            id: id.into(),
            workdir: workdir.into(),
            state_dir: None,
            home: None,
            default_mcps: Vec::new(),
            skill_seed: Vec::new(),
        }
    }

    /// The workspace `id` in `workdir`, state included.
    ///
    /// # Errors
    /// As [`LocalWorkspaceBuilder::build`].
    pub fn new(id: impl Into<String>, workdir: impl Into<PathBuf>) -> Result<Self> {
        Self::builder(id, workdir).build()
    }
}

impl Workspace for LocalWorkspace {
    crate::core::delegate_to_core!();

    fn path_env(&self) -> PathEnv {
        PathEnv::new(&self.workdir, self.home.clone())
    }

    fn initialize(&self) -> BoxFuture<'_, Result<()>> {
        async move {
            tokio::fs::create_dir_all(&self.workdir)
                .await
                .map_err(|e| Error::io("creating the working directory", e))?;
            self.core.initialize().await
        }
        .boxed()
    }

    fn instructions(&self) -> String {
        format!("Your working directory is {}.", self.workdir.display())
    }
}

crate::core::offload_via_core!(LocalWorkspace);
