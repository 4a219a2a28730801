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
const SHELL_NAME: &str = "oxiscope-sandbox";

/// Host directories that are links on merged-`/usr` systems and real
/// directories elsewhere; either way they appear read-only.
const SYSTEM_DIRS: [&str; 5] = ["/bin", "/sbin", "/lib", "/lib32", "/lib64"];

/// The few `/etc` entries programs need (dynamic linker cache, Debian's
/// alternatives links, certificates, time zone); nothing naming users,
/// hosts or secrets.
const ETC_FILES: [&str; 7] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/localtime",
];

/// What a sandbox with network needs to resolve names.
const NET_FILES: [&str; 3] = ["/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"];

/// The search path inside.
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

fn push(args: &mut Vec<OsString>, items: &[&str]) {
    args.extend(items.iter().map(OsString::from));
}

/// The arguments of `bwrap` that run `program args...` in the sandbox of
/// the workspace at `host_root`, in `cwd` (a path inside, under
/// [`SANDBOX_ROOT`]), with `env` added to the sandbox's own environment.
pub(crate) fn command_args(
    config: &SandboxConfig,
    host_root: &Path,
    cwd: &Path,
    env: &BTreeMap<String, String>,
    program: &str,
    program_args: &[String],
) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::with_capacity(64);
    push(
        &mut args,
        &[
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
        ],
    );
    if !config.network {
        args.push("--unshare-net".into());
    }
    push(&mut args, &["--ro-bind", "/usr", "/usr"]);
    for dir in SYSTEM_DIRS {
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.is_symlink() => {
                if let Ok(target) = std::fs::read_link(dir) {
                    args.extend(["--symlink".into(), target.into_os_string(), dir.into()]);
                }
            }
            Ok(meta) if meta.is_dir() => push(&mut args, &["--ro-bind", dir, dir]),
            _ => {}
        }
    }
    let etc = ETC_FILES
        .iter()
        .chain(if config.network { &NET_FILES[..] } else { &[] });
    for file in etc {
        push(&mut args, &["--ro-bind-try", file, file]);
    }
    // Memory-backed directories are sized: a tenant cannot fill the
    // host's memory through them.
    let tmp = config.limits.tmpfs_size.to_string();
    push(
        &mut args,
        &[
            "--proc", "/proc", "--dev", "/dev", "--size", &tmp, "--tmpfs", "/tmp", "--size", &tmp,
            "--tmpfs", "/dev/shm",
        ],
    );
    // After the tmpfs mounts, so a path under /tmp stays visible.
    for extra in &config.ro_binds {
        args.extend([
            "--ro-bind-try".into(),
            extra.clone().into_os_string(),
            extra.clone().into_os_string(),
        ]);
    }
    args.extend([
        "--bind".into(),
        host_root.as_os_str().to_owned(),
        SANDBOX_ROOT.into(),
        "--chdir".into(),
        cwd.as_os_str().to_owned(),
        "--clearenv".into(),
    ]);
    let mut vars: BTreeMap<&str, &str> = BTreeMap::new();
    vars.insert("PATH", PATH);
    vars.insert("HOME", SANDBOX_ROOT);
    vars.insert("LANG", "C.UTF-8");
    vars.insert("TMPDIR", "/tmp");
    for (k, v) in &config.env {
        vars.insert(k, v);
    }
    for (k, v) in vars {
        push(&mut args, &["--setenv", k, v]);
    }
    // The limits are set first, by a shell that sees only the variables
    // above; what the caller adds (an MCP declaration's `env`, which a
    // tenant writes) is applied after them by `env`, so it cannot reach
    // the shell (`BASH_ENV`, `BASH_FUNC_*`, `LD_PRELOAD`...).
    args.push("--".into());
    args.push("/bin/bash".into());
    args.push("-c".into());
    args.push(config.limits.shell_prelude().into());
    args.push(SHELL_NAME.into());
    if !env.is_empty() {
        args.push("/usr/bin/env".into());
        args.push("--".into());
        args.extend(env.iter().map(|(k, v)| OsString::from(format!("{k}={v}"))));
    }
    args.push(program.into());
    args.extend(program_args.iter().map(OsString::from));
    args
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
    let args = command_args(
        config,
        &scratch,
        Path::new(SANDBOX_ROOT),
        &BTreeMap::new(),
        "true",
        &[],
    );
    let output = tokio::process::Command::new(&program)
        .args(&args)
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

    #[test]
    fn a_callers_environment_is_applied_after_the_limits_never_to_the_shell() {
        let config = SandboxConfig::default();
        let env: BTreeMap<String, String> = [
            ("BASH_ENV".to_owned(), "/workspace/pre.sh".to_owned()),
            ("MARKER".to_owned(), "x".to_owned()),
        ]
        .into();
        let args: Vec<String> = command_args(
            &config,
            Path::new("/host/ws"),
            Path::new("/workspace"),
            &env,
            "node",
            &["server.js".to_owned()],
        )
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
        let setenv: Vec<&str> = args
            .windows(2)
            .filter(|w| w[0] == "--setenv")
            .map(|w| w[1].as_str())
            .collect();
        assert_eq!(setenv, ["HOME", "LANG", "PATH", "TMPDIR"]);
        let end = args.iter().position(|a| a == "--").unwrap();
        let tail = &args[end + 1..];
        assert_eq!(tail[0], "/bin/bash");
        assert!(tail[2].starts_with("ulimit "), "{}", tail[2]);
        assert_eq!(
            &tail[4..],
            [
                "/usr/bin/env",
                "--",
                "BASH_ENV=/workspace/pre.sh",
                "MARKER=x",
                "node",
                "server.js"
            ]
        );
        assert!(args.iter().any(|a| a == "--disable-userns"));
        assert!(args.iter().any(|a| a == "--unshare-net"));
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
