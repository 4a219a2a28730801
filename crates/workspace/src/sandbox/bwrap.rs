//! The `bwrap` command line of a sandboxed process, and the probe that
//! tells whether bubblewrap works on this machine.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, PoisonError};

use super::SandboxConfig;
use crate::error::{Error, Result};

/// Where the workspace directory appears inside the sandbox.
pub const SANDBOX_ROOT: &str = "/workspace";

/// The name `$0` of the limit-setting shell (shows in `ps`).
pub(crate) const SHELL_NAME: &str = "oxiscope-sandbox";

/// Host directories that are links on merged-`/usr` systems and real
/// directories elsewhere; either way they appear read-only.
const SYSTEM_DIRS: [&str; 5] = ["/bin", "/sbin", "/lib", "/lib32", "/lib64"];

/// The few `/etc` entries programs need (dynamic linker cache, Debian's
/// alternatives links, certificates, time zone); nothing naming users,
/// hosts or secrets.
pub(crate) const ETC_FILES: [&str; 7] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/localtime",
];

/// What a sandbox with network needs to resolve names.
pub(crate) const NET_FILES: [&str; 3] = ["/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"];

/// The search path inside.
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The descriptor the sandbox launcher reads its options from
/// (`bwrap --args 3`): they hold host paths and the caller's variables,
/// which stay off every command line a process could read.
pub(crate) const OPTIONS_FD: i32 = 3;

/// Where, in the root launcher's private mount namespace, the workspace
/// directory is mounted for the unprivileged sandbox to find it: a path
/// every user may pass through, whatever the modes above the data
/// directory (the sandbox's own `/dev` hides it inside).
const PORTAL: &str = "/dev/shm";

/// The prefix under which a caller's variables cross the limit-setting
/// shell: inert for it, they are restored under their own names only for
/// the program it starts.
pub(crate) const ENV_PREFIX: &str = "OXISCOPE_ENV_";

/// One sandboxed process, ready to start: the launcher program, its
/// command line, and the options it reads from [`OPTIONS_FD`].
#[derive(Debug, Clone)]
pub(crate) struct Spawn {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
    /// NUL-separated `bwrap` options.
    pub(crate) options: Vec<u8>,
}

impl Spawn {
    /// A command that starts the sandbox with an empty environment: the
    /// launcher (and the sandbox's init process, a fork of it that every
    /// sandboxed process can read) carries nothing of this process's.
    pub(crate) fn command(&self) -> std::io::Result<tokio::process::Command> {
        let mut command = tokio::process::Command::new(&self.program);
        command.env_clear().args(&self.args).current_dir("/");
        oxiscope_tool::pass_data_fd(&mut command, OPTIONS_FD, &self.options)?;
        Ok(command)
    }

    /// The same, as an MCP stdio server started (and restarted) so.
    pub(crate) fn mcp(self) -> oxiscope_mcp::McpConfig {
        oxiscope_mcp::McpConfig::stdio(
            self.program.to_string_lossy().into_owned(),
            self.args
                .into_iter()
                .map(|a| a.to_string_lossy().into_owned()),
        )
        .with_clean_env()
        .with_cwd("/")
        .with_data_fd(OPTIONS_FD, self.options)
    }
}

/// How the sandbox is entered: directly (`bwrap`), or, when this process
/// runs as root, through a root `bwrap` that only mounts the workspace at
/// [`PORTAL`] in a private mount namespace, then `setpriv` dropping to the
/// sandbox user, then the unprivileged `bwrap`.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) bwrap: PathBuf,
    /// `setpriv` and the user and group to drop to, when root.
    pub(crate) drop_to: Option<(PathBuf, u32, u32)>,
}

impl Entry {
    /// Runs `program args...` in `cwd` (inside, under [`SANDBOX_ROOT`]) in
    /// the sandbox of the workspace at `host_root`, with `env` added to
    /// the sandbox's own environment for `program` alone.
    ///
    /// # Errors
    /// `InvalidInput` when an option would hold a NUL byte (a variable's
    /// value, a working directory): options are NUL-separated, so one
    /// would smuggle in options of its own (a bind of the host's root).
    pub(crate) fn spawn(
        &self,
        config: &SandboxConfig,
        host_root: &Path,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        program: &str,
        program_args: &[String],
    ) -> std::io::Result<Spawn> {
        let source = if self.drop_to.is_some() {
            Path::new(PORTAL)
        } else {
            host_root
        };
        let options = options(config, source, cwd, env)?;
        let mut args: Vec<OsString> = Vec::with_capacity(24 + program_args.len());
        let program_path = match &self.drop_to {
            Some((setpriv, uid, gid)) => {
                args.extend(
                    ["--dev-bind", "/", "/", "--bind"]
                        .into_iter()
                        .map(OsString::from),
                );
                args.push(host_root.as_os_str().to_owned());
                args.push(PORTAL.into());
                args.push("--die-with-parent".into());
                args.push("--".into());
                args.push(setpriv.as_os_str().to_owned());
                args.push(format!("--reuid={uid}").into());
                args.push(format!("--regid={gid}").into());
                args.push("--clear-groups".into());
                args.push("--".into());
                args.push(self.bwrap.as_os_str().to_owned());
                self.bwrap.clone()
            }
            None => self.bwrap.clone(),
        };
        args.push("--args".into());
        args.push(OPTIONS_FD.to_string().into());
        args.push("--".into());
        args.push("/bin/bash".into());
        args.push("-c".into());
        args.push(config.limits.shell_prelude(!env.is_empty()).into());
        args.push(SHELL_NAME.into());
        args.push(program.into());
        args.extend(program_args.iter().map(OsString::from));
        Ok(Spawn {
            program: program_path,
            args,
            options,
        })
    }
}

/// The `bwrap` options (NUL-separated) of a sandbox over `source`
/// (mounted at [`SANDBOX_ROOT`]), started in `cwd`, whose program gets
/// `env` besides the sandbox's own variables.
fn options(
    config: &SandboxConfig,
    source: &Path,
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> std::io::Result<Vec<u8>> {
    let mut o = Options {
        bytes: Vec::with_capacity(2048),
        nul: false,
    };
    o.all(&[
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        // No namespaces inside: nothing to hoard, no nested root.
        "--disable-userns",
        "--assert-userns-disabled",
        "--hostname",
        "sandbox",
    ]);
    if !config.network {
        o.all(&["--unshare-net"]);
    }
    o.all(&["--ro-bind", "/usr", "/usr"]);
    for dir in SYSTEM_DIRS {
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.is_symlink() => {
                if let Ok(target) = std::fs::read_link(dir) {
                    o.all(&["--symlink"]);
                    o.put(target.as_os_str());
                    o.all(&[dir]);
                }
            }
            Ok(meta) if meta.is_dir() => o.all(&["--ro-bind", dir, dir]),
            _ => {}
        }
    }
    let etc = ETC_FILES
        .iter()
        .chain(if config.network { &NET_FILES[..] } else { &[] });
    for file in etc {
        o.all(&["--ro-bind-try", file, file]);
    }
    // Memory-backed directories are sized: a tenant cannot fill the
    // host's memory through them.
    let tmp = config.limits.tmpfs_size.to_string();
    o.all(&[
        "--proc", "/proc", "--dev", "/dev", "--size", &tmp, "--tmpfs", "/tmp", "--size", &tmp,
        "--tmpfs", "/dev/shm",
    ]);
    // After the tmpfs mounts, so a path under /tmp stays visible.
    for extra in &config.ro_binds {
        o.all(&["--ro-bind-try"]);
        o.put(extra.as_os_str());
        o.put(extra.as_os_str());
    }
    o.all(&["--bind"]);
    o.put(source.as_os_str());
    o.all(&[SANDBOX_ROOT, "--chdir"]);
    o.put(cwd.as_os_str());
    o.all(&["--clearenv"]);
    for (k, v) in &base_env(config) {
        o.all(&["--setenv", k.as_str(), v.as_str()]);
    }
    // What the caller adds (an MCP declaration's `env`, which a tenant
    // writes) crosses the limit-setting shell under a prefix, so it
    // cannot reach the shell (`BASH_ENV`, `LD_PRELOAD`...); the shell
    // hands it to the program under its own name.
    for (k, v) in env {
        o.all(&["--setenv", &format!("{ENV_PREFIX}{k}"), v]);
    }
    if o.nul {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a sandbox option (a variable's value or a directory) holds a NUL byte",
        ));
    }
    Ok(o.bytes)
}

/// The variables every sandboxed process gets: `PATH`, `HOME`, `LANG`,
/// `TMPDIR` and the configuration's own.
pub(crate) fn base_env(config: &SandboxConfig) -> BTreeMap<String, String> {
    let mut vars: BTreeMap<String, String> = [
        ("PATH", PATH),
        ("HOME", SANDBOX_ROOT),
        ("LANG", "C.UTF-8"),
        ("TMPDIR", "/tmp"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    for (k, v) in &config.env {
        vars.insert(k.clone(), v.clone());
    }
    vars
}

/// NUL-separated options; `nul` is set when an item held a NUL byte of
/// its own.
struct Options {
    bytes: Vec<u8>,
    nul: bool,
}

impl Options {
    fn put(&mut self, item: &std::ffi::OsStr) {
        let item = item.as_encoded_bytes();
        self.nul |= item.contains(&0);
        self.bytes.extend_from_slice(item);
        self.bytes.push(0);
    }

    fn all(&mut self, items: &[&str]) {
        for item in items {
            self.put(item.as_ref());
        }
    }
}

/// How sandboxes made with `config` are entered by this process, with
/// `bwrap` at `program`.
///
/// # Errors
/// [`Error::SandboxUnavailable`] when this process runs as root and
/// `setpriv` is missing.
pub(crate) fn entry(config: &SandboxConfig, program: PathBuf) -> Result<Entry> {
    let drop_to = match super::sandbox_user(config) {
        Some((uid, gid)) => {
            let setpriv =
                locate(Path::new("setpriv")).ok_or_else(|| Error::SandboxUnavailable {
                    reason:
                        "`setpriv` (util-linux), which drops root before the sandbox starts, was \
                         not found"
                            .to_owned(),
                    hint: "Install util-linux, or run the service as an unprivileged user."
                        .to_owned(),
                })?;
            Some((setpriv, uid, gid))
        }
        None => None,
    };
    Ok(Entry {
        bwrap: program,
        drop_to,
    })
}

/// A program: `name` itself when it is a path, else found on `PATH`.
pub(crate) fn locate(name: &Path) -> Option<PathBuf> {
    if name.components().count() > 1 {
        return name.is_file().then(|| name.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Whether `key` may name a variable a caller adds: a plain shell name.
pub(crate) fn valid_env_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Programs already probed successfully (the probe costs a sandbox start).
static PROBED: Mutex<Vec<(PathBuf, bool)>> = Mutex::new(Vec::new());

/// Runs `true` in a sandbox like the real ones (network off) to learn
/// whether bubblewrap works here; remembers a success per program.
///
/// # Errors
/// [`Error::SandboxUnavailable`], saying what failed and what to do.
pub(crate) async fn probe(config: &SandboxConfig) -> Result<PathBuf> {
    let unavailable = |reason: String, hint: &str| Error::SandboxUnavailable {
        reason,
        hint: hint.to_owned(),
    };
    let Some(program) = locate(&config.bwrap) else {
        return Err(unavailable(
            format!("`{}` was not found", config.bwrap.display()),
            "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf \
             install bubblewrap), or run the service with `--workspace local` to run tools \
             unconfined.",
        ));
    };
    let network = config.network;
    if PROBED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .any(|(p, net)| *p == program && *net == network)
    {
        return Ok(program);
    }
    let scratch = std::env::temp_dir();
    let entry = entry(config, program.clone())?;
    let output = entry
        .spawn(
            config,
            &scratch,
            Path::new(SANDBOX_ROOT),
            &BTreeMap::new(),
            "true",
            &[],
        )
        .and_then(|spawn| spawn.command())
        .map_err(|e| unavailable(format!("cannot prepare a sandbox: {e}"), "Check /proc."))?
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| {
            unavailable(
                format!("cannot run {}: {e}", program.display()),
                "Check that the bwrap binary is executable.",
            )
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        return Err(unavailable(
            format!("a test sandbox failed ({}): {stderr}", output.status),
            "User namespaces must be enabled for bubblewrap: check `sysctl \
             user.max_user_namespaces` (> 0) and `kernel.unprivileged_userns_clone` (1) where \
             it exists, and on Ubuntu 24.04+ the AppArmor restriction \
             (`kernel.apparmor_restrict_unprivileged_userns`); inside a container, run it \
             with user namespaces allowed. Or run the service with `--workspace local`.",
        ));
    }
    PROBED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push((program.clone(), network));
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: impl IntoIterator<Item = OsString>) -> Vec<String> {
        items
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    fn options_of(spawn: &Spawn) -> Vec<String> {
        let text = String::from_utf8(spawn.options.clone()).unwrap();
        let mut items: Vec<String> = text.split('\0').map(str::to_owned).collect();
        assert_eq!(items.pop().as_deref(), Some(""), "NUL-terminated");
        items
    }

    fn sample(entry: &Entry) -> Spawn {
        let env: BTreeMap<String, String> = [
            ("BASH_ENV".to_owned(), "/workspace/pre.sh".to_owned()),
            ("MARKER".to_owned(), "tenant-secret".to_owned()),
        ]
        .into();
        entry
            .spawn(
                &SandboxConfig::default(),
                Path::new("/host/data/ws"),
                Path::new("/workspace"),
                &env,
                "node",
                &["server.js".to_owned()],
            )
            .unwrap()
    }

    #[test]
    fn a_callers_environment_crosses_the_limit_shell_under_a_prefix() {
        let entry = Entry {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            drop_to: None,
        };
        let spawn = sample(&entry);
        let options = options_of(&spawn);
        let setenv: Vec<&str> = options
            .windows(2)
            .filter(|w| w[0] == "--setenv")
            .map(|w| w[1].as_str())
            .collect();
        assert_eq!(
            setenv,
            [
                "HOME",
                "LANG",
                "PATH",
                "TMPDIR",
                "OXISCOPE_ENV_BASH_ENV",
                "OXISCOPE_ENV_MARKER"
            ]
        );
        assert!(options.iter().any(|a| a == "--disable-userns"));
        assert!(options.iter().any(|a| a == "--unshare-net"));
        let bind = options.iter().position(|a| a == "--bind").unwrap();
        assert_eq!(options[bind + 1..bind + 3], ["/host/data/ws", "/workspace"]);

        let args = strings(spawn.args);
        assert_eq!(args[..4], ["--args", "3", "--", "/bin/bash"]);
        assert!(args[5].starts_with("ulimit "), "{}", args[5]);
        assert!(args[5].contains("${!OXISCOPE_ENV_@}"), "{}", args[5]);
        assert_eq!(args[6..], ["oxiscope-sandbox", "node", "server.js"]);
        // Neither the host path nor the caller's values are on the
        // command line.
        let line = args.join(" ");
        assert!(!line.contains("/host/data"), "{line}");
        assert!(!line.contains("tenant-secret"), "{line}");
    }

    #[test]
    fn root_enters_through_a_portal_and_drops_to_the_sandbox_user() {
        let entry = Entry {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            drop_to: Some((PathBuf::from("/usr/bin/setpriv"), 65_534, 65_534)),
        };
        let spawn = sample(&entry);
        let args = strings(spawn.args.clone());
        assert_eq!(
            args[..16],
            [
                "--dev-bind",
                "/",
                "/",
                "--bind",
                "/host/data/ws",
                PORTAL,
                "--die-with-parent",
                "--",
                "/usr/bin/setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--",
                "/usr/bin/bwrap",
                "--args",
                "3",
            ]
        );
        let options = options_of(&spawn);
        let bind = options.iter().position(|a| a == "--bind").unwrap();
        assert_eq!(options[bind + 1..bind + 3], [PORTAL, "/workspace"]);
        assert!(!options.iter().any(|a| a.contains("/host/data")));
    }

    #[test]
    fn without_a_callers_environment_the_shell_runs_the_program_directly() {
        let entry = Entry {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            drop_to: None,
        };
        let spawn = entry
            .spawn(
                &SandboxConfig::default(),
                Path::new("/h"),
                Path::new("/workspace"),
                &BTreeMap::new(),
                "true",
                &[],
            )
            .unwrap();
        let args = strings(spawn.args);
        assert!(args[5].ends_with("exec \"$@\""), "{}", args[5]);
        assert!(!args[5].contains("OXISCOPE_ENV"), "{}", args[5]);
    }

    #[test]
    fn a_nul_byte_cannot_smuggle_options_in() {
        let entry = Entry {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            drop_to: None,
        };
        let smuggled = "x\0--bind\0/\0/host";
        let env: BTreeMap<String, String> = [("K".to_owned(), smuggled.to_owned())].into();
        let config = SandboxConfig::default();
        let err = entry
            .spawn(
                &config,
                Path::new("/h"),
                Path::new("/workspace"),
                &env,
                "true",
                &[],
            )
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
        let cwd = format!("/workspace/{smuggled}");
        let err = entry
            .spawn(
                &config,
                Path::new("/h"),
                Path::new(&cwd),
                &BTreeMap::new(),
                "true",
                &[],
            )
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
    }

    #[test]
    fn only_plain_names_may_be_added_to_the_environment() {
        for bad in ["", "BASH_FUNC_ulimit%%", "A=B", "1A", "A B", "-x"] {
            assert!(!valid_env_key(bad), "{bad:?}");
        }
        for good in ["A", "_x", "PATH2", "LD_PRELOAD"] {
            assert!(valid_env_key(good), "{good:?}");
        }
    }
}
