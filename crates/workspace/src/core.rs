//! What every workspace shares: the state directory (MCP declarations,
//! skills, offloaded sessions and data) and the live MCP clients.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use oxiscope_mcp::{McpClient, McpConfig};
use oxiscope_tool::{FileOffloader, Skill};

use crate::confined::{ConfinedDir, EntryKind};
use crate::decl::McpDeclaration;
use crate::error::{Error, Result, validate_id};

#[path = "core_files.rs"]
mod files;
use files::{copy_confined, copy_host_dir, read_host_file, read_skill};

/// MCP declarations: `.mcp/{agent_id}/{session_id}.json`.
const MCP_DIR: &str = ".mcp";
/// Skills: `skills/.seed/` and `skills/{agent_id}/`.
const SKILLS_DIR: &str = "skills";
/// The template every agent's skill partition starts from.
const SEED: &str = ".seed";
/// The skill file in a skill directory.
const SKILL_FILE: &str = "SKILL.md";
/// The directories a workspace creates.
const LAYOUT: [&str; 4] = [MCP_DIR, "skills/.seed", "sessions", "data"];
/// The largest declaration file, `SKILL.md` or copied skill file read.
const MAX_FILE: u64 = 16 * 1024 * 1024;
/// How deep a copied skill directory may nest.
const MAX_DEPTH: usize = 16;
/// The largest `SKILL.md` loaded (skills stay in memory with the agent).
const MAX_SKILL_FILE: u64 = 256 * 1024;
/// The most skills one agent loads.
const MAX_SKILLS: usize = 64;
/// The most bytes of skills one agent loads.
const MAX_SKILL_BYTES: usize = 4 * 1024 * 1024;
/// The most bytes one copy of a skill directory writes.
const MAX_COPY_BYTES: u64 = 64 * 1024 * 1024;
/// The most MCP servers one session declares (each is a process or a
/// connection, started on every listing and every run).
const MAX_MCP_SERVERS: usize = 32;

/// Turns a declaration into how its server is started (the sandbox runs
/// stdio servers inside itself).
pub(crate) type Launcher = dyn Fn(&McpDeclaration) -> Result<McpConfig> + Send + Sync;

/// The state and MCP clients of one workspace.
pub(crate) struct Core {
    pub(crate) id: String,
    pub(crate) state: ConfinedDir,
    pub(crate) offloader: FileOffloader,
    default_mcps: Vec<McpDeclaration>,
    skill_seed: Vec<PathBuf>,
    launcher: Box<Launcher>,
    clients: tokio::sync::Mutex<HashMap<(String, String), Vec<McpClient>>>,
}

impl fmt::Debug for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Core")
            .field("id", &self.id)
            .field("state", &self.state)
            .field("default_mcps", &self.default_mcps)
            .finish_non_exhaustive()
    }
}

/// Runs blocking file work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::io("a file task", std::io::Error::other(e.to_string())))?
}

impl Core {
    /// A core over the state directory `state`.
    pub(crate) fn new(
        id: String,
        state: ConfinedDir,
        default_mcps: Vec<McpDeclaration>,
        skill_seed: Vec<PathBuf>,
        launcher: Box<Launcher>,
    ) -> Self {
        let offloader = FileOffloader::with_fs(state.shown(), Arc::new(state.clone()));
        Self {
            id,
            state,
            offloader,
            default_mcps,
            skill_seed,
            launcher,
            clients: tokio::sync::Mutex::default(),
        }
    }

    /// Creates the layout and copies the skill seed (skills already in the
    /// seed are kept).
    pub(crate) async fn initialize(&self) -> Result<()> {
        let state = self.state.clone();
        let seeds = self.skill_seed.clone();
        blocking(move || {
            for dir in LAYOUT {
                state
                    .create_dir_all(Path::new(dir))
                    .map_err(|e| Error::io("creating the workspace layout", e))?;
            }
            for source in seeds {
                let Some(name) = source.file_name() else {
                    continue;
                };
                let target = Path::new(SKILLS_DIR).join(SEED).join(name);
                if state.metadata(&target).is_err() {
                    copy_host_dir(&source, &state, &target)?;
                }
            }
            Ok(())
        })
        .await
    }

    /// Stops every MCP server started.
    pub(crate) async fn close(&self) {
        let clients: Vec<McpClient> = self
            .clients
            .lock()
            .await
            .drain()
            .flat_map(|(_, c)| c)
            .collect();
        for client in clients {
            client.close().await;
        }
    }

    /// Closes, then deletes declarations, skill partitions and sessions.
    pub(crate) async fn reset(&self) -> Result<()> {
        self.close().await;
        let state = self.state.clone();
        blocking(move || {
            let fail = |e| Error::io("resetting the workspace", e);
            for dir in [MCP_DIR, "sessions", "data"] {
                state.remove_all(Path::new(dir)).map_err(fail)?;
            }
            for (name, _) in state.list(Path::new(SKILLS_DIR)).map_err(fail)? {
                if name != SEED {
                    state
                        .remove_all(&Path::new(SKILLS_DIR).join(name))
                        .map_err(fail)?;
                }
            }
            Ok(())
        })
        .await?;
        self.initialize().await
    }

    fn decl_path(agent_id: &str, session_id: &str) -> Result<PathBuf> {
        validate_id("agent id", agent_id)?;
        validate_id("session id", session_id)?;
        Ok(Path::new(MCP_DIR)
            .join(agent_id)
            .join(format!("{session_id}.json")))
    }

    /// The declarations of an agent in a session: the stored file, or the
    /// workspace's defaults before anything was stored.
    pub(crate) async fn declarations(
        &self,
        agent_id: &str,
        session_id: &str,
    ) -> Result<Vec<McpDeclaration>> {
        let rel = Self::decl_path(agent_id, session_id)?;
        let state = self.state.clone();
        let defaults = self.default_mcps.clone();
        blocking(move || match state.read(&rel, MAX_FILE) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::io(
                    format!("reading {}", state.display(&rel).display()),
                    std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(defaults),
            Err(e) => Err(Error::io("reading the MCP declarations", e)),
        })
        .await
    }

    async fn store(
        &self,
        agent_id: &str,
        session_id: &str,
        decls: &[McpDeclaration],
    ) -> Result<()> {
        let rel = Self::decl_path(agent_id, session_id)?;
        let bytes = serde_json::to_vec_pretty(decls)
            .map_err(|e| Error::io("encoding the MCP declarations", std::io::Error::other(e)))?;
        let state = self.state.clone();
        blocking(move || {
            state
                .write_atomic(&rel, &bytes)
                .map_err(|e| Error::io("writing the MCP declarations", e))
        })
        .await
    }

    fn client(&self, decl: &McpDeclaration) -> Result<McpClient> {
        decl.validate()?;
        decl.client_with((self.launcher)(decl)?)
    }

    /// The live clients of an agent in a session, made on first use.
    pub(crate) async fn list_mcps(
        &self,
        agent_id: &str,
        session_id: &str,
    ) -> Result<Vec<McpClient>> {
        let key = (agent_id.to_owned(), session_id.to_owned());
        let mut clients = self.clients.lock().await;
        if let Some(live) = clients.get(&key) {
            return Ok(live.clone());
        }
        let mut live = Vec::new();
        for decl in self.declarations(agent_id, session_id).await? {
            match self.client(&decl) {
                Ok(client) => live.push(client),
                // One unusable declaration (edited by hand, say) must not
                // take the others down.
                Err(e) => tracing::warn!(workspace = %self.id, "skipping MCP server: {e}"),
            }
        }
        clients.insert(key, live.clone());
        Ok(live)
    }

    pub(crate) async fn add_mcp(
        &self,
        decl: McpDeclaration,
        agent_id: &str,
        session_id: &str,
    ) -> Result<()> {
        let client = self.client(&decl)?;
        let mut clients = self.clients.lock().await;
        let mut decls = self.declarations(agent_id, session_id).await?;
        if decls.iter().any(|d| d.name == decl.name) {
            return Err(Error::DuplicateMcp { name: decl.name });
        }
        if decls.len() >= MAX_MCP_SERVERS {
            return Err(Error::InvalidMcp {
                name: decl.name,
                reason: format!(
                    "a session declares at most {MAX_MCP_SERVERS} MCP servers; remove one first"
                ),
            });
        }
        decls.push(decl);
        self.store(agent_id, session_id, &decls).await?;
        if let Some(live) = clients.get_mut(&(agent_id.to_owned(), session_id.to_owned())) {
            live.push(client);
        }
        Ok(())
    }

    pub(crate) async fn remove_mcp(
        &self,
        name: &str,
        agent_id: &str,
        session_id: &str,
    ) -> Result<bool> {
        let mut clients = self.clients.lock().await;
        let mut decls = self.declarations(agent_id, session_id).await?;
        let before = decls.len();
        decls.retain(|d| d.name != name);
        if decls.len() == before {
            tracing::warn!(workspace = %self.id, "no MCP server named {name:?} to remove");
            return Ok(false);
        }
        self.store(agent_id, session_id, &decls).await?;
        let gone: Vec<McpClient> = clients
            .get_mut(&(agent_id.to_owned(), session_id.to_owned()))
            .map(|live| {
                let (gone, kept) = live.drain(..).partition(|c| c.name() == name);
                *live = kept;
                gone
            })
            .unwrap_or_default();
        drop(clients);
        for client in gone {
            client.close().await;
        }
        Ok(true)
    }

    fn partition(agent_id: &str) -> Result<PathBuf> {
        validate_id("agent id", agent_id)?;
        Ok(Path::new(SKILLS_DIR).join(agent_id))
    }

    /// The agent's partition, created from the seed the first time.
    async fn ensure_partition(&self, agent_id: &str) -> Result<PathBuf> {
        let part = Self::partition(agent_id)?;
        let state = self.state.clone();
        let target = part.clone();
        blocking(move || {
            if state.metadata(&target).is_ok() {
                return Ok(());
            }
            let seed = Path::new(SKILLS_DIR).join(SEED);
            copy_confined(&state, &seed, &target)?;
            state
                .create_dir_all(&target)
                .map_err(|e| Error::io("creating the skill partition", e))
        })
        .await?;
        Ok(part)
    }

    pub(crate) async fn list_skills(&self, agent_id: &str) -> Result<Vec<Skill>> {
        let part = self.ensure_partition(agent_id).await?;
        let state = self.state.clone();
        let id = self.id.clone();
        blocking(move || {
            let mut skills: Vec<Skill> = Vec::new();
            let mut bytes = 0;
            for (name, kind) in state
                .list(&part)
                .map_err(|e| Error::io("listing skills", e))?
            {
                if kind != EntryKind::Dir {
                    continue;
                }
                if skills.len() >= MAX_SKILLS || bytes >= MAX_SKILL_BYTES {
                    tracing::warn!(workspace = %id, "more skills than the limit ({MAX_SKILLS} skills, {MAX_SKILL_BYTES} bytes); the rest are left out");
                    break;
                }
                let dir = part.join(&name);
                match read_skill(&state, &dir) {
                    Ok(skill) => {
                        bytes += skill.content.len();
                        skills.push(skill);
                    }
                    Err(reason) => {
                        tracing::warn!(workspace = %id, "skipping skill {name:?}: {reason}");
                    }
                }
            }
            Ok(skills)
        })
        .await
    }

    pub(crate) async fn add_skill(&self, source: PathBuf, agent_id: &str) -> Result<String> {
        let part = self.ensure_partition(agent_id).await?;
        let existing = self.list_skills(agent_id).await?;
        let state = self.state.clone();
        blocking(move || {
            let dir_name = source
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let invalid = |reason: String| Error::InvalidSkill {
                name: dir_name.clone(),
                reason,
            };
            validate_id("skill directory name", &dir_name).map_err(|e| invalid(e.to_string()))?;
            let markdown = read_host_file(&source.join(SKILL_FILE))
                .map_err(|e| invalid(format!("{SKILL_FILE}: {e}")))?;
            let skill = Skill::from_markdown(markdown, None).map_err(invalid)?;
            let target = part.join(&dir_name);
            if existing.iter().any(|s| s.name == skill.name) || state.metadata(&target).is_ok() {
                return Err(Error::DuplicateSkill { name: skill.name });
            }
            copy_host_dir(&source, &state, &target)?;
            Ok(skill.name)
        })
        .await
    }

    pub(crate) async fn remove_skill(&self, name: &str, agent_id: &str) -> Result<()> {
        let part = self.ensure_partition(agent_id).await?;
        let state = self.state.clone();
        let name = name.to_owned();
        blocking(move || {
            for (dir, kind) in state
                .list(&part)
                .map_err(|e| Error::io("listing skills", e))?
            {
                if kind != EntryKind::Dir {
                    continue;
                }
                let path = part.join(&dir);
                if read_skill(&state, &path).is_ok_and(|s| s.name == name) {
                    return state
                        .remove_all(&path)
                        .map_err(|e| Error::io("removing the skill", e));
                }
            }
            Err(Error::UnknownSkill { name })
        })
        .await
    }
}

/// Implements [`Offloader`](oxiscope_tool::Offloader) for a workspace
/// type with a `core` field: offloads go to the state directory, named as
/// the agent's tools see it.
macro_rules! offload_via_core {
    ($ty:ty) => {
        impl oxiscope_tool::Offloader for $ty {
            fn offload_context<'a>(
                &'a self,
                session_id: &'a str,
                msgs: &'a [oxiscope_message::Msg],
            ) -> futures_util::future::BoxFuture<'a, Result<String, oxiscope_tool::OffloadError>>
            {
                self.core.offloader.offload_context(session_id, msgs)
            }

            fn offload_tool_result<'a>(
                &'a self,
                session_id: &'a str,
                result: &'a oxiscope_message::ToolResultBlock,
            ) -> futures_util::future::BoxFuture<'a, Result<String, oxiscope_tool::OffloadError>>
            {
                self.core.offloader.offload_tool_result(session_id, result)
            }

            fn offload_data_block<'a>(
                &'a self,
                session_id: &'a str,
                block: &'a oxiscope_message::DataBlock,
            ) -> futures_util::future::BoxFuture<'a, Result<String, oxiscope_tool::OffloadError>>
            {
                self.core.offloader.offload_data_block(session_id, block)
            }
        }
    };
}
pub(crate) use offload_via_core;

/// The [`Workspace`](crate::Workspace) methods every workspace type with
/// `core`, `workdir` and `backend` fields answers from them alone (a
/// declaration is checked by the core's launcher before it is stored).
macro_rules! delegate_to_core {
    () => {
        crate::core::delegate_to_core!(custom_close);

        fn close(&self) -> futures_util::future::BoxFuture<'_, ()> {
            futures_util::FutureExt::boxed(self.core.close())
        }
    };
    (custom_close) => {
        fn id(&self) -> &str {
            &self.core.id
        }

        fn workdir(&self) -> &std::path::Path {
            &self.workdir
        }

        fn backend(&self) -> std::sync::Arc<dyn oxiscope_tool::ExecBackend> {
            std::sync::Arc::clone(&self.backend) as std::sync::Arc<dyn oxiscope_tool::ExecBackend>
        }

        fn add_mcp<'a>(
            &'a self,
            declaration: crate::McpDeclaration,
            agent_id: &'a str,
            session_id: &'a str,
        ) -> futures_util::future::BoxFuture<'a, crate::Result<()>> {
            futures_util::FutureExt::boxed(self.core.add_mcp(declaration, agent_id, session_id))
        }

        fn reset(&self) -> futures_util::future::BoxFuture<'_, crate::Result<()>> {
            futures_util::FutureExt::boxed(self.core.reset())
        }

        fn list_mcps<'a>(
            &'a self,
            agent_id: &'a str,
            session_id: &'a str,
        ) -> futures_util::future::BoxFuture<'a, crate::Result<Vec<oxiscope_mcp::McpClient>>> {
            futures_util::FutureExt::boxed(self.core.list_mcps(agent_id, session_id))
        }

        fn mcp_declarations<'a>(
            &'a self,
            agent_id: &'a str,
            session_id: &'a str,
        ) -> futures_util::future::BoxFuture<'a, crate::Result<Vec<crate::McpDeclaration>>> {
            futures_util::FutureExt::boxed(self.core.declarations(agent_id, session_id))
        }

        fn remove_mcp<'a>(
            &'a self,
            name: &'a str,
            agent_id: &'a str,
            session_id: &'a str,
        ) -> futures_util::future::BoxFuture<'a, crate::Result<bool>> {
            futures_util::FutureExt::boxed(self.core.remove_mcp(name, agent_id, session_id))
        }

        fn list_skills<'a>(
            &'a self,
            agent_id: &'a str,
        ) -> futures_util::future::BoxFuture<'a, crate::Result<Vec<oxiscope_tool::Skill>>> {
            futures_util::FutureExt::boxed(self.core.list_skills(agent_id))
        }

        fn add_skill<'a>(
            &'a self,
            source: std::path::PathBuf,
            agent_id: &'a str,
        ) -> futures_util::future::BoxFuture<'a, crate::Result<String>> {
            futures_util::FutureExt::boxed(self.core.add_skill(source, agent_id))
        }

        fn remove_skill<'a>(
            &'a self,
            name: &'a str,
            agent_id: &'a str,
        ) -> futures_util::future::BoxFuture<'a, crate::Result<()>> {
            futures_util::FutureExt::boxed(self.core.remove_skill(name, agent_id))
        }
    };
}
pub(crate) use delegate_to_core;
