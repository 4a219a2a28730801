//! The logic behind `/workspace/`: the caller's session and its workspace,
//! paths a tenant names inside it, and the errors these routes answer
//! with.
//!
//! Every path a tenant sends is resolved in two steps: lexically here
//! ([`tenant_path`]: relative to the workspace, or under its root as the
//! agent sees it; no `..`), then by the kernel through a
//! [`ConfinedDir`] of the workspace's host directory, so a link planted
//! by sandboxed code cannot lead outside either.

mod files;
mod install;
mod mcp;
mod skills;

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use oxiscope_storage::SessionRecord;
use oxiscope_workspace::{ConfinedDir, Workspace};

pub use files::{FileDownload, list_directory, open_file, workspace_status};
pub use install::{InstallDeadline, commit_skill, install_turn};
pub use mcp::{add_mcp, list_mcps, remove_mcp};
pub use skills::{UPLOAD_BODY_LIMIT, add_skill_from_path, list_skills, upload_skill};

use crate::Engine;
use crate::error::{SessionError, SessionResult};
use crate::load_session;

impl From<oxiscope_workspace::Error> for SessionError {
    fn from(e: oxiscope_workspace::Error) -> Self {
        use oxiscope_workspace::Error as E;
        if e.is_over_limit() {
            return Self::TooLarge(e.to_string());
        }
        match e {
            E::InvalidId { .. } | E::InvalidMcp { .. } | E::InvalidSkill { .. } => {
                Self::Unprocessable(e.to_string())
            }
            E::DuplicateMcp { .. } | E::DuplicateSkill { .. } => {
                SessionError::Conflict(e.to_string())
            }
            E::UnknownSkill { .. } => SessionError::NotFound(e.to_string()),
            E::TooManyLive { .. } => {
                SessionError::Limit(format!("{e} (max_live_workspaces_per_user)"))
            }
            other => SessionError::Internal(format!("the workspace: {other}")),
        }
    }
}

/// A file-system failure on a tenant's path: missing is 404, outside is
/// 403, the wrong kind is 422; the message names the path as the agent
/// sees it.
pub fn io_error(e: &std::io::Error) -> SessionError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => SessionError::NotFound(e.to_string()),
        K::PermissionDenied => SessionError::Forbidden(e.to_string()),
        K::IsADirectory | K::NotADirectory | K::InvalidInput => {
            SessionError::Unprocessable(e.to_string())
        }
        K::FileTooLarge => SessionError::TooLarge(e.to_string()),
        _ => SessionError::Internal(format!("a workspace file: {e}")),
    }
}

/// The caller's session and its workspace.
#[allow(missing_debug_implementations)] // the workspace is a trait object
pub struct SessionWorkspace {
    /// The session record.
    pub session: SessionRecord,
    /// Its workspace.
    pub workspace: Arc<dyn Workspace>,
    /// The workspace's host directory, confined; messages show paths as
    /// the agent sees them.
    pub files: ConfinedDir,
}

/// The session `session_id` of the caller `user` and agent `agent_id`
/// (404 otherwise), with its workspace.
///
/// # Errors
/// 404 for another user's session or another agent; 500 when the
/// workspace cannot be opened.
pub async fn open_session(
    state: &Engine,
    user: &str,
    agent_id: &str,
    session_id: &str,
) -> SessionResult<SessionWorkspace> {
    let session = load_session(state, user, session_id, agent_id).await?;
    let workspace = super::sessions::workspace_of(state, &session).await?;
    let host = state
        .workspaces()
        .dir(&session.user_id, &session.workspace_id)?;
    let shown = workspace.workdir().to_path_buf();
    let files = blocking(move || ConfinedDir::open(&host, shown).map_err(|e| io_error(&e))).await?;
    Ok(SessionWorkspace {
        session,
        workspace,
        files,
    })
}

/// Runs blocking file work off the async threads.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> SessionResult<T> + Send + 'static,
) -> SessionResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| SessionError::Internal(format!("a file task: {e}")))?
}

/// `raw` (relative to the workspace, or absolute under `workdir` as the
/// agent sees it) as a path relative to the workspace; empty for the root.
///
/// # Errors
/// 403 for an absolute path elsewhere or a `..`; 422 for a NUL byte.
pub fn tenant_path(workdir: &Path, raw: &str) -> SessionResult<PathBuf> {
    if raw.contains('\0') {
        return Err(SessionError::Unprocessable(format!(
            "{raw:?} is not a path: it contains a NUL byte"
        )));
    }
    let path = Path::new(raw);
    let rel = if path.is_absolute() {
        path.strip_prefix(workdir)
            .map_err(|_| outside(workdir, raw))?
    } else {
        path
    };
    let mut out = PathBuf::new();
    for component in rel.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(outside(workdir, raw));
            }
        }
    }
    Ok(out)
}

fn outside(workdir: &Path, raw: &str) -> SessionError {
    SessionError::Forbidden(format!(
        "{raw:?} is outside the workspace: give a path relative to it or under {} (no '..')",
        workdir.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_paths_stay_inside_the_workspace() {
        let root = Path::new("/workspace");
        for (raw, rel) in [
            ("", ""),
            (".", ""),
            ("/workspace", ""),
            ("/workspace/a/b.txt", "a/b.txt"),
            ("a/./b", "a/b"),
            ("notes.md", "notes.md"),
        ] {
            assert_eq!(tenant_path(root, raw).unwrap(), PathBuf::from(rel), "{raw}");
        }
        for raw in [
            "..",
            "a/../../etc",
            "/etc/passwd",
            "/workspace/../etc",
            "/workspaces",
            "a\0b",
        ] {
            assert!(tenant_path(root, raw).is_err(), "{raw:?}");
        }
    }
}
