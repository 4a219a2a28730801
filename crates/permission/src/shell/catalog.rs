//! The catalogue of read-only commands and subcommands.
//!
//! A command is read-only when running it cannot change files, processes,
//! the network or configuration. The catalogue errs on the side of "no":
//! a subcommand or option that is not known to be harmless makes the
//! command not read-only.

/// Commands that only read, whatever their arguments (options that write
/// or run other programs are checked in [`writes_or_runs`]).
const PLAIN: &[&str] = &[
    "ls",
    "pwd",
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "file",
    "stat",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "find",
    "tree",
    "which",
    "whereis",
    "type",
    "echo",
    "printf",
    "true",
    "false",
    "cd",
    "du",
    "df",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "whoami",
    "id",
    "hostname",
    "uname",
    "date",
    "cut",
    "diff",
    "cmp",
    "comm",
    "nl",
    "od",
    "hexdump",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "cksum",
    "b2sum",
    "base64",
    "seq",
    "jq",
    "column",
    "tac",
    "rev",
    "fold",
    "expand",
    "unexpand",
    "strings",
    "uptime",
    "groups",
    "nproc",
    "arch",
];

/// Programs whose `--version` (and the listed short spelling) is a harmless probe.
const VERSION_PROBES: &[(&str, &[&str])] = &[
    ("python", &["--version", "-V"]),
    ("python3", &["--version", "-V"]),
    ("pip", &["--version", "-V"]),
    ("pip3", &["--version", "-V"]),
    ("node", &["--version", "-v"]),
    ("npm", &["--version", "-v"]),
    ("yarn", &["--version", "-v"]),
    ("pnpm", &["--version", "-v"]),
    ("deno", &["--version", "-V"]),
    ("bun", &["--version", "-v"]),
    ("cargo", &["--version", "-V"]),
    ("rustc", &["--version", "-V"]),
    ("rustup", &["--version", "-V"]),
    ("go", &["version"]),
    ("java", &["--version", "-version"]),
    ("ruby", &["--version", "-v"]),
    ("perl", &["--version", "-v"]),
    ("gcc", &["--version"]),
    ("clang", &["--version"]),
    ("make", &["--version"]),
    ("cmake", &["--version"]),
    ("git", &["--version"]),
    ("docker", &["--version"]),
    ("gh", &["--version"]),
    ("kubectl", &["version"]),
    ("uv", &["--version", "-V"]),
    ("tsc", &["--version", "-v"]),
];

fn flags_and_positionals<'a>(args: &'a [&'a str]) -> (Vec<&'a str>, Vec<&'a str>) {
    let mut flags = Vec::new();
    let mut positionals = Vec::new();
    let mut after_dashes = false;
    for arg in args {
        if after_dashes {
            positionals.push(*arg);
        } else if *arg == "--" {
            after_dashes = true;
        } else if arg.starts_with('-') && arg.len() > 1 {
            flags.push(*arg);
        } else {
            positionals.push(*arg);
        }
    }
    (flags, positionals)
}

/// Options of otherwise read-only programs that write files or run programs.
fn writes_or_runs(name: &str, args: &[&str]) -> bool {
    let has = |opts: &[&str]| {
        args.iter().any(|a| {
            opts.iter()
                .any(|o| *a == *o || a.starts_with(&format!("{o}=")))
        })
    };
    match name {
        "find" => args.iter().any(|a| {
            matches!(
                *a,
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-fls"
            )
        }),
        "rg" => has(&["--pre", "--pre-glob"]),
        "ag" | "ack" => has(&["--pager"]),
        "tree" => args.iter().any(|a| *a == "-o" || a.starts_with("-o")),
        "file" => has(&["-C", "--compile"]),
        "date" => args.iter().any(|a| *a == "-s" || a.starts_with("--set")),
        "hostname" => args.iter().any(|a| !a.starts_with('-')),
        "less" | "more" => has(&["--lesskey-file", "-k"]),
        "diff" | "cmp" => false,
        _ => false,
    }
}

fn git_read_only(args: &[&str]) -> bool {
    // Global options before the subcommand.
    let mut rest = args;
    loop {
        match rest.first() {
            Some(&("--no-pager" | "--no-optional-locks" | "-P")) => rest = &rest[1..],
            Some(&"-C") if rest.len() >= 2 => rest = &rest[2..],
            _ => break,
        }
    }
    let Some((sub, sub_args)) = rest.split_first() else {
        return false;
    };
    if sub_args
        .iter()
        .any(|a| a.starts_with("--output") || a.starts_with("--ext-diff"))
    {
        return false;
    }
    let (flags, positionals) = flags_and_positionals(sub_args);
    match *sub {
        "status" | "log" | "diff" | "show" | "blame" | "ls-files" | "ls-tree" | "cat-file"
        | "rev-parse" | "rev-list" | "describe" | "shortlog" | "whatchanged" | "annotate"
        | "count-objects" | "merge-base" | "name-rev" | "show-ref" | "for-each-ref" | "help"
        | "version" | "check-ignore" | "grep" => {
            !(*sub == "grep"
                && sub_args.iter().any(|a| {
                    a.starts_with("--open-files-in-pager")
                        || (a.starts_with("-O")
                            || (a.starts_with('-') && !a.starts_with("--") && a.contains('O')))
                }))
        }
        "reflog" => positionals.first().is_none_or(|p| *p == "show"),
        "branch" => {
            let mutating = [
                "-d",
                "-D",
                "--delete",
                "-m",
                "-M",
                "--move",
                "-c",
                "-C",
                "--copy",
                "-u",
                "--set-upstream-to",
                "--unset-upstream",
                "--edit-description",
                "-f",
                "--force",
                "--track",
                "--no-track",
            ];
            let listing = flags.iter().any(|f| matches!(*f, "--list" | "-l"));
            !flags.iter().any(|f| {
                mutating
                    .iter()
                    .any(|m| f == m || f.starts_with(&format!("{m}=")))
            }) && (positionals.is_empty() || listing)
        }
        "tag" => flags.iter().any(|f| matches!(*f, "-l" | "--list")) || sub_args.is_empty(),
        "remote" => positionals.is_empty() || positionals.first() == Some(&"show"),
        "stash" | "worktree" => positionals.first() == Some(&"list"),
        "config" => {
            flags.iter().any(|f| {
                matches!(
                    *f,
                    "--get" | "--get-all" | "--get-regexp" | "--list" | "-l" | "--get-urlmatch"
                )
            }) && !flags.iter().any(|f| {
                matches!(
                    *f,
                    "--unset"
                        | "--unset-all"
                        | "--add"
                        | "--replace-all"
                        | "--edit"
                        | "-e"
                        | "--rename-section"
                        | "--remove-section"
                )
            })
        }
        _ => false,
    }
}

fn docker_read_only(args: &[&str]) -> bool {
    match args {
        [] => false,
        [
            "ps" | "images" | "logs" | "inspect" | "info" | "version",
            ..,
        ] => !args.iter().any(|a| a.starts_with("--output") || *a == "-o"),
        [
            "container" | "image" | "volume" | "network",
            "ls" | "list" | "inspect",
            ..,
        ] => true,
        _ => false,
    }
}

fn gh_read_only(args: &[&str]) -> bool {
    if args.iter().any(|a| matches!(*a, "--web" | "-w")) {
        return false;
    }
    matches!(
        args,
        ["status", ..]
            | ["repo", "view" | "list", ..]
            | ["issue", "list" | "view" | "status", ..]
            | ["pr", "list" | "view" | "status" | "diff" | "checks", ..]
            | ["run", "list" | "view", ..]
            | ["release", "list" | "view", ..]
            | ["auth", "status", ..]
    )
}

fn package_manager_read_only(name: &str, args: &[&str]) -> bool {
    match name {
        "npm" | "pnpm" | "yarn" => matches!(args, ["list" | "ls" | "view" | "outdated", ..]),
        "pip" | "pip3" => matches!(args, ["list" | "show" | "freeze", ..]),
        "cargo" => matches!(args, ["tree" | "metadata", ..]) && !args.contains(&"--manifest-path"),
        _ => false,
    }
}

/// Whether a command (`name` has no `/`, `args` are static values) is read-only.
#[must_use]
pub(crate) fn is_read_only(name: &str, args: &[&str]) -> bool {
    if let Some((_, probes)) = VERSION_PROBES.iter().find(|(n, _)| *n == name)
        && let [single] = args
        && probes.contains(single)
    {
        return true;
    }
    match name {
        "git" => git_read_only(args),
        "docker" => docker_read_only(args),
        "gh" => gh_read_only(args),
        "npm" | "pnpm" | "yarn" | "pip" | "pip3" | "cargo" => package_manager_read_only(name, args),
        _ => PLAIN.contains(&name) && !writes_or_runs(name, args),
    }
}

#[cfg(test)]
mod tests {
    use super::is_read_only;

    #[test]
    fn read_only_commands_and_subcommands() {
        for (name, args) in [
            ("ls", &["-la"][..]),
            ("git", &["status", "--short"]),
            ("git", &["-C", "sub", "log", "-5"]),
            ("git", &["branch", "-a"]),
            ("git", &["branch", "--list", "feat*"]),
            ("git", &["config", "--list"]),
            ("git", &["reflog"]),
            ("find", &[".", "-name", "*.rs"]),
            ("docker", &["ps", "-a"]),
            ("gh", &["pr", "list"]),
            ("pip", &["show", "x"]),
            ("python3", &["--version"]),
            ("node", &["-v"]),
        ] {
            assert!(is_read_only(name, args), "{name} {args:?}");
        }
    }

    #[test]
    fn writing_or_executing_variants_are_not() {
        for (name, args) in [
            ("git", &["push"][..]),
            ("git", &["branch", "new"]),
            ("git", &["branch", "-D", "old"]),
            ("git", &["-c", "core.pager=sh", "log"]),
            ("git", &["log", "--output=x"]),
            ("git", &["config", "user.name", "x"]),
            ("git", &["reflog", "expire"]),
            ("git", &["grep", "-Ovim", "x"]),
            ("find", &[".", "-delete"]),
            ("find", &[".", "-exec", "rm", "{}", ";"]),
            ("rg", &["--pre", "sh", "x"]),
            ("tree", &["-o", "out"]),
            ("docker", &["run", "x"]),
            ("gh", &["pr", "view", "--web"]),
            ("npm", &["install"]),
            ("python3", &["x.py"]),
            ("sort", &["-o", "f", "f"]),
            ("env", &[]),
        ] {
            assert!(!is_read_only(name, args), "{name} {args:?}");
        }
    }
}
