//! The project settings file, `.oxiscope/settings.toml` in the working
//! directory: permission rules that last from one console to the next.
//! "Always allow" appends its rule there; `oxiscope chat` reads it at start.
//!
//! The file is edited as text, not rewritten: only the `allow` array of
//! `[permissions]` is replaced (or added), so the user's comments and other
//! keys stay as they were.

use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Deserialize;

use super::settings::RuleLists;

/// Where the file lives, relative to the working directory.
pub(crate) const RELATIVE_PATH: &str = ".oxiscope/settings.toml";

/// What is read of the file; other keys are left to the user.
#[derive(Debug, Default, Deserialize)]
struct ProjectFile {
    #[serde(default)]
    permissions: RuleLists,
}

/// Where the `allow` array is, if there is one.
#[derive(Debug, Deserialize)]
struct Spans {
    permissions: Option<PermissionSpans>,
}

#[derive(Debug, Deserialize)]
struct PermissionSpans {
    allow: Option<toml::Spanned<Vec<String>>>,
}

/// The settings file of the working directory `dir`.
pub(crate) fn settings_path(dir: &Path) -> PathBuf {
    dir.join(RELATIVE_PATH)
}

/// The rules of `dir`'s settings file; no file, no rules.
///
/// # Errors
/// The file cannot be read or is not valid TOML with string lists in
/// `[permissions]`.
pub(crate) fn load(dir: &Path) -> anyhow::Result<RuleLists> {
    let path = settings_path(dir);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let file: ProjectFile =
                toml::from_str(&text).with_context(|| format!("in {}", path.display()))?;
            Ok(file.permissions)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RuleLists::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Adds `rules` to `[permissions] allow` of `dir`'s settings file,
/// creating the file and its directory when missing; returns the file's
/// path. Rules already there are not repeated.
///
/// # Errors
/// The file cannot be read, parsed or written.
pub(crate) fn add_allow(dir: &Path, rules: &[String]) -> anyhow::Result<PathBuf> {
    let path = settings_path(dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let updated = with_allow(&text, rules).with_context(|| format!("in {}", path.display()))?;
    if updated != text {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        // Written beside the file, then renamed: a crash leaves the old one.
        let partial = path.with_extension("toml.partial");
        std::fs::write(&partial, &updated)
            .with_context(|| format!("cannot write {}", partial.display()))?;
        std::fs::rename(&partial, &path)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(path)
}

/// `text` with `rules` added to `[permissions] allow`.
pub(crate) fn with_allow(text: &str, rules: &[String]) -> anyhow::Result<String> {
    let spans: Spans = toml::from_str(text)?;
    let mut updated = match spans.permissions {
        Some(PermissionSpans { allow: Some(allow) }) => {
            let span = allow.span();
            let mut list = allow.into_inner();
            let before = list.len();
            for rule in rules {
                if !list.contains(rule) {
                    list.push(rule.clone());
                }
            }
            if list.len() == before {
                return Ok(text.to_owned());
            }
            replace(text, span, &array(&list))
        }
        Some(PermissionSpans { allow: None }) => {
            let Some(end) = header_end(text) else {
                anyhow::bail!(
                    "[permissions] is not a table of its own; add allow = {} to it by hand",
                    array(rules)
                );
            };
            // A header on the last line, with no newline, gets one.
            let newline = if text[..end].ends_with('\n') {
                ""
            } else {
                "\n"
            };
            format!(
                "{}{newline}allow = {}\n{}",
                &text[..end],
                array(rules),
                &text[end..]
            )
        }
        None => {
            let mut out = text.to_owned();
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!("[permissions]\nallow = {}\n", array(rules)));
            out
        }
    };
    // What is written must read back with the rules in it.
    let check: ProjectFile = toml::from_str(&updated)?;
    anyhow::ensure!(
        rules.iter().all(|r| check.permissions.allow.contains(r)),
        "the rules could not be added to [permissions] allow"
    );
    if !updated.ends_with('\n') {
        updated.push('\n');
    }
    Ok(updated)
}

fn replace(text: &str, span: Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..span.start]);
    out.push_str(with);
    out.push_str(&text[span.end..]);
    out
}

/// The offset just after the `[permissions]` header line.
fn header_end(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("[permissions]") {
            let rest = rest.trim_start();
            if rest.is_empty() || rest.starts_with('#') {
                return Some(offset + line.len());
            }
        }
        offset += line.len();
    }
    None
}

/// A TOML array of strings: on one line when short, else one per line.
fn array(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quote(s)).collect();
    let one_line = format!("[{}]", quoted.join(", "));
    if one_line.len() <= 80 {
        return one_line;
    }
    let mut out = String::from("[\n");
    for item in quoted {
        out.push_str(&format!("    {item},\n"));
    }
    out.push(']');
    out
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "project_tests.rs"]
mod tests;
