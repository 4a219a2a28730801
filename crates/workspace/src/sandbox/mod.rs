//! [`SandboxWorkspace`]: a workspace whose tools, commands and MCP stdio
//! servers run inside a bubblewrap (`bwrap`) sandbox.
//!
//! What a sandboxed process sees and may do:
//!
//! - the workspace directory, read-write, at `/workspace` (also its
//!   `HOME`); a read-only `/usr` (with `/bin`, `/lib*`), a handful of
//!   `/etc` entries (linker cache, alternatives, certificates, time zone;
//!   resolver files only with network), any extra read-only paths the
//!   operator configured, a private `/tmp`, a minimal `/dev` and a `/proc`
//!   of its own pid namespace — no data directory, no other workspace, no
//!   host process;
//! - an empty environment plus `PATH`, `HOME`, `LANG`, `TMPDIR` and what
//!   the configuration adds explicitly — never the server's variables,
//!   neither in the command nor in the launcher (`bwrap` and the init
//!   process it leaves in the sandbox's pid namespace, which every
//!   sandboxed process can read through `/proc/1`): they start with an
//!   empty environment, and read their options (host paths, a caller's
//!   variables) from a descriptor, so no command line shows them;
//! - no network unless the configuration turns it on;
//! - limits on CPU seconds, address space, processes, file size and open
//!   files (a fork bomb or an endless writer fails inside), a wall-clock
//!   timeout per command whose process group is then killed, and
//!   `--die-with-parent` so nothing outlives the server;
//! - when the server runs as root, an unprivileged user
//!   ([`SandboxConfig::run_as`]), so sandboxed code holds no root-owned
//!   file or kernel setting. That user need not pass through the
//!   directories above the workspace (root's home is `0700`): a root
//!   `bwrap` first mounts the workspace where anyone may pass, in a mount
//!   namespace of its own, then `setpriv` drops to the user, who starts
//!   the unprivileged sandbox from there.
//!
//! By default the sandbox is *warm* ([`SandboxConfig::warm`]): one
//! long-lived sandbox per workspace, made as above, whose namespaces each
//! command enters (`nsenter` through descriptors that pin them, then
//! `setpriv --no-new-privs` and the same limits), so a call costs a
//! process start instead of a sandbox set-up; it ends with the workspace
//! (closed, evicted or dropped) and a dead one is replaced by the next
//! command. Otherwise each command gets a sandbox of its own.
//!
//! The built-in file tools do not enter the sandbox: they work on the host
//! through a [`ConfinedDir`](crate::ConfinedDir), which resolves every
//! path beneath the workspace directory in the kernel (`openat2`), so
//! `..`, absolute links and links planted by sandboxed code cannot lead
//! outside; FIFOs and devices are refused, reads are capped. Paths are the
//! sandbox's (`/workspace/...`); anything else is an error result.
//!
//! MCP stdio servers run inside the sandbox too, spoken to over the
//! `bwrap` process's stdin / stdout: no port, no gateway. An HTTP MCP
//! server is reached from the host, so it is only accepted when the
//! sandbox has network.

mod backend;
mod bwrap;
mod landlock;
mod probe;
mod seccomp;
mod walk;
mod warm;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oxiscope_mcp::McpConfig;
use oxiscope_permission::PathEnv;

pub use backend::SandboxBackend;
pub use bwrap::SANDBOX_ROOT;
pub use landlock::{LANDLOCK_LAUNCHER_ARG, landlock_launcher};
pub use probe::{probe, probe_at, probe_landlock};

use crate::confined::ConfinedDir;
use crate::core::Core;
use crate::decl::{McpDeclaration, McpServerConfig};
use crate::error::{Error, Result};
use crate::workspace::Workspace;

/// Resource limits of every sandboxed process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// CPU seconds per process.
    pub cpu_seconds: u64,
    /// Address space per process, in bytes.
    pub address_space: u64,
    /// Processes (and threads) inside one sandbox.
    pub processes: u64,
    /// The largest file a process may write, in bytes.
    pub file_size: u64,
    /// Open files per process.
    pub open_files: u64,
    /// The size of the sandbox's private `/tmp` and `/dev/shm` (each),
    /// in bytes: memory-backed, so it counts against the host's memory.
    pub tmpfs_size: u64,
}

impl Default for Limits {
    /// 10 CPU minutes, 4 GiB of address space, 256 processes, 1 GiB
    /// files, 1,024 open files, 256 MiB `/tmp` and `/dev/shm`.
    fn default() -> Self {
        Self {
            cpu_seconds: 600,
            address_space: 4 << 30,
            processes: 256,
            file_size: 1 << 30,
            open_files: 1024,
            tmpfs_size: 256 << 20,
        }
    }
}

impl Limits {
    /// The shell line that sets the limits (soft and hard, so sandboxed
    /// code cannot raise them) and then runs its arguments; `with_env`:
    /// with the caller's variables, which reach it under a prefix and
    /// are given back their names for the program alone.
    fn shell_prelude(&self, with_env: bool) -> String {
        let run = if with_env {
            "e=(); for v in ${!OXISCOPE_ENV_@}; do e+=(\"${v#OXISCOPE_ENV_}=${!v}\"); \
             unset \"$v\"; done; exec /usr/bin/env -- \"${e[@]}\" \"$@\""
        } else {
            "exec \"$@\""
        };
        format!(
            "ulimit -t {} -v {} -u {} -f {} -n {} -c 0 || exit 126; {run}",
            self.cpu_seconds.max(1),
            (self.address_space / 1024).max(1),
            self.processes.max(1),
            (self.file_size / 1024).max(1),
            self.open_files.max(16),
        )
    }
}

/// Which kernel mechanism confines a workspace's commands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SandboxTier {
    /// Bubblewrap: user, mount, pid, ipc, uts and network namespaces; the
    /// workspace at `/workspace`, nothing else of the host's files.
    #[default]
    Bwrap,
    /// Landlock + seccomp (no namespaces, no setuid helper): the host's
    /// file system limited to the workspace, a private temporary directory
    /// and a read-only system, a syscall filter, limits; the workspace is
    /// at its host path. See [`landlock_launcher`].
    Landlock,
}

/// How sandboxes are made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// The confining mechanism.
    pub tier: SandboxTier,
    /// The Landlock tier's launcher: a program that calls
    /// [`landlock_launcher`] first (this crate's `oxiscope-landlock`, the
    /// `oxiscope` binary); `None`: this program itself.
    pub launcher: Option<PathBuf>,
    /// The bubblewrap program: a path, or a name looked up on `PATH`.
    pub bwrap: PathBuf,
    /// Whether sandboxed processes share the host's network namespace.
    /// They then reach whatever the host reaches — its loopback services
    /// (this server included), private networks, cloud metadata addresses
    /// — and HTTP MCP servers (fetched from the host) are accepted. Off by
    /// default.
    pub network: bool,
    /// Resource limits.
    pub limits: Limits,
    /// Variables every sandboxed process gets (the only ones besides
    /// `PATH`, `HOME`, `LANG`, `TMPDIR`).
    pub env: BTreeMap<String, String>,
    /// Extra host paths mounted read-only at the same place (a toolchain
    /// in `/opt`, say).
    pub ro_binds: Vec<PathBuf>,
    /// The host user and group sandboxed processes run as when the server
    /// runs as root (`None`: `65534:65534`, "nobody"); ignored otherwise.
    pub run_as: Option<(u32, u32)>,
    /// Whether commands enter one long-lived sandbox per workspace (the
    /// default: a call costs a process start, not a sandbox set-up)
    /// rather than each getting a sandbox of its own. Commands of a warm
    /// sandbox share its `/tmp` and pid namespace. MCP stdio servers
    /// always get a sandbox of their own.
    pub warm: bool,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            tier: SandboxTier::Bwrap,
            launcher: None,
            bwrap: PathBuf::from("bwrap"),
            network: false,
            limits: Limits::default(),
            env: BTreeMap::new(),
            ro_binds: Vec::new(),
            run_as: None,
            warm: true,
        }
    }
}

/// How the commands of one workspace are started.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    mode: Mode,
    config: Arc<SandboxConfig>,
    /// Where commands see the workspace.
    shown: PathBuf,
}

#[derive(Debug, Clone)]
enum Mode {
    /// Bubblewrap over `host_root`: the workspace's warm sandbox, or a
    /// fresh one per command.
    Bwrap {
        entry: bwrap::Entry,
        host_root: PathBuf,
        warm: Option<Arc<warm::Warm>>,
    },
    Landlock(Arc<landlock::Confine>),
}

impl Launch {
    /// Where commands see the workspace.
    pub(crate) fn shown(&self) -> &Path {
        &self.shown
    }

    /// A command running `program args...` in `cwd` (inside) with `env`.
    async fn command(
        &self,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        program: &str,
        args: &[String],
    ) -> std::io::Result<tokio::process::Command> {
        match &self.mode {
            Mode::Bwrap {
                warm: Some(warm), ..
            } => warm.command(cwd, env, program, args).await,
            Mode::Bwrap {
                entry, host_root, ..
            } => entry
                .spawn(&self.config, host_root, cwd, env, program, args)?
                .command(),
            Mode::Landlock(confine) => confine.command(cwd, env, program, args),
        }
    }

    /// `program args...` as an MCP stdio server, in a sandbox of its own.
    fn mcp(
        &self,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        program: &str,
        args: &[String],
    ) -> std::io::Result<McpConfig> {
        match &self.mode {
            Mode::Bwrap {
                entry, host_root, ..
            } => entry
                .spawn(&self.config, host_root, cwd, env, program, args)
                .map(bwrap::Spawn::mcp),
            Mode::Landlock(confine) => confine.mcp(cwd, env, program, args),
        }
    }

    async fn stop(&self) {
        if let Mode::Bwrap {
            warm: Some(warm), ..
        } = &self.mode
        {
            warm.stop().await;
        }
    }
}

/// A workspace whose commands run in a bubblewrap sandbox.
///
/// Made with [`SandboxWorkspace::create`], which fails with
/// [`Error::SandboxUnavailable`] (saying what to install or enable) where
/// bubblewrap cannot run.
pub struct SandboxWorkspace {
    core: Core,
    backend: Arc<SandboxBackend>,
    launch: Launch,
    workdir: PathBuf,
    host_root: PathBuf,
}

impl fmt::Debug for SandboxWorkspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SandboxWorkspace")
            .field("id", &self.core.id)
            .field("host_root", &self.host_root)
            .field("config", &self.launch.config)
            .finish_non_exhaustive()
    }
}

impl SandboxWorkspace {
    /// A sandboxed workspace over the host directory `host_root` (created
    /// if missing; mounted at `/workspace` by bubblewrap, at its own path
    /// under Landlock), after checking that the tier works here.
    ///
    /// # Errors
    /// [`Error::SandboxUnavailable`]; the directory cannot be created.
    pub async fn create(
        id: impl Into<String>,
        host_root: impl Into<PathBuf>,
        config: SandboxConfig,
        default_mcps: Vec<McpDeclaration>,
        skill_seed: Vec<PathBuf>,
    ) -> Result<Self> {
        let id = id.into();
        let host_root = std::path::absolute(host_root.into())
            .map_err(|e| Error::io("the workspace directory", e))?;
        let program = match config.tier {
            SandboxTier::Bwrap => Some(bwrap::probe(&config).await?),
            SandboxTier::Landlock => {
                probe_landlock(&config).await?;
                None
            }
        };
        let shown = match config.tier {
            SandboxTier::Bwrap => PathBuf::from(SANDBOX_ROOT),
            SandboxTier::Landlock => host_root.clone(),
        };
        let mut state = ConfinedDir::open(&host_root, &shown)
            .map_err(|e| Error::io("opening the workspace directory", e))?;
        // What the server creates in the workspace (offloads, declarations,
        // the file tools' files) belongs to the sandbox user, so commands
        // inside can change it like their own files.
        if let Some(owner) = sandbox_user(&config) {
            state = state.with_owner(owner);
        }
        if let Some((uid, gid)) = sandbox_user(&config) {
            std::os::unix::fs::chown(&host_root, Some(uid), Some(gid))
                .map_err(|e| Error::io("handing the workspace to the sandbox user", e))?;
            std::fs::set_permissions(
                &host_root,
                std::os::unix::fs::PermissionsExt::from_mode(0o700),
            )
            .map_err(|e| Error::io("making the workspace private", e))?;
        }
        let config = Arc::new(config);
        let mode = match program {
            Some(program) => {
                let entry = bwrap::entry(&config, program)?;
                let warm = if config.warm {
                    let warm =
                        warm::Warm::new(entry.clone(), Arc::clone(&config), host_root.clone())
                            .map_err(|e| Error::SandboxUnavailable {
                                reason: e.to_string(),
                                hint: "Install util-linux, or turn the warm sandbox off."
                                    .to_owned(),
                            })?;
                    Some(Arc::new(warm))
                } else {
                    None
                };
                Mode::Bwrap {
                    entry,
                    host_root: host_root.clone(),
                    warm,
                }
            }
            None => Mode::Landlock(Arc::new(
                landlock::Confine::new(Arc::clone(&config), host_root.clone())
                    .map_err(|e| Error::io("preparing the Landlock sandbox", e))?,
            )),
        };
        let launch = Launch {
            mode,
            config: Arc::clone(&config),
            shown: shown.clone(),
        };
        let backend = Arc::new(SandboxBackend::new(state.clone(), launch.clone()));
        let mcp_launch = launch.clone();
        let core = Core::new(
            id,
            state,
            default_mcps,
            skill_seed,
            Box::new(move |decl| mcp_config(&mcp_launch, decl)),
        );
        Ok(Self {
            core,
            backend,
            launch,
            workdir: shown,
            host_root,
        })
    }

    /// The host directory of the workspace.
    #[must_use]
    pub fn host_root(&self) -> &Path {
        &self.host_root
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &SandboxConfig {
        &self.launch.config
    }
}

/// The host user and group sandboxes made with `config` run as, when it
/// is not this process's: only when this process runs as root.
#[must_use]
pub fn sandbox_user(config: &SandboxConfig) -> Option<(u32, u32)> {
    rustix::process::geteuid()
        .is_root()
        .then(|| config.run_as.unwrap_or((65_534, 65_534)))
}

/// How a declared server starts: stdio inside the sandbox, HTTP from the
/// host only when the sandbox has network.
fn mcp_config(launch: &Launch, decl: &McpDeclaration) -> Result<McpConfig> {
    match &decl.mcp_config {
        McpServerConfig::Stdio {
            command,
            args,
            env,
            cwd,
            ..
        } => {
            if let Some(bad) = env
                .iter()
                .flatten()
                .map(|(k, _)| k)
                .find(|k| !bwrap::valid_env_key(k))
            {
                return Err(Error::InvalidMcp {
                    name: decl.name.clone(),
                    reason: format!(
                        "the environment variable name {bad:?} is not a plain name \
                         (letters, digits, '_')"
                    ),
                });
            }
            let cwd = match cwd {
                Some(dir) => backend::inside(launch.shown(), Path::new(dir)).map_err(|e| {
                    Error::InvalidMcp {
                        name: decl.name.clone(),
                        reason: e.to_string(),
                    }
                })?,
                None => launch.shown().to_path_buf(),
            };
            launch
                .mcp(
                    &cwd,
                    env.as_ref().unwrap_or(&BTreeMap::new()),
                    command,
                    args.as_deref().unwrap_or_default(),
                )
                .map_err(|e| Error::InvalidMcp {
                    name: decl.name.clone(),
                    reason: e.to_string(),
                })
        }
        McpServerConfig::Http { .. } if launch.config.network => Ok(decl.host_config()),
        McpServerConfig::Http { .. } => Err(Error::InvalidMcp {
            name: decl.name.clone(),
            reason: "this workspace's sandbox has no network, so it takes no HTTP MCP servers"
                .to_owned(),
        }),
    }
}

impl Workspace for SandboxWorkspace {
    crate::core::delegate_to_core!(custom_close);

    fn close(&self) -> BoxFuture<'_, ()> {
        async move {
            self.core.close().await;
            self.launch.stop().await;
        }
        .boxed()
    }

    fn path_env(&self) -> PathEnv {
        // Paths are the sandbox's: nothing on the host's disk at
        // `/workspace` may be consulted, so resolution is lexical.
        PathEnv::new(&self.workdir, Some(self.workdir.clone())).with_symlinks_followed(false)
    }

    fn initialize(&self) -> BoxFuture<'_, Result<()>> {
        self.core.initialize().boxed()
    }

    fn instructions(&self) -> String {
        let network = if self.launch.config.network {
            "Commands have network access."
        } else {
            "Commands have no network access."
        };
        let root = self.workdir.display();
        format!(
            "You work in a sandbox. Your working directory is {root}; files there \
             persist between conversations, and nothing outside it is reachable (paths outside \
             {root} are errors). {network}"
        )
    }
}

crate::core::offload_via_core!(SandboxWorkspace);
