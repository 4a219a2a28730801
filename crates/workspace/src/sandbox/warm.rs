//! The warm sandbox: one long-lived bubblewrap sandbox per workspace,
//! whose namespaces every command enters, instead of a new sandbox per
//! command.
//!
//! The sandbox is made exactly as a fresh one is ([`Entry::spawn`], so the
//! same mounts, environment, limits and, as root, the same drop to the
//! sandbox user); its only program is a *holder* that waits forever.
//! Bubblewrap reports the holder's process id on an info descriptor; the
//! server then opens the holder's namespaces (user, mount, pid, ipc, uts,
//! and network and cgroup where they are the sandbox's own) and root
//! directory, checks them against the namespace numbers bubblewrap
//! reported, and keeps them open. A command is `nsenter` into those
//! descriptors (which pin the namespaces: a reused process id can never
//! send a command elsewhere), as the sandbox user, then `setpriv
//! --no-new-privs`, then the limit-setting shell of a fresh sandbox. It
//! gets no capability: it is not root in the sandbox's user namespace, so
//! `execve` clears them.
//!
//! What differs from a fresh sandbox: commands of one workspace share its
//! `/tmp` and its pid namespace (each sees the others, never the host's),
//! and a background process that leaves its call's process group
//! (`setsid`) lives on until the sandbox ends. The sandbox ends when the
//! workspace is closed or dropped (the holder's launcher is killed and
//! `--die-with-parent` takes every process inside with it) and with the
//! server; one that died (its holder killed from inside, say) is replaced
//! by the next command.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use command_fds::{CommandFdExt as _, FdMapping};

use super::SandboxConfig;
use super::bwrap::{self, ENV_PREFIX, Entry, OPTIONS_FD, SANDBOX_ROOT, SHELL_NAME};

/// The descriptor bubblewrap writes the holder's process id to.
const INFO_FD: i32 = 4;

/// The holder: waits for its input to end, which only the server writes.
const HOLDER: &str = "/bin/cat";

/// How long a holder may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// The namespaces a command always enters, in `nsenter`'s option names
/// and `/proc/PID/ns` names.
const ALWAYS: [(&str, &str); 5] = [
    ("--user", "user"),
    ("--mount", "mnt"),
    ("--pid", "pid"),
    ("--ipc", "ipc"),
    ("--uts", "uts"),
];

/// Entered only when the sandbox has its own (no network: a network
/// namespace; `--unshare-cgroup-try`: a cgroup namespace where the kernel
/// allows it).
const IF_OWN: [(&str, &str); 2] = [("--net", "net"), ("--cgroup", "cgroup")];

/// The first descriptor a command's launcher gets a namespace at.
const FIRST_FD: i32 = 3;

/// A running holder: the launcher process (killed on drop, which ends the
/// sandbox) and the descriptors that enter it.
#[derive(Debug)]
struct Holder {
    launcher: tokio::process::Child,
    /// The holder's stdin: it lives until this closes (with this process,
    /// at the latest).
    lifeline: Option<tokio::process::ChildStdin>,
    /// `nsenter` option and the namespace's descriptor.
    namespaces: Vec<(&'static str, OwnedFd)>,
    root: OwnedFd,
    /// The holder's process id and its pid namespace's number.
    pid: u32,
    pid_ns: u64,
}

impl Holder {
    /// Whether the sandbox still runs: its launcher has not exited and the
    /// holder is alive in the same pid namespace (when it dies, the
    /// namespace dies at once; its launchers exit a moment later).
    fn alive(&mut self) -> bool {
        matches!(self.launcher.try_wait(), Ok(None))
            && std::fs::metadata(format!("/proc/{}/ns/pid", self.pid))
                .is_ok_and(|m| m.ino() == self.pid_ns)
    }

    /// Ends the sandbox: the holder's input closes and the launchers (a
    /// process group of their own) are killed.
    fn end(&mut self) {
        self.lifeline = None;
        if let Some(pid) = self
            .launcher
            .id()
            .and_then(|id| rustix::process::Pid::from_raw(id as i32))
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.launcher.start_kill();
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        self.end();
    }
}

/// What bubblewrap's `--info-fd` reports.
#[derive(Debug, serde::Deserialize)]
struct Info {
    #[serde(rename = "child-pid")]
    child_pid: u32,
    #[serde(rename = "mnt-namespace")]
    mnt: u64,
    #[serde(rename = "pid-namespace")]
    pid: u64,
}

/// The warm sandbox of one workspace.
#[derive(Debug)]
pub(crate) struct Warm {
    entry: Entry,
    config: Arc<SandboxConfig>,
    host_root: PathBuf,
    nsenter: PathBuf,
    setpriv: PathBuf,
    /// Who commands run as: the sandbox user as root, else this process's
    /// user (mapped to itself inside).
    user: (u32, u32),
    holder: tokio::sync::Mutex<Option<Holder>>,
}

impl Warm {
    /// A warm sandbox over `host_root`; its holder starts with the first
    /// command.
    ///
    /// # Errors
    /// `NotFound` when `nsenter` or `setpriv` (util-linux) is missing.
    pub(crate) fn new(
        entry: Entry,
        config: Arc<SandboxConfig>,
        host_root: PathBuf,
    ) -> io::Result<Self> {
        let find = |name: &str| {
            bwrap::locate(Path::new(name)).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("`{name}` (util-linux), which enters the warm sandbox, was not found"),
                )
            })
        };
        let user = super::sandbox_user(&config).unwrap_or_else(|| {
            (
                rustix::process::getuid().as_raw(),
                rustix::process::getgid().as_raw(),
            )
        });
        Ok(Self {
            nsenter: find("nsenter")?,
            setpriv: find("setpriv")?,
            entry,
            config,
            host_root,
            user,
            holder: tokio::sync::Mutex::new(None),
        })
    }

    /// A command that runs `program args...` in `cwd` (inside) in the warm
    /// sandbox, with `env` added for `program` alone; starts (or replaces)
    /// the holder first when none is running.
    ///
    /// # Errors
    /// The holder could not start; `InvalidInput` for a NUL byte in a
    /// variable or the working directory.
    pub(crate) async fn command(
        &self,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        program: &str,
        args: &[String],
    ) -> io::Result<tokio::process::Command> {
        let mut held = self.holder.lock().await;
        let alive = held.as_mut().is_some_and(Holder::alive);
        if !alive {
            if held.is_some() {
                tracing::warn!(root = %self.host_root.display(), "the warm sandbox ended; starting another");
            }
            *held = None;
            *held = Some(self.start().await?);
        }
        let Some(holder) = held.as_ref() else {
            return Err(io::Error::other("the warm sandbox did not start"));
        };
        self.enter(holder, cwd, env, program, args)
    }

    /// Ends the sandbox (a later command starts another).
    pub(crate) async fn stop(&self) {
        if let Some(mut holder) = self.holder.lock().await.take() {
            holder.end();
            let _ = holder.launcher.wait().await;
        }
    }

    fn enter(
        &self,
        holder: &Holder,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        program: &str,
        args: &[String],
    ) -> io::Result<tokio::process::Command> {
        let mut command = tokio::process::Command::new(&self.nsenter);
        command.env_clear().current_dir("/");
        command.envs(sandbox_env(&self.config, env));
        let mut mappings = Vec::with_capacity(holder.namespaces.len() + 1);
        let mut fd = FIRST_FD;
        for (option, ns) in &holder.namespaces {
            command.arg(format!("{option}=/proc/self/fd/{fd}"));
            mappings.push(FdMapping {
                parent_fd: ns.try_clone()?,
                child_fd: fd,
            });
            fd += 1;
        }
        command.arg(format!("--root=/proc/self/fd/{fd}"));
        mappings.push(FdMapping {
            parent_fd: holder.root.try_clone()?,
            child_fd: fd,
        });
        let (uid, gid) = self.user;
        command
            .arg(format!("--setuid={uid}"))
            .arg(format!("--setgid={gid}"))
            .arg("--")
            .arg(&self.setpriv)
            .args(["--nnp", "--", "/bin/bash", "-c"])
            .arg(format!(
                "cd -- \"$1\" && shift || exit 126; {}",
                self.config.limits.shell_prelude(!env.is_empty())
            ))
            .arg(SHELL_NAME)
            .arg(cwd)
            .arg(program)
            .args(args);
        command
            .fd_mappings(mappings)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        Ok(command)
    }

    /// Starts a holder and opens its namespaces.
    async fn start(&self) -> io::Result<Holder> {
        let mut spawn = self.entry.spawn(
            &self.config,
            &self.host_root,
            Path::new(SANDBOX_ROOT),
            &BTreeMap::new(),
            HOLDER,
            &[],
        )?;
        spawn
            .options
            .extend_from_slice(format!("--info-fd\0{INFO_FD}\0").as_bytes());
        // The options go through a pipe written before the start: they
        // must fit its buffer.
        if spawn.options.len() > 60_000 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the sandbox's options are too long",
            ));
        }
        let (options_out, mut options_in) = io::pipe()?;
        options_in.write_all(&spawn.options)?;
        drop(options_in);
        let (info_out, info_in) = io::pipe()?;
        let mut command = tokio::process::Command::new(&spawn.program);
        command
            .env_clear()
            .args(&spawn.args)
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command
            .fd_mappings(vec![
                FdMapping {
                    parent_fd: options_out.into(),
                    child_fd: OPTIONS_FD,
                },
                FdMapping {
                    parent_fd: info_in.into(),
                    child_fd: INFO_FD,
                },
            ])
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let mut launcher = command.spawn()?;
        // This process's copies of the pipes' other ends go with it.
        drop(command);
        let stderr = launcher.stderr.take();
        let lifeline = launcher.stdin.take();
        let read = tokio::task::spawn_blocking(move || {
            let info = read_info(info_out)?;
            let holder = find_holder(info.child_pid)?;
            Ok::<_, io::Error>((info, holder))
        });
        let (info, pid) = match tokio::time::timeout(START_TIMEOUT, read).await {
            Ok(Ok(Ok(found))) => found,
            outcome => {
                let _ = launcher.start_kill();
                let _ = launcher.wait().await;
                let said = match stderr {
                    Some(mut err) => {
                        let mut text = String::new();
                        let _ = tokio::io::AsyncReadExt::read_to_string(&mut err, &mut text).await;
                        text
                    }
                    None => String::new(),
                };
                let why = match outcome {
                    Ok(Ok(Err(e))) => e.to_string(),
                    Ok(Err(e)) => e.to_string(),
                    Err(_) => "it did not report within 20 s".to_owned(),
                    Ok(Ok(Ok(_))) => String::new(),
                };
                return Err(io::Error::other(format!(
                    "the warm sandbox did not start: {why} {}",
                    said.trim()
                )));
            }
        };
        let opened = open_namespaces(pid, &info, self.config.network);
        match opened {
            Ok((namespaces, root)) => Ok(Holder {
                launcher,
                lifeline,
                namespaces,
                root,
                pid,
                pid_ns: info.pid,
            }),
            Err(e) => {
                let _ = launcher.start_kill();
                let _ = launcher.wait().await;
                Err(e)
            }
        }
    }
}

/// The variables of a command's launcher (and so of the limit-setting
/// shell): the sandbox's own, then the caller's under [`ENV_PREFIX`].
fn sandbox_env(config: &SandboxConfig, env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut vars = bwrap::base_env(config);
    for (k, v) in env {
        vars.insert(format!("{ENV_PREFIX}{k}"), v.clone());
    }
    vars
}

/// Reads bubblewrap's report from `pipe` until it is a whole JSON object.
fn read_info(mut pipe: io::PipeReader) -> io::Result<Info> {
    let mut text = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let n = pipe.read(&mut buf)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the sandbox ended before it started",
            ));
        }
        text.extend_from_slice(&buf[..n]);
        if let Ok(info) = serde_json::from_slice::<Info>(&text) {
            return Ok(info);
        }
        if text.len() > 64 * 1024 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the sandbox's report is not JSON",
            ));
        }
    }
}

/// The holder under the sandbox's init `init`: the end of its chain of
/// only children, once it runs [`HOLDER`] (the launcher shell execs it).
fn find_holder(init: u32) -> io::Result<u32> {
    let deadline = std::time::Instant::now() + START_TIMEOUT;
    let mut pid = init;
    loop {
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))?;
        match children.split_whitespace().next() {
            Some(child) => {
                pid = child
                    .parse()
                    .map_err(|_| io::Error::other("unreadable process list"))?;
            }
            None => {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))?;
                if comm.trim_end() == "cat" {
                    return Ok(pid);
                }
            }
        }
        if std::time::Instant::now() > deadline {
            return Err(io::Error::other("the holder did not start"));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

type Opened = (Vec<(&'static str, OwnedFd)>, OwnedFd);

/// Opens the namespaces and root of the holder `pid`, checked against the
/// namespace numbers bubblewrap reported (a process id alone could have
/// been reused).
fn open_namespaces(pid: u32, info: &Info, network: bool) -> io::Result<Opened> {
    let open = |name: &str| File::open(format!("/proc/{pid}/ns/{name}"));
    let mut namespaces = Vec::with_capacity(ALWAYS.len() + IF_OWN.len());
    for (option, name) in ALWAYS {
        let file = open(name)?;
        let expected = match name {
            "mnt" => Some(info.mnt),
            "pid" => Some(info.pid),
            _ => None,
        };
        if let Some(expected) = expected
            && file.metadata()?.ino() != expected
        {
            return Err(io::Error::other(
                "the warm sandbox's process was gone before it could be entered",
            ));
        }
        namespaces.push((option, OwnedFd::from(file)));
    }
    for (option, name) in IF_OWN {
        if name == "net" && network {
            continue;
        }
        let theirs = open(name)?;
        let ours = std::fs::metadata(format!("/proc/self/ns/{name}"))?;
        if theirs.metadata()?.ino() != ours.ino() {
            namespaces.push((option, OwnedFd::from(theirs)));
        }
    }
    let root = File::open(format!("/proc/{pid}/root"))?;
    Ok((namespaces, OwnedFd::from(root)))
}
