//! A skill card's files, staged into a private directory of the server
//! (symlinks, escapes, sizes and counts checked by
//! `oxiscope_workspace::stage_skill_*`) before the workspace copies them.

use std::path::{Path, PathBuf};

use oxiscope_workspace::{ConfinedDir, SkillLimits, stage_skill_archive, stage_skill_dir};

use super::{Catalogue, HubError, Hubs, SkillEntry, SkillFiles, fetch};

/// The most archive bytes downloaded for one skill.
const MAX_ARCHIVE_BYTES: u64 = 32 << 20;

/// A staged skill directory; the staging directory is removed on drop.
#[derive(Debug)]
pub struct StagedSkill {
    /// The skill directory, for `Workspace::add_skill`.
    pub dir: PathBuf,
    staging: PathBuf,
}

impl Drop for StagedSkill {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.staging) {
            tracing::warn!(dir = %self.staging.display(), "cannot remove a skill staging directory: {e}");
        }
    }
}

/// A fresh private directory under `base`.
fn fresh_dir(base: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(base)?;
    let dir = base.join(oxiscope_storage::new_id());
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    }
    #[cfg(not(unix))]
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

/// Stages the files of `entry` (a card of `catalogue`) under `base`.
///
/// # Errors
/// A reason for the caller's `failed` map: the files are missing, hostile
/// or too large; the hub failed ([`HubError::Upstream`]).
pub async fn stage_skill(
    hubs: &Hubs,
    catalogue: &Catalogue,
    entry: &SkillEntry,
    base: &Path,
) -> Result<StagedSkill, HubError> {
    let invalid = |reason: String| HubError::Invalid {
        location: entry.files.describe(),
        reason,
    };
    let archive = match &entry.files {
        SkillFiles::Archive(url) => {
            let http = hubs.http()?;
            let listed_by = catalogue.source_url.as_deref();
            Some(fetch::download_archive(http, url, listed_by, MAX_ARCHIVE_BYTES).await?)
        }
        SkillFiles::Dir(_) => None,
    };
    let staging = fresh_dir(base).map_err(|e| invalid(format!("staging: {e}")))?;
    // The staging goes with the blocking work, which removes it on a
    // failure, or when a caller cut off meanwhile no longer takes it.
    let mut guard = StagedSkill {
        dir: PathBuf::new(),
        staging: staging.clone(),
    };
    let files = entry.files.clone();
    let root = catalogue.root.clone();
    let target = staging;
    let staged = tokio::task::spawn_blocking(move || -> Result<StagedSkill, String> {
        let limits = SkillLimits::default();
        guard.dir = match (files, archive) {
            (SkillFiles::Dir(rel), _) => {
                let root =
                    root.ok_or_else(|| "a remote catalogue has no directories".to_owned())?;
                let source = ConfinedDir::open(&root, "hub").map_err(|e| e.to_string())?;
                stage_skill_dir(&source, &rel, &limits, &target).map_err(|e| e.to_string())?
            }
            (SkillFiles::Archive(_), Some(bytes)) => {
                stage_skill_archive(std::io::Cursor::new(bytes), &limits, &target)
                    .map_err(|e| e.to_string())?
            }
            (SkillFiles::Archive(_), None) => {
                return Err("the archive was not downloaded".to_owned());
            }
        };
        Ok(guard)
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r);
    staged.map_err(invalid)
}

/// The largest `SKILL.md` shown on a card.
const MAX_MARKDOWN_BYTES: u64 = 256 * 1024;

/// The `SKILL.md` of a card: read from a local catalogue's directory
/// (confined to it), or as the catalogue states it.
pub async fn skill_markdown(catalogue: &Catalogue, entry: &SkillEntry) -> Option<String> {
    let (SkillFiles::Dir(rel), Some(root)) = (&entry.files, &catalogue.root) else {
        return entry.card.markdown.clone();
    };
    let file = rel.join("SKILL.md");
    let root = root.clone();
    let read = tokio::task::spawn_blocking(move || {
        let dir = ConfinedDir::open(&root, "hub").ok()?;
        let bytes = dir.read(&file, MAX_MARKDOWN_BYTES).ok()?;
        String::from_utf8(bytes).ok()
    })
    .await
    .ok()
    .flatten();
    read.or_else(|| entry.card.markdown.clone())
}
