//! Files of a session's workspace: one directory level, the workspace's
//! status (with the git branch read from `.git` directly), and files
//! opened for download — all through the workspace's [`ConfinedDir`].

use std::fs::File;
use std::path::{Path, PathBuf};

use oxiscope_workspace::{ConfinedDir, EntryKind};

use super::skills::unix_seconds;
use super::{SessionError, SessionResult, SessionWorkspace, blocking, io_error, tenant_path};
use crate::api::{DirectoryEntry, DirectoryListing, GitStatus, WorkspaceStatus};

/// The most entries one listing returns (a tenant can fill a directory
/// with millions).
const MAX_ENTRIES: usize = 10_000;
/// The largest `.git/HEAD` or loose ref read.
const MAX_REF_BYTES: u64 = 4096;
/// The largest `.git/packed-refs` read.
const MAX_PACKED_REFS_BYTES: u64 = 4 << 20;

/// `rel` as the agent sees it.
fn shown(ws: &SessionWorkspace, rel: &Path) -> String {
    ws.files.display(rel).display().to_string()
}

/// One level of the directory `raw` of the workspace (links listed, not
/// followed), sorted by name.
///
/// # Errors
/// 403 outside the workspace (a `..`, another absolute path, a link
/// leading out); 404 missing; 422 not a directory.
pub async fn list_directory(ws: &SessionWorkspace, raw: &str) -> SessionResult<DirectoryListing> {
    let rel = tenant_path(ws.workspace.workdir(), raw)?;
    let path = shown(ws, &rel);
    let files = ws.files.clone();
    let entries = blocking(move || {
        let meta = files.metadata(&rel).map_err(|e| io_error(&e))?;
        if !meta.is_dir() {
            return Err(SessionError::Unprocessable(format!(
                "{} is not a directory",
                files.display(&rel).display()
            )));
        }
        let (listed, more) = files
            .list_at_most(&rel, MAX_ENTRIES)
            .map_err(|e| io_error(&e))?;
        if more {
            tracing::warn!("a workspace directory listing is cut at {MAX_ENTRIES} entries");
        }
        Ok(listed
            .into_iter()
            .map(|(name, kind)| entry(&files, &rel, name, kind))
            .collect())
    })
    .await?;
    Ok(DirectoryListing { path, entries })
}

fn entry(files: &ConfinedDir, dir: &Path, name: String, kind: EntryKind) -> DirectoryEntry {
    let meta = match kind {
        EntryKind::File | EntryKind::Dir => files.metadata(&dir.join(&name)).ok(),
        // A link is not followed (it may lead out), nor is a FIFO opened.
        EntryKind::Symlink | EntryKind::Other => None,
    };
    let is_dir = kind == EntryKind::Dir;
    DirectoryEntry {
        is_dir,
        size_bytes: meta
            .as_ref()
            .filter(|m| !is_dir && m.is_file())
            .map(std::fs::Metadata::len),
        updated_at: meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .map(unix_seconds),
        name,
    }
}

/// The workspace root, the session's `cwd` and the git state there.
///
/// Git is read from the repository's files (`HEAD`, the branch's ref),
/// never by running `git`: the repository belongs to the tenant, and its
/// config could make a `git` run by the server execute anything. The
/// counts need the index and the object store, so they stay 0, and
/// ahead / behind stay null.
///
/// # Errors
/// The workspace cannot be read.
pub async fn workspace_status(ws: &SessionWorkspace) -> SessionResult<WorkspaceStatus> {
    let workdir = ws.workspace.workdir().to_path_buf();
    let cwd = crate::spec::SessionSpec::of(&ws.session)
        .cwd()
        .and_then(|c| tenant_path(&workdir, c).ok())
        .unwrap_or_default();
    let files = ws.files.clone();
    let rel = cwd.clone();
    let git = blocking(move || Ok(read_git(&files, &rel))).await?;
    Ok(WorkspaceStatus {
        workdir: workdir.display().to_string(),
        cwd: shown(ws, &cwd),
        git,
    })
}

/// The git state of `dir` (or of the nearest repository above it in the
/// workspace), when there is one to read.
fn read_git(files: &ConfinedDir, dir: &Path) -> Option<GitStatus> {
    let mut at = Some(dir);
    while let Some(here) = at {
        let git = here.join(".git");
        match files.metadata(&git) {
            Ok(meta) if meta.is_dir() => return read_repository(files, &git),
            // A `gitdir:` file (worktree, submodule) points elsewhere: not
            // followed.
            Ok(_) => return None,
            Err(_) => at = here.parent(),
        }
    }
    None
}

fn read_text(files: &ConfinedDir, rel: &Path, max: u64) -> Option<String> {
    files
        .read(rel, max)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
}

fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

fn read_repository(files: &ConfinedDir, git: &Path) -> Option<GitStatus> {
    let head = read_text(files, &git.join("HEAD"), MAX_REF_BYTES)?;
    let head = head.trim();
    if is_object_id(head) {
        return Some(GitStatus {
            head: Some(head.to_ascii_lowercase()),
            ..GitStatus::default()
        });
    }
    let reference = head.strip_prefix("ref:")?.trim();
    let branch = reference.strip_prefix("refs/heads/")?;
    let ref_path = safe_ref(reference)?;
    let loose = read_text(files, &git.join(&ref_path), MAX_REF_BYTES)
        .map(|t| t.trim().to_owned())
        .filter(|t| is_object_id(t));
    let commit = loose.or_else(|| {
        let packed = read_text(files, &git.join("packed-refs"), MAX_PACKED_REFS_BYTES)?;
        packed.lines().find_map(|line| {
            let (id, name) = line.split_once(' ')?;
            (name.trim() == reference && is_object_id(id)).then(|| id.to_owned())
        })
    });
    Some(GitStatus {
        branch: Some(branch.to_owned()),
        head: commit.map(|c| c.to_ascii_lowercase()),
        ..GitStatus::default()
    })
}

/// A ref name as a path inside `.git`, if it is a plain one.
fn safe_ref(reference: &str) -> Option<PathBuf> {
    let parts: Vec<&str> = reference.split('/').collect();
    let plain = parts
        .iter()
        .all(|p| !p.is_empty() && *p != "." && *p != ".." && !p.contains(['\\', '\0']));
    plain.then(|| parts.iter().collect())
}

/// A workspace file opened for download.
#[derive(Debug)]
pub struct FileDownload {
    /// The open file.
    pub file: File,
    /// Its size.
    pub len: u64,
    /// Its name (the last component).
    pub name: String,
}

/// Opens the regular file `rel` of the workspace.
///
/// # Errors
/// 403 for a link leading out; 404 missing; 422 a directory, FIFO or
/// device.
pub async fn open_file(ws: &SessionWorkspace, rel: &Path) -> SessionResult<FileDownload> {
    let files = ws.files.clone();
    let rel = rel.to_path_buf();
    blocking(move || {
        if rel.as_os_str().is_empty() {
            return Err(SessionError::Unprocessable(format!(
                "{} is a directory",
                files.display(&rel).display()
            )));
        }
        let file = files.open_file(&rel).map_err(|e| io_error(&e))?;
        let len = file.metadata().map_err(|e| io_error(&e))?.len();
        let name = rel
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(FileDownload { file, len, name })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (tempfile::TempDir, ConfinedDir) {
        let tmp = tempfile::tempdir().unwrap();
        let files = ConfinedDir::open(tmp.path(), "/workspace").unwrap();
        (tmp, files)
    }

    #[test]
    fn the_branch_and_head_come_from_the_repository_files() {
        let (tmp, files) = dir();
        let id = "0123456789abcdef0123456789abcdef01234567";
        std::fs::create_dir_all(tmp.path().join("repo/.git/refs/heads")).unwrap();
        std::fs::create_dir_all(tmp.path().join("repo/src")).unwrap();
        std::fs::write(tmp.path().join("repo/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(
            read_git(&files, Path::new("repo/src")),
            Some(GitStatus {
                branch: Some("main".into()),
                ..GitStatus::default()
            })
        );
        std::fs::write(
            tmp.path().join("repo/.git/packed-refs"),
            format!("# pack-refs\n{id} refs/heads/main\n"),
        )
        .unwrap();
        assert_eq!(
            read_git(&files, Path::new("repo/src"))
                .unwrap()
                .head
                .as_deref(),
            Some(id)
        );
        std::fs::write(tmp.path().join("repo/.git/HEAD"), format!("{id}\n")).unwrap();
        let detached = read_git(&files, Path::new("repo")).unwrap();
        assert_eq!(
            (detached.branch, detached.head.as_deref()),
            (None, Some(id))
        );
        assert_eq!(read_git(&files, Path::new("")), None);
    }

    #[test]
    fn a_hostile_head_reads_nothing_outside() {
        let (tmp, files) = dir();
        std::fs::create_dir_all(tmp.path().join(".git")).unwrap();
        std::fs::write(
            tmp.path().join(".git/HEAD"),
            "ref: refs/heads/../../../../etc/passwd\n",
        )
        .unwrap();
        assert_eq!(read_git(&files, Path::new("")), None);
        assert_eq!(safe_ref("refs/heads/../x"), None);
        // A `.git` that is a link out of the workspace is not read.
        let (tmp2, files2) = dir();
        std::os::unix::fs::symlink(tmp.path().join(".git"), tmp2.path().join(".git")).unwrap();
        assert_eq!(read_git(&files2, Path::new("")), None);
    }
}
