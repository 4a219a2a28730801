//! Dangerous command patterns, removal targets and write targets.

use std::path::{Path, PathBuf};

use super::wrappers::base_name;
use crate::paths::{PathEnv, is_system_path};

const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ash",
];
const INTERPRETERS: &[&str] = &["python", "python3", "perl", "ruby", "node", "php"];

fn short_flags(args: &[&str]) -> String {
    args.iter()
        .take_while(|a| **a != "--")
        .filter(|a| a.starts_with('-') && !a.starts_with("--"))
        .flat_map(|a| a[1..].chars())
        .collect()
}

fn has_long(args: &[&str], name: &str) -> bool {
    args.iter().take_while(|a| **a != "--").any(|a| *a == name)
}

/// Positional arguments (options and `--` removed; option values of the
/// listed options skipped).
pub(crate) fn positionals<'a>(args: &[&'a str], valued: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut only = false;
    while i < args.len() {
        let arg = args[i];
        i += 1;
        if only || !arg.starts_with('-') || arg == "-" {
            out.push(arg);
        } else if arg == "--" {
            only = true;
        } else if valued.contains(&arg) {
            i += 1;
        }
    }
    out
}

/// The dangerous pattern in one command (`words[0]` is the name), if any.
#[must_use]
pub(crate) fn dangerous_pattern(words: &[&str], piped_input: bool) -> Option<String> {
    let (name, args) = words.split_first()?;
    let name = base_name(name);
    let flags = short_flags(args);
    match name {
        "rm" => {
            let recursive = flags.contains(['r', 'R']) || has_long(args, "--recursive");
            let force = flags.contains('f') || has_long(args, "--force");
            (recursive && force).then(|| "rm -rf".to_owned())
        }
        "chmod" => {
            let wide = args.iter().any(|a| {
                matches!(
                    *a,
                    "777" | "0777" | "a+rwx" | "ugo+rwx" | "a=rwx" | "o+w" | "a+w" | "+w"
                ) || a.ends_with("o+w")
            });
            if wide {
                Some(
                    if flags.contains('R') {
                        "chmod -R 777"
                    } else {
                        "chmod 777"
                    }
                    .to_owned(),
                )
            } else if flags.contains('R') || has_long(args, "--recursive") {
                Some("chmod -R".to_owned())
            } else {
                None
            }
        }
        "chown" | "chgrp" => {
            (flags.contains('R') || has_long(args, "--recursive")).then(|| format!("{name} -R"))
        }
        "dd" | "shred" | "wipefs" | "fdisk" | "sfdisk" | "cfdisk" | "parted" | "mkswap"
        | "format" | "diskutil" => Some(name.to_owned()),
        n if n.starts_with("mkfs") => Some("mkfs".to_owned()),
        "kill" | "pkill" | "killall" => args
            .iter()
            .any(|a| matches!(*a, "-9" | "-KILL" | "-SIGKILL" | "KILL" | "SIGKILL"))
            .then(|| format!("{name} -9")),
        "sudo" | "doas" | "su" | "pkexec" => Some(format!("{name} (privilege escalation)")),
        "shutdown" | "reboot" | "halt" | "poweroff" => Some(name.to_owned()),
        "systemctl" => args
            .iter()
            .any(|a| matches!(*a, "poweroff" | "reboot" | "halt" | "kexec"))
            .then(|| "systemctl power action".to_owned()),
        n if piped_input && SHELLS.contains(&n) => Some(format!("piping into {n}")),
        n if piped_input
            && INTERPRETERS.contains(&n)
            && positionals(args, &[]).iter().all(|p| *p == "-") =>
        {
            Some(format!("piping into {n}"))
        }
        _ => None,
    }
}

/// Whether a command runs a string as shell code (`eval`, `source`,
/// `bash -c`), which defeats analysis.
#[must_use]
pub(crate) fn runs_shell_code(words: &[&str]) -> bool {
    let Some((name, args)) = words.split_first() else {
        return false;
    };
    let name = base_name(name);
    matches!(name, "eval" | "source" | ".")
        || (SHELLS.contains(&name)
            && args
                .iter()
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c')))
}

/// The paths a command writes (as written), for the system-directory check.
#[must_use]
pub(crate) fn write_targets<'a>(words: &[&'a str]) -> Vec<&'a str> {
    let Some((name, args)) = words.split_first() else {
        return Vec::new();
    };
    let name = base_name(name);
    match name {
        "mkdir" | "touch" | "rm" | "rmdir" | "mv" | "tee" | "truncate" | "unlink" => positionals(
            args,
            &["-m", "-d", "-t", "-r", "-s", "-S", "--mode", "--size"],
        ),
        "chmod" | "chown" | "chgrp" => positionals(args, &["--reference"])
            .into_iter()
            .skip(1)
            .collect(),
        "cp" | "install" | "ln" => {
            let mut out: Vec<&str> = positionals(
                args,
                &[
                    "-t",
                    "-S",
                    "-m",
                    "-o",
                    "-g",
                    "--target-directory",
                    "--suffix",
                ],
            )
            .last()
            .copied()
            .into_iter()
            .collect();
            if let Some(pos) = args.iter().position(|a| *a == "-t") {
                out.extend(args.get(pos + 1).copied());
            }
            out
        }
        "sed" => {
            let call = super::sed::check_sed(args).ok();
            call.filter(|c| c.in_place)
                .map(|c| c.files)
                .unwrap_or_default()
        }
        "dd" => args.iter().filter_map(|a| a.strip_prefix("of=")).collect(),
        _ => Vec::new(),
    }
}

/// Whether removing `raw` (resolved against `env`) could destroy more than
/// a project file: `/`, top-level directories, the home directory or an
/// ancestor of it, a working directory or an ancestor of one, a system
/// directory, a bare `*`, or a path only known at run time.
#[must_use]
pub(crate) fn is_dangerous_removal(
    raw: &str,
    is_static: bool,
    env: &PathEnv,
    roots: &[PathBuf],
) -> bool {
    if !is_static || raw == "*" || raw.ends_with("/*") || raw == ".*" {
        return true;
    }
    let Some(resolved) = env.resolve(raw) else {
        return true;
    };
    if resolved.components().count() <= 2 || is_system_path(&resolved) {
        return true;
    }
    if env.home().is_some_and(|home| home.starts_with(&resolved)) {
        return true;
    }
    roots.iter().any(|root| root.starts_with(&resolved))
}

/// Whether a resolved write target is a device or a system location.
#[must_use]
pub(crate) fn system_write(path: &Path) -> Option<String> {
    if path.starts_with("/dev") {
        Some("> /dev/".to_owned())
    } else if is_system_path(path) || path == Path::new("/") {
        Some(format!("write into system directory {}", path.display()))
    } else {
        None
    }
}
