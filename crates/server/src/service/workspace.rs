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
mod token;

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use oxiscope_storage::SessionRecord;
use oxiscope_workspace::{ConfinedDir, Workspace};
use serde_json::json;

pub(crate) use files::{FileDownload, list_directory, open_file, workspace_status};
pub(crate) use install::{InstallDeadline, commit_skill, install_turn};
pub(crate) use mcp::{add_mcp, list_mcps, remove_mcp};
pub(crate) use skills::{UPLOAD_BODY_LIMIT, add_skill_from_path, list_skills, upload_skill};
pub(crate) use token::{DownloadClaims, mint_download_token, open_download_token};

use crate::error::ApiError;
use crate::service::load_session;
use crate::state::AppState;

/// What a `/workspace/` route fails with: the usual [`ApiError`]s, plus
/// AgentScope's string-detail 422, a 413 for uploads over a limit, and
/// the 408 and 503 of a skill install past its time limit.
#[derive(Debug)]
pub(crate) enum WsError {
    /// One of the service's usual errors.
    Api(ApiError),
    /// 422 `{"detail": "..."}`: the input is unusable.
    Invalid(String),
    /// 413 `{"detail": "..."}`: over a size or count limit.
    TooLarge(String),
    /// 408 `{"detail": "..."}`: the request's body came too slowly.
    Timeout(String),
    /// 503 `{"detail": "..."}`: the server's own time limit cut the
    /// request off (a stalled source, or a wait for a busy shared slot);
    /// trying again later may succeed. Not 504: no gateway's upstream is
    /// meant (a folder install has none), and not 408: the client was on
    /// time.
    Unavailable(String),
}

impl From<ApiError> for WsError {
    fn from(e: ApiError) -> Self {
        Self::Api(e)
    }
}

impl From<oxiscope_storage::Error> for WsError {
    fn from(e: oxiscope_storage::Error) -> Self {
        Self::Api(e.into())
    }
}

impl From<oxiscope_workspace::Error> for WsError {
    fn from(e: oxiscope_workspace::Error) -> Self {
        use oxiscope_workspace::Error as E;
        if e.is_over_limit() {
            return Self::TooLarge(e.to_string());
        }
        match e {
            E::InvalidId { .. } | E::InvalidMcp { .. } | E::InvalidSkill { .. } => {
                Self::Invalid(e.to_string())
            }
            E::DuplicateMcp { .. } | E::DuplicateSkill { .. } => {
                Self::Api(ApiError::Conflict(e.to_string()))
            }
            E::UnknownSkill { .. } => Self::Api(ApiError::NotFound(e.to_string())),
            E::TooManyLive { .. } => Self::Api(ApiError::TooManyRequests(format!(
                "{e} (max_live_workspaces_per_user)"
            ))),
            other => Self::Api(ApiError::Internal(format!("the workspace: {other}"))),
        }
    }
}

impl IntoResponse for WsError {
    fn into_response(self) -> Response {
        match self {
            Self::Api(e) => e.into_response(),
            Self::Invalid(detail) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                axum::Json(json!({ "detail": detail })),
            )
                .into_response(),
            Self::TooLarge(detail) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                axum::Json(json!({ "detail": detail })),
            )
                .into_response(),
            Self::Timeout(detail) => (
                StatusCode::REQUEST_TIMEOUT,
                axum::Json(json!({ "detail": detail })),
            )
                .into_response(),
            Self::Unavailable(detail) => (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(json!({ "detail": detail })),
            )
                .into_response(),
        }
    }
}

/// Result of a `/workspace/` route.
pub(crate) type WsResult<T> = Result<T, WsError>;

/// A file-system failure on a tenant's path: missing is 404, outside is
/// 403, the wrong kind is 422; the message names the path as the agent
/// sees it.
pub(crate) fn io_error(e: &std::io::Error) -> WsError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => WsError::Api(ApiError::NotFound(e.to_string())),
        K::PermissionDenied => WsError::Api(ApiError::Forbidden(e.to_string())),
        K::IsADirectory | K::NotADirectory | K::InvalidInput => WsError::Invalid(e.to_string()),
        K::FileTooLarge => WsError::TooLarge(e.to_string()),
        _ => WsError::Api(ApiError::Internal(format!("a workspace file: {e}"))),
    }
}

/// The caller's session and its workspace.
pub(crate) struct SessionWorkspace {
    /// The session record.
    pub(crate) session: SessionRecord,
    /// Its workspace.
    pub(crate) workspace: Arc<dyn Workspace>,
    /// The workspace's host directory, confined; messages show paths as
    /// the agent sees them.
    pub(crate) files: ConfinedDir,
}

/// The session `session_id` of the caller `user` and agent `agent_id`
/// (404 otherwise), with its workspace.
///
/// # Errors
/// 404 for another user's session or another agent; 500 when the
/// workspace cannot be opened.
pub(crate) async fn open_session(
    state: &AppState,
    user: &str,
    agent_id: &str,
    session_id: &str,
) -> WsResult<SessionWorkspace> {
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
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> WsResult<T> + Send + 'static,
) -> WsResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| WsError::Api(ApiError::Internal(format!("a file task: {e}"))))?
}

/// `raw` (relative to the workspace, or absolute under `workdir` as the
/// agent sees it) as a path relative to the workspace; empty for the root.
///
/// # Errors
/// 403 for an absolute path elsewhere or a `..`; 422 for a NUL byte.
pub(crate) fn tenant_path(workdir: &Path, raw: &str) -> WsResult<PathBuf> {
    if raw.contains('\0') {
        return Err(WsError::Invalid(format!(
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

fn outside(workdir: &Path, raw: &str) -> WsError {
    WsError::Api(ApiError::Forbidden(format!(
        "{raw:?} is outside the workspace: give a path relative to it or under {} (no '..')",
        workdir.display()
    )))
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
