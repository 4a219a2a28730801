//! Loading skills from directories of `SKILL.md` files.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::Skill;
use crate::error::{Error, Result};

/// The file that defines a skill.
pub(super) const SKILL_FILE: &str = "SKILL.md";

/// Loads skills from a directory.
///
/// The directory may itself hold a `SKILL.md`; with
/// [`scan_subdirs`](Self::scan_subdirs) each immediate sub-directory
/// holding a `SKILL.md` is a skill too (in name order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillLoader {
    dir: PathBuf,
    scan_subdirs: bool,
}

#[derive(Deserialize)]
struct FrontMatter {
    name: String,
    description: String,
}

impl SkillLoader {
    /// A loader for `dir`, scanning sub-directories.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            scan_subdirs: true,
        }
    }

    /// Whether sub-directories are scanned (default `true`).
    #[must_use]
    pub fn scan_subdirs(mut self, scan: bool) -> Self {
        self.scan_subdirs = scan;
        self
    }

    /// Reads the skills.
    ///
    /// # Errors
    ///
    /// The directory cannot be listed, a `SKILL.md` cannot be read, or its
    /// front matter lacks `name` or `description`.
    pub fn load(&self) -> Result<Vec<Skill>> {
        let mut skills = Vec::new();
        let own = self.dir.join(SKILL_FILE);
        if own.is_file() {
            skills.push(load_file(&own)?);
        }
        if self.scan_subdirs {
            let listing = std::fs::read_dir(&self.dir).map_err(|source| Error::SkillIo {
                path: self.dir.clone(),
                source,
            })?;
            let mut dirs: Vec<PathBuf> = listing
                .filter_map(std::result::Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join(SKILL_FILE).is_file())
                .collect();
            dirs.sort();
            for dir in dirs {
                skills.push(load_file(&dir.join(SKILL_FILE))?);
            }
        }
        Ok(skills)
    }
}

/// Loads one `SKILL.md`.
///
/// # Errors
///
/// The file cannot be read or has no valid front matter.
pub(super) fn load_file(path: &Path) -> Result<Skill> {
    let content = std::fs::read_to_string(path).map_err(|source| Error::SkillIo {
        path: path.to_path_buf(),
        source,
    })?;
    let invalid = |reason: String| Error::InvalidSkill {
        path: path.to_path_buf(),
        reason,
    };
    let (name, description) = parse_front_matter(&content).map_err(invalid)?;
    Ok(Skill {
        name,
        description,
        content,
        dir: path.parent().map(Path::to_path_buf),
    })
}

/// Name and description from the `---` delimited YAML front matter.
pub(crate) fn parse_front_matter(content: &str) -> std::result::Result<(String, String), String> {
    let body = content.trim_start_matches('\u{feff}');
    let rest = body
        .strip_prefix("---")
        .and_then(|r| r.strip_prefix('\n').or_else(|| r.strip_prefix("\r\n")))
        .ok_or("the file does not start with a `---` front matter block")?;
    let end = rest
        .match_indices("\n---")
        .map(|(i, _)| i)
        .next()
        .ok_or("the front matter block is not closed with `---`")?;
    let yaml = &rest[..end];
    let front: FrontMatter = serde_yaml_ng::from_str(yaml)
        .map_err(|e| format!("the front matter needs `name` and `description`: {e}"))?;
    if front.name.trim().is_empty() {
        return Err("the skill name is empty".to_owned());
    }
    Ok((
        front.name.trim().to_owned(),
        front.description.trim().to_owned(),
    ))
}
