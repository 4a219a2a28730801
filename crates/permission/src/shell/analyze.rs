//! From a parsed command line to the facts the Bash policy decides on.

use std::path::{Path, PathBuf};

use super::ast::{RedirectOp, Script, SimpleCommand, Word};
use super::catalog;
use super::danger::{
    dangerous_pattern, is_dangerous_removal, positionals, runs_shell_code, system_write,
    write_targets,
};
use super::parse::parse;
use super::sed::check_sed;
use super::wrappers::{base_name, unwrap_all};
use crate::paths::{DangerousPaths, PathEnv, is_within};

/// Why a command needs the user's explicit consent whatever the rules say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Concern {
    /// The command cannot be parsed.
    Unparseable(String),
    /// It contains something only known when it runs (substitution, ...).
    Dynamic(String),
    /// A destructive pattern (`rm -rf`, `mkfs`, `curl | sh`, ...).
    DangerousPattern(String),
    /// It reads or writes a sensitive file (`.env`, `~/.ssh/...`).
    SensitivePath(String),
    /// It removes `/`, the home directory, a working directory, ...
    DangerousRemoval(String),
    /// A `sed` call outside the allowlist.
    Sed(String),
}

impl Concern {
    /// The user-facing message.
    #[must_use]
    pub fn message(&self) -> String {
        match self {
            Self::Unparseable(why) => {
                format!("Permission required: Command cannot be parsed ({why})")
            }
            Self::Dynamic(what) => format!(
                "Permission required: Command contains {what} which cannot be statically analyzed"
            ),
            Self::DangerousPattern(p) => {
                format!("Permission required: Command contains dangerous pattern: {p}")
            }
            Self::SensitivePath(p) => {
                format!("Permission required: Command touches sensitive path: {p}")
            }
            Self::DangerousRemoval(p) => {
                format!("Permission required: Command removes a critical path: {p}")
            }
            Self::Sed(why) => format!("Permission required: {why}"),
        }
    }

    /// The reason recorded in the decision.
    #[must_use]
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Unparseable(_) => "Safety check: command could not be parsed",
            Self::Dynamic(_) => {
                "Safety check: command contains dynamic expansion that cannot be statically analyzed"
            }
            Self::DangerousPattern(_) => "Safety check: dangerous command pattern detected",
            Self::SensitivePath(_) => "Safety check: sensitive path",
            Self::DangerousRemoval(_) => "Safety check: dangerous removal target",
            Self::Sed(_) => "Safety check: sed expression outside the allowlist",
        }
    }
}

/// The analysis of one command line.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The parsed script (`None` when parsing failed).
    pub script: Option<Script>,
    /// The first concern found, if any: a safety ask.
    pub concern: Option<Concern>,
    /// Every sub-command is in the read-only catalogue and nothing is written.
    pub read_only: bool,
}

impl Analysis {
    /// Whether the command has no sub-command at all (empty or blank input).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.script.as_ref().is_some_and(|s| s.commands.is_empty()) && self.concern.is_none()
    }
}

/// Environment variables that only change formatting or locale, allowed in
/// front of a read-only command.
fn harmless_assignment(word: &Word) -> bool {
    let name = word.raw.split(['=', '+', '[']).next().unwrap_or_default();
    word.is_static()
        && (matches!(
            name,
            "LANG"
                | "LANGUAGE"
                | "TZ"
                | "NO_COLOR"
                | "CLICOLOR"
                | "CLICOLOR_FORCE"
                | "FORCE_COLOR"
                | "COLUMNS"
                | "LINES"
                | "TERM"
                | "COLORTERM"
        ) || name.starts_with("LC_"))
}

/// Whether every assignment in front of the command is harmless.
#[must_use]
pub(crate) fn harmless_assignments(cmd: &SimpleCommand) -> bool {
    cmd.assignments.iter().all(harmless_assignment)
}

/// Analyses a command line: parse, look for concerns, classify as read-only.
///
/// `roots` are the resolved working directories (the current directory
/// included); they protect the project itself from removal.
#[must_use]
pub fn analyze(
    command: &str,
    env: &PathEnv,
    dangerous: &DangerousPaths,
    roots: &[PathBuf],
) -> Analysis {
    let script = match parse(command) {
        Ok(script) => script,
        Err(error) => {
            return Analysis {
                script: None,
                concern: Some(Concern::Unparseable(error.to_string())),
                read_only: false,
            };
        }
    };
    let mut concern = None;
    if let Some(fork_bomb) = fork_bomb(command) {
        concern = Some(Concern::DangerousPattern(fork_bomb));
    }
    if concern.is_none() {
        concern = script
            .hazards
            .first()
            .map(|h| Concern::Dynamic(h.describe()));
    }
    // A `cd` moves the base of relative paths: check them against every
    // directory the script may be in, and treat relative removals as
    // dangerous once it may be anywhere.
    let (envs, cwd_unknown) = directories(&script, env);
    for cmd in &script.commands {
        if concern.is_some() {
            break;
        }
        for env in &envs {
            concern = command_concern(cmd, env, dangerous, roots);
            if concern.is_some() {
                break;
            }
        }
        if concern.is_none() && cwd_unknown {
            concern = relative_removal(cmd);
        }
    }
    let read_only = concern.is_none()
        && !script.commands.is_empty()
        && script.commands.iter().all(is_read_only_command);
    Analysis {
        script: Some(script),
        concern,
        read_only,
    }
}

/// The directories commands of `script` may run in: the original one plus
/// every static `cd` / `pushd` target; `true` when a `cd` goes somewhere
/// unknown (`cd "$X"`, `cd -`, `popd`).
fn directories(script: &Script, env: &PathEnv) -> (Vec<PathEnv>, bool) {
    let mut envs = vec![env.clone()];
    let mut unknown = false;
    for cmd in &script.commands {
        let Some(name) = cmd.name() else { continue };
        match name.value.as_str() {
            "cd" | "pushd" => {
                let target = cmd.words[1..]
                    .iter()
                    .find(|w| !w.value.starts_with('-') || w.value == "-");
                let last = envs.last().unwrap_or(env);
                let next = match target {
                    None => last.home().map(Path::to_path_buf),
                    Some(word) if word.is_static() && word.value != "-" => {
                        last.resolve(&word.value)
                    }
                    Some(_) => None,
                };
                match next {
                    Some(dir) => {
                        let moved = last.with_cwd(dir);
                        envs.push(moved);
                    }
                    None => unknown = true,
                }
            }
            "popd" => unknown = true,
            _ => {}
        }
    }
    (envs, unknown)
}

/// A removal of a relative path, once the current directory is unknown.
fn relative_removal(cmd: &SimpleCommand) -> Option<Concern> {
    let values = static_values(cmd);
    for layer in unwrap_all(&values) {
        if matches!(base_name(layer[0]), "rm" | "rmdir" | "unlink")
            && let Some(target) = positionals(&layer[1..], &[])
                .into_iter()
                .find(|t| !t.starts_with('/') && !t.starts_with('~'))
        {
            return Some(Concern::DangerousRemoval(format!(
                "{target} (relative to a directory only known at run time)"
            )));
        }
    }
    None
}

fn fork_bomb(command: &str) -> Option<String> {
    let compact: String = command.chars().filter(|c| !c.is_whitespace()).collect();
    (compact.contains(":(){:|:&};:") || compact.contains("(){$0|$0&}"))
        .then(|| "fork bomb".to_owned())
}

fn static_values(cmd: &SimpleCommand) -> Vec<&str> {
    cmd.values().collect()
}

/// Whether one sub-command is read-only.
#[must_use]
pub fn is_read_only_command(cmd: &SimpleCommand) -> bool {
    let Some(name) = cmd.name() else { return false };
    if !harmless_assignments(cmd)
        || cmd.redirects.iter().any(|r| r.op.is_output())
        || cmd.words.iter().any(|w| !w.is_static())
        || name.value.contains('/')
    {
        return false;
    }
    let values = static_values(cmd);
    catalog::is_read_only(values[0], &values[1..])
}

fn command_concern(
    cmd: &SimpleCommand,
    env: &PathEnv,
    dangerous: &DangerousPaths,
    roots: &[PathBuf],
) -> Option<Concern> {
    // Redirections: writes to devices, system or sensitive paths; reads of secrets.
    for redirect in &cmd.redirects {
        if matches!(
            redirect.op,
            RedirectOp::Duplicate | RedirectOp::HereDoc | RedirectOp::HereString
        ) {
            continue;
        }
        let target = &redirect.target;
        if redirect.op.writes() && !target.is_static() {
            return Some(Concern::Dynamic(
                "a redirection to a path only known at run time".into(),
            ));
        }
        if let Some(concern) = sensitive(&target.value, env, dangerous) {
            return Some(concern);
        }
        if redirect.op.writes()
            && let Some(pattern) = env.resolve(&target.value).as_deref().and_then(system_write)
        {
            return Some(Concern::DangerousPattern(pattern));
        }
    }
    let values = static_values(cmd);
    if values.is_empty() {
        return None;
    }
    // Reads and writes of sensitive paths, by any argument.
    for word in &cmd.words[1..] {
        let value = word.value.as_str();
        let candidate = if value.starts_with("--") {
            value.split_once('=').map_or("", |(_, v)| v)
        } else if value.starts_with('-') {
            ""
        } else {
            value
        };
        if let Some(concern) = sensitive(candidate, env, dangerous) {
            return Some(concern);
        }
    }
    if cmd.name().is_some_and(|n| n.value.contains('/'))
        && let Some(concern) = sensitive(values[0], env, dangerous)
    {
        return Some(concern);
    }
    for layer in unwrap_all(&values) {
        if runs_shell_code(layer) {
            return Some(Concern::Dynamic(
                "code passed to a shell as a string".into(),
            ));
        }
        if let Some(pattern) = dangerous_pattern(layer, cmd.piped_input) {
            return Some(Concern::DangerousPattern(pattern));
        }
        let name = base_name(layer[0]);
        if name == "sed" {
            match check_sed(&layer[1..]) {
                Err(why) => return Some(Concern::Sed(why)),
                Ok(call) if call.in_place => {
                    if let Some(file) = call.files.iter().find(|f| {
                        dangerous.matches(Path::new(f))
                            || env.resolve(f).is_some_and(|p| dangerous.matches(&p))
                    }) {
                        return Some(Concern::Sed(format!(
                            "sed -i modifying dangerous file: {file}"
                        )));
                    }
                }
                Ok(_) => {}
            }
        }
        if matches!(name, "rm" | "rmdir" | "unlink") {
            for target in positionals(&layer[1..], &[]) {
                let known = !target.contains('$') && !target.contains('`');
                if is_dangerous_removal(target, known, env, roots) {
                    return Some(Concern::DangerousRemoval(target.to_owned()));
                }
            }
        }
        for target in write_targets(layer) {
            if let Some(pattern) = env.resolve(target).as_deref().and_then(system_write) {
                return Some(Concern::DangerousPattern(pattern));
            }
        }
    }
    None
}

fn sensitive(raw: &str, env: &PathEnv, dangerous: &DangerousPaths) -> Option<Concern> {
    if raw.is_empty() {
        return None;
    }
    let hit = dangerous.matches(Path::new(raw))
        || env.resolve(raw).is_some_and(|p| dangerous.matches(&p));
    hit.then(|| Concern::SensitivePath(raw.to_owned()))
}

/// Commands ACCEPT_EDITS may run on their own when every target is inside
/// a working directory.
const EDIT_COMMANDS: &[&str] = &["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"];

/// The targets of a file-system command, or `None` if `cmd` is not one.
fn edit_targets(cmd: &SimpleCommand) -> Option<Vec<&Word>> {
    let name = cmd.name()?;
    if !name.is_static() || !EDIT_COMMANDS.contains(&name.value.as_str()) {
        return None;
    }
    let args: Vec<&str> = cmd.words[1..].iter().map(|w| w.value.as_str()).collect();
    let targets: Vec<&str> = if name.value == "sed" {
        check_sed(&args).ok()?.files
    } else {
        let valued: &[&str] = match name.value.as_str() {
            "mkdir" => &["-m", "--mode", "--context"],
            "touch" => &["-d", "-t", "-r", "--date", "--reference"],
            "mv" | "cp" => &["-t", "-S", "--suffix", "--target-directory"],
            _ => &[],
        };
        let mut targets = positionals(&args, valued);
        if matches!(name.value.as_str(), "mv" | "cp") {
            if let Some(pos) = args.iter().position(|a| *a == "-t") {
                targets.extend(args.get(pos + 1).copied());
            }
            targets.extend(
                args.iter()
                    .filter_map(|a| a.strip_prefix("--target-directory=")),
            );
        }
        targets
    };
    let words: Vec<&Word> = targets
        .iter()
        .filter_map(|t| cmd.words[1..].iter().find(|w| w.value == *t))
        .collect();
    (words.len() == targets.len()).then_some(words)
}

/// Whether ACCEPT_EDITS may allow the script: every sub-command is a
/// file-system command (`mkdir`, `touch`, `rm`, `rmdir`, `mv`, `cp`, `sed`)
/// with at least one target, and every target is static, resolvable and
/// inside one of `roots`. Returns the first command's name.
#[must_use]
pub fn edits_within(script: &Script, env: &PathEnv, roots: &[PathBuf]) -> Option<String> {
    let mut edit_name = None;
    // `cd` moves the base of relative paths; do not guess where to.
    if script.commands.iter().any(|c| {
        c.name()
            .is_some_and(|n| matches!(n.value.as_str(), "cd" | "pushd" | "popd"))
    }) {
        return None;
    }
    for cmd in &script.commands {
        if !cmd.assignments.is_empty() || cmd.redirects.iter().any(|r| r.op.is_output()) {
            return None;
        }
        let targets = edit_targets(cmd)?;
        if targets.is_empty() {
            return None;
        }
        for word in targets {
            if !word.is_static() {
                return None;
            }
            let resolved = env.resolve(&word.value)?;
            if !is_within(&resolved, roots) {
                return None;
            }
        }
        edit_name.get_or_insert_with(|| cmd.words[0].value.clone());
    }
    edit_name
}
