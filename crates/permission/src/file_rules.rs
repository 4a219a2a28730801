//! Glob rules for file tools (`Read(src/**)`, `Write(**/.env)`).
//!
//! Patterns use `**` semantics: `*`, `?` and `[...]` stay inside one path
//! component, `**` spans any number of components. A pattern starting with
//! `/` is absolute, `~/` is under the home directory, and anything else is
//! anchored at each working directory; like in `.gitignore`, a pattern
//! without `/` (`*.py`, `.env*`) is a file-name pattern that matches at any
//! depth below a working directory.
//!
//! Restrictive rules (deny, ask) are read broadly: they also match when the
//! pattern matches the path as written, with `*` allowed to cross `/`
//! (AgentScope's `fnmatch` reading), or when a relative pattern matches the
//! end of the resolved path anywhere on disk.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobMatcher};

use crate::paths::{PathEnv, normalise};

fn compile(pattern: &str, literal_separator: bool) -> Option<GlobMatcher> {
    GlobBuilder::new(pattern)
        .literal_separator(literal_separator)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g: Glob| g.compile_matcher())
}

/// The absolute patterns a rule stands for.
fn anchored_patterns(pattern: &str, env: &PathEnv, roots: &[PathBuf]) -> Vec<String> {
    let to_string = |p: &Path| p.to_string_lossy().into_owned();
    if pattern.starts_with('/') {
        return vec![to_string(&normalise(Path::new(pattern)))];
    }
    if let Some(rest) = pattern.strip_prefix("~/") {
        return env
            .home()
            .map(|h| to_string(&normalise(&h.join(rest))))
            .into_iter()
            .collect();
    }
    let relative = pattern.trim_start_matches("./");
    let mut out = Vec::new();
    for root in roots {
        out.push(to_string(&normalise(&root.join(relative))));
        if !relative.trim_end_matches('/').contains('/') && !relative.starts_with("**") {
            out.push(to_string(&normalise(&root.join("**").join(relative))));
        }
    }
    out
}

/// Whether a file rule matches a path.
///
/// `raw` is the path as the tool received it, `resolved` its absolute
/// resolution (`None` when it cannot be resolved), `roots` the resolved
/// working directories. `broad` selects the restrictive reading (deny, ask).
#[must_use]
pub fn file_rule_matches(
    pattern: &str,
    raw: &str,
    resolved: Option<&Path>,
    env: &PathEnv,
    roots: &[PathBuf],
    broad: bool,
) -> bool {
    if pattern.is_empty() || raw.is_empty() {
        return false;
    }
    if let Some(resolved) = resolved {
        for candidate in anchored_patterns(pattern, env, roots) {
            if compile(&candidate, true).is_some_and(|m| m.is_match(resolved)) {
                return true;
            }
        }
    }
    if !broad {
        return false;
    }
    let loose = compile(pattern, false);
    if loose.as_ref().is_some_and(|m| m.is_match(raw)) || pattern == raw {
        return true;
    }
    let Some(resolved) = resolved else {
        return false;
    };
    if loose.as_ref().is_some_and(|m| m.is_match(resolved)) {
        return true;
    }
    if !pattern.starts_with('/') && !pattern.starts_with('~') {
        let suffix = format!("**/{}", pattern.trim_start_matches("./"));
        return compile(&suffix, true).is_some_and(|m| m.is_match(resolved));
    }
    false
}

/// Escapes glob metacharacters so a literal path can be put in a rule.
#[must_use]
pub fn escape_glob(literal: &str) -> String {
    let mut out = String::with_capacity(literal.len());
    for c in literal.chars() {
        match c {
            '*' | '?' | '[' | ']' | '{' | '}' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

/// The folder rule suggested for a resolved directory: relative to the
/// working directory that contains it (`src/**`, or `**` for the directory
/// itself), absolute otherwise.
#[must_use]
pub fn folder_rule(dir: &Path, roots: &[PathBuf]) -> String {
    let best = roots
        .iter()
        .filter(|root| dir.starts_with(root))
        .max_by_key(|root| root.components().count());
    match best.and_then(|root| dir.strip_prefix(root).ok()) {
        Some(rel) if rel.as_os_str().is_empty() => "**".to_owned(),
        Some(rel) => format!("{}/**", escape_glob(&rel.to_string_lossy())),
        None => {
            let abs = escape_glob(&dir.to_string_lossy());
            if abs.ends_with('/') {
                format!("{abs}**")
            } else {
                format!("{abs}/**")
            }
        }
    }
}
