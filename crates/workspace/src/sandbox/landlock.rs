//! The Landlock + seccomp tier's launcher: a program (this crate's
//! `oxiscope-landlock`, or the `oxiscope` binary, which calls
//! [`landlock_launcher`] first) that confines itself and then executes the
//! command. No setuid helper, no namespace: kernel features alone.
//!
//! What a confined process may do:
//!
//! - the file system: read and execute the system (`/usr`, `/bin`,
//!   `/lib*`, a handful of `/etc` entries, the operator's extra read-only
//!   paths, `/dev/null`, `/dev/zero`, `/dev/urandom`), everything beneath
//!   the workspace directory and a private temporary directory, and
//!   nothing else (no `/proc`, no data directory, no other workspace);
//! - no signal to, and no abstract socket of, a process outside its
//!   Landlock domain (Landlock ABI 6; a kernel without it leaves signals to
//!   the same user possible, which is why the server runs commands as
//!   another user when it is root);
//! - a syscall filter: no `ptrace`, no other process's memory, no mount or
//!   new mount API, no `chroot`, no new namespace (`unshare`, `setns`,
//!   `clone` with a namespace flag; `clone3` answers "not implemented" so
//!   the C library falls back to `clone`), no kernel keyring, no BPF, no
//!   perf events, no modules, no `io_uring`; without network, no socket
//!   but a Unix one and (Landlock ABI 4) no TCP bind or connect;
//! - the limits of [`Limits`](super::Limits), set as hard limits;
//! - as root, the sandbox user ([`SandboxConfig::run_as`](super::SandboxConfig::run_as)).
//!
//! The policy reaches the launcher as JSON on descriptor 3, not on its
//! command line.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{self, Read as _};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
    path_beneath_rules,
};

use super::seccomp;

/// The first argument that makes a program the launcher.
pub const LANDLOCK_LAUNCHER_ARG: &str = "__oxiscope-landlock";

/// The descriptor the launcher reads its [`Policy`] from.
pub(crate) const POLICY_FD: i32 = 3;

/// The newest Landlock ABI this launcher knows how to use.
const TARGET_ABI: ABI = ABI::V6;

/// What a confined command may do, as the launcher receives it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Policy {
    /// Readable and executable, beneath.
    pub(crate) read: Vec<PathBuf>,
    /// Every access, beneath.
    pub(crate) write: Vec<PathBuf>,
    /// Files read and written (devices).
    pub(crate) devices: Vec<PathBuf>,
    pub(crate) network: bool,
    pub(crate) limits: super::Limits,
    /// The user and group to become (only when started as root).
    pub(crate) user: Option<(u32, u32)>,
    pub(crate) cwd: PathBuf,
    /// The whole environment of the command.
    pub(crate) env: BTreeMap<String, String>,
}

/// When this process was started as the launcher (`PROGRAM
/// __oxiscope-landlock -- COMMAND ARGS...`, a [`Policy`] on descriptor 3),
/// confines it and executes the command; never returns then (exit 126 on
/// a failure, saying why on stderr). Otherwise returns at once. A binary
/// that is to serve as the Landlock tier's launcher calls it first thing
/// in `main`.
pub fn landlock_launcher() {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(LANDLOCK_LAUNCHER_ARG.as_ref()) {
        return;
    }
    let args: Vec<OsString> = args.collect();
    let err = launch(&args);
    eprintln!("oxiscope-landlock: {err}");
    std::process::exit(126);
}

fn launch(args: &[OsString]) -> io::Error {
    if args.first().is_some_and(|a| a == "--abi") {
        return match kernel_abi() {
            Ok(abi) => {
                // The launcher's one line of output: what the server reads.
                let mut out = io::stdout();
                let written = io::Write::write_all(&mut out, format!("{abi}\n").as_bytes());
                std::process::exit(if written.is_ok() { 0 } else { 1 })
            }
            Err(e) => e,
        };
    }
    let Some(("--", command)) = args
        .split_first()
        .and_then(|(first, rest)| first.to_str().map(|f| (f, rest)))
    else {
        return io::Error::new(io::ErrorKind::InvalidInput, "usage: -- COMMAND ARGS...");
    };
    let Some((program, program_args)) = command.split_first() else {
        return io::Error::new(io::ErrorKind::InvalidInput, "no command");
    };
    let policy = match read_policy() {
        Ok(policy) => policy,
        Err(e) => return e,
    };
    if let Err(e) = confine(&policy) {
        return e;
    }
    std::process::Command::new(program)
        .args(program_args)
        .env_clear()
        .envs(&policy.env)
        // (Already in the working directory: entered before dropping root,
        // so directories above it the sandbox user may not pass through do
        // not stop it.)
        .exec()
}

/// The Landlock ABI the kernel enforces for this launcher (this process
/// confines itself to find out: `--abi` mode only).
fn kernel_abi() -> io::Result<i32> {
    let status = landlock::Ruleset::default()
        .handle_access(AccessFs::from_all(TARGET_ABI))
        .and_then(landlock::Ruleset::create)
        .and_then(|r| r.restrict_self())
        .map_err(|e| io::Error::other(format!("landlock: {e}")))?;
    Ok(match status.landlock {
        landlock::LandlockStatus::Available { effective_abi, .. } => effective_abi as i32,
        _ => 0,
    })
}

fn read_policy() -> io::Result<Policy> {
    let mut text = Vec::new();
    std::fs::File::open(format!("/proc/self/fd/{POLICY_FD}"))?.read_to_end(&mut text)?;
    serde_json::from_slice(&text)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("the policy: {e}")))
}

/// Confines this process (single-threaded: the launcher) by `policy`.
fn confine(policy: &Policy) -> io::Result<()> {
    use rustix::process::{Resource, Rlimit, setrlimit};

    let l = &policy.limits;
    for (resource, value) in [
        (Resource::Cpu, l.cpu_seconds.max(1)),
        (Resource::As, l.address_space.max(1 << 20)),
        (Resource::Nproc, l.processes.max(1)),
        (Resource::Fsize, l.file_size.max(1)),
        (Resource::Nofile, l.open_files.max(16)),
        (Resource::Core, 0),
    ] {
        setrlimit(
            resource,
            Rlimit {
                current: Some(value),
                maximum: Some(value),
            },
        )?;
    }
    std::env::set_current_dir(&policy.cwd)?;
    // The rules open their paths now, before root is dropped: the sandbox
    // user need not pass through the directories above them.
    let ruleset = file_rules(policy)?;
    if let Some((uid, gid)) = policy.user {
        use rustix::process::{Gid, Uid};
        use rustix::thread::{set_thread_groups, set_thread_res_gid, set_thread_res_uid};
        let gid = Gid::from_raw(gid);
        let uid = Uid::from_raw(uid);
        set_thread_groups(&[])?;
        set_thread_res_gid(gid, gid, gid)?;
        set_thread_res_uid(uid, uid, uid)?;
    }
    let status = ruleset
        .restrict_self()
        .map_err(|e| io::Error::other(format!("landlock: {e}")))?;
    if status.ruleset == RulesetStatus::NotEnforced || !status.no_new_privs {
        return Err(io::Error::other(
            "this kernel does not enforce Landlock (it needs Linux 5.13 or later with \
             Landlock in the `lsm=` list)",
        ));
    }
    seccomp::apply(policy.network)
}

fn file_rules(policy: &Policy) -> io::Result<landlock::RulesetCreated> {
    let failed = |e: landlock::RulesetError| io::Error::other(format!("landlock: {e}"));
    let abi = TARGET_ABI;
    let existing = |paths: &[PathBuf]| -> Vec<PathBuf> {
        paths.iter().filter(|p| p.exists()).cloned().collect()
    };
    let mut ruleset = landlock::Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(failed)?
        .scope(Scope::from_all(abi))
        .map_err(failed)?;
    if !policy.network {
        // No rule allows a port: every TCP bind and connect is refused.
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(failed)?;
    }
    ruleset
        .create()
        .map_err(failed)?
        .add_rules(path_beneath_rules(
            existing(&policy.read),
            AccessFs::from_read(abi),
        ))
        .map_err(failed)?
        .add_rules(path_beneath_rules(
            existing(&policy.devices),
            AccessFs::from_file(abi),
        ))
        .map_err(failed)?
        .add_rules(path_beneath_rules(
            existing(&policy.write),
            AccessFs::from_all(abi),
        ))
        .map_err(failed)
}

/// How the server starts commands of one workspace under the launcher.
#[derive(Debug)]
pub(crate) struct Confine {
    launcher: PathBuf,
    config: std::sync::Arc<super::SandboxConfig>,
    host_root: PathBuf,
    /// The workspace's private temporary directory (removed on drop).
    tmp: PathBuf,
    user: Option<(u32, u32)>,
}

impl Drop for Confine {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

/// The launcher `config` names, else this program.
fn launcher_of(config: &super::SandboxConfig) -> io::Result<PathBuf> {
    match &config.launcher {
        Some(path) => Ok(path.clone()),
        None => std::env::current_exe(),
    }
}

/// The Landlock ABI the launcher of `config` finds enforced here.
///
/// # Errors
/// The launcher cannot run, or the kernel enforces no Landlock.
pub(crate) async fn probe(config: &super::SandboxConfig) -> io::Result<i32> {
    let launcher = launcher_of(config)?;
    let out = tokio::process::Command::new(&launcher)
        .args([LANDLOCK_LAUNCHER_ARG, "--abi"])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run {}: {e}", launcher.display())))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.trim().parse::<i32>() {
        Ok(abi) if out.status.success() && abi > 0 => Ok(abi),
        _ => Err(io::Error::other(format!(
            "{} is not a working Landlock launcher here ({}): {}",
            launcher.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
    }
}

impl Confine {
    /// The launcher of a workspace at `host_root`, with a fresh private
    /// temporary directory.
    pub(crate) fn new(
        config: std::sync::Arc<super::SandboxConfig>,
        host_root: PathBuf,
    ) -> io::Result<Self> {
        use std::os::unix::fs::PermissionsExt as _;
        let launcher = launcher_of(&config)?;
        let user = super::sandbox_user(&config);
        let tmp = std::env::temp_dir().join(format!("oxiscope-tmp-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir(&tmp)?;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o700))?;
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&tmp, Some(uid), Some(gid))?;
        }
        Ok(Self {
            launcher,
            config,
            host_root,
            tmp,
            user,
        })
    }

    fn policy(&self, cwd: &std::path::Path, env: &BTreeMap<String, String>) -> Policy {
        let mut read: Vec<PathBuf> = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64"]
            .into_iter()
            .map(PathBuf::from)
            .collect();
        read.extend(super::bwrap::ETC_FILES.iter().map(PathBuf::from));
        if self.config.network {
            read.extend(super::bwrap::NET_FILES.iter().map(PathBuf::from));
        }
        read.extend(self.config.ro_binds.iter().cloned());
        read.push(PathBuf::from("/dev/urandom"));
        read.push(PathBuf::from("/dev/random"));
        let mut vars = super::bwrap::base_env(&self.config);
        vars.insert("HOME".to_owned(), self.host_root.display().to_string());
        vars.insert("TMPDIR".to_owned(), self.tmp.display().to_string());
        vars.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
        Policy {
            read,
            write: vec![self.host_root.clone(), self.tmp.clone()],
            devices: ["/dev/null", "/dev/zero", "/dev/full"]
                .into_iter()
                .map(PathBuf::from)
                .collect(),
            network: self.config.network,
            limits: self.config.limits,
            user: self.user,
            cwd: cwd.to_path_buf(),
            env: vars,
        }
    }

    fn policy_bytes(
        &self,
        cwd: &std::path::Path,
        env: &BTreeMap<String, String>,
    ) -> io::Result<Vec<u8>> {
        serde_json::to_vec(&self.policy(cwd, env))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))
    }

    fn args(program: &str, args: &[String]) -> Vec<String> {
        let mut all = vec![
            LANDLOCK_LAUNCHER_ARG.to_owned(),
            "--".to_owned(),
            program.to_owned(),
        ];
        all.extend(args.iter().cloned());
        all
    }

    /// A command running `program args...` confined, in `cwd` (a host
    /// path beneath the workspace) with `env` added.
    ///
    /// # Errors
    /// The policy cannot be passed.
    pub(crate) fn command(
        &self,
        cwd: &std::path::Path,
        env: &BTreeMap<String, String>,
        program: &str,
        args: &[String],
    ) -> io::Result<tokio::process::Command> {
        let mut command = tokio::process::Command::new(&self.launcher);
        command
            .env_clear()
            .args(Self::args(program, args))
            .current_dir("/");
        oxiscope_tool::pass_data_fd(&mut command, POLICY_FD, &self.policy_bytes(cwd, env)?)?;
        Ok(command)
    }

    /// The same as an MCP stdio server.
    ///
    /// # Errors
    /// The policy cannot be passed.
    pub(crate) fn mcp(
        &self,
        cwd: &std::path::Path,
        env: &BTreeMap<String, String>,
        program: &str,
        args: &[String],
    ) -> io::Result<oxiscope_mcp::McpConfig> {
        Ok(oxiscope_mcp::McpConfig::stdio(
            self.launcher.to_string_lossy().into_owned(),
            Self::args(program, args),
        )
        .with_clean_env()
        .with_cwd("/")
        .with_data_fd(POLICY_FD, self.policy_bytes(cwd, env)?))
    }
}
