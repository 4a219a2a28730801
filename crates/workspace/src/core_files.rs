//! Files a workspace copies in: skills from the host or its state, seeded
//! folders, all through confined directories.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The skill in directory `dir` of the state, named by its shown path.
pub(super) fn read_skill(state: &ConfinedDir, dir: &Path) -> std::result::Result<Skill, String> {
    let bytes = state
        .read(&dir.join(SKILL_FILE), MAX_SKILL_FILE)
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{SKILL_FILE} is not UTF-8"))?;
    Skill::from_markdown(text, Some(state.display(dir)))
}

pub(super) fn read_host_file(path: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() || meta.len() > MAX_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file of at most 16 MiB",
        ));
    }
    std::fs::read_to_string(path)
}

/// Copies the host directory `source` (trusted; links in it are skipped)
/// to `target` in the state.
pub(super) fn copy_host_dir(source: &Path, state: &ConfinedDir, target: &Path) -> Result<()> {
    fn walk(source: &Path, state: &ConfinedDir, target: &Path, depth: usize) -> Result<()> {
        let fail = |e| Error::io(format!("copying {}", source.display()), e);
        if depth > MAX_DEPTH {
            return Ok(());
        }
        state.create_dir_all(target).map_err(fail)?;
        let mut entries: Vec<_> = std::fs::read_dir(source)
            .map_err(fail)?
            .filter_map(std::result::Result::ok)
            .collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let kind = entry.file_type().map_err(fail)?;
            let to = target.join(entry.file_name());
            if kind.is_dir() {
                walk(&entry.path(), state, &to, depth + 1)?;
            } else if kind.is_file() {
                let meta = entry.metadata().map_err(fail)?;
                if meta.len() <= MAX_FILE {
                    let bytes = std::fs::read(entry.path()).map_err(fail)?;
                    state.write(&to, &bytes).map_err(fail)?;
                }
            }
        }
        Ok(())
    }
    walk(source, state, target, 0)
}

/// Copies directory `from` to `to` inside the state (links skipped, at
/// most [`MAX_COPY_BYTES`] in all: the seed lives in a directory a tenant
/// can fill).
pub(super) fn copy_confined(state: &ConfinedDir, from: &Path, to: &Path) -> Result<()> {
    fn walk(
        state: &ConfinedDir,
        from: &Path,
        to: &Path,
        depth: usize,
        budget: &mut u64,
    ) -> Result<()> {
        let fail = |e| Error::io("copying the skill seed", e);
        if depth > MAX_DEPTH {
            return Ok(());
        }
        state.create_dir_all(to).map_err(fail)?;
        for (name, kind) in state.list(from).map_err(fail)? {
            match kind {
                EntryKind::Dir => {
                    walk(state, &from.join(&name), &to.join(&name), depth + 1, budget)?;
                }
                EntryKind::File => {
                    let bytes = state
                        .read(&from.join(&name), (*budget).min(MAX_FILE))
                        .map_err(fail)?;
                    *budget = budget.saturating_sub(bytes.len() as u64);
                    state.write(&to.join(&name), &bytes).map_err(fail)?;
                }
                EntryKind::Symlink | EntryKind::Other => {}
            }
        }
        Ok(())
    }
    let mut budget = MAX_COPY_BYTES;
    walk(state, from, to, 0, &mut budget)
}
