//! Skills of a session's agent: listed, added from a folder of the
//! workspace, uploaded as a folder, removed.
//!
//! Whatever the source, the files are first staged into a private
//! directory of the server (`<data_dir>/staging/<id>`, mode 0700) with
//! every limit checked as they stream; only that staged copy is handed to
//! `Workspace::add_skill`, whose source is trusted. The whole request,
//! its wait for an install turn included, runs within the server's
//! skill-install time limit (see `install`).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use oxiscope_workspace::{SkillLimits, SkillStage, safe_relative_path, stage_skill_dir};
use tokio::io::AsyncWriteExt as _;

use super::install::{InstallDeadline, commit_skill, install_turn};
use super::{SessionError, SessionResult, SessionWorkspace, blocking, tenant_path};
use crate::Engine;
use crate::api::{UploadManifest, WorkspaceSkill};
use crate::upload::{Upload, UploadError};

/// The largest manifest part.
const MAX_MANIFEST_BYTES: usize = 1 << 20;
/// The largest request body of an upload: the file limit plus room for
/// the manifest and the multipart framing.
pub const UPLOAD_BODY_LIMIT: usize = (20 << 20) + (2 << 20);

/// The skills of the session's agent, newest `SKILL.md` times included.
///
/// # Errors
/// The skill partition cannot be read.
pub async fn list_skills(ws: &SessionWorkspace) -> SessionResult<Vec<WorkspaceSkill>> {
    let skills = ws.workspace.list_skills(&ws.session.agent_id).await?;
    let files = ws.files.clone();
    let workdir = ws.workspace.workdir().to_path_buf();
    blocking(move || {
        Ok(skills
            .into_iter()
            .map(|skill| {
                let dir = skill.dir.clone().unwrap_or_default();
                let updated_at = dir
                    .strip_prefix(&workdir)
                    .ok()
                    .and_then(|rel| files.metadata(&rel.join("SKILL.md")).ok())
                    .and_then(|m| m.modified().ok())
                    .map_or(0.0, unix_seconds);
                WorkspaceSkill {
                    name: skill.name,
                    description: skill.description,
                    dir: dir.display().to_string(),
                    markdown: skill.content,
                    updated_at,
                }
            })
            .collect())
    })
    .await
}

/// Seconds since the Unix epoch.
pub(super) fn unix_seconds(time: std::time::SystemTime) -> f64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A fresh private staging directory, removed on drop.
struct Staging {
    dir: PathBuf,
}

impl Staging {
    fn new(state: &Engine) -> SessionResult<Self> {
        use std::os::unix::fs::DirBuilderExt as _;
        let base = state.data_dir().join("staging");
        let fail =
            |e: std::io::Error| SessionError::Internal(format!("a skill staging directory: {e}"));
        std::fs::create_dir_all(&base).map_err(fail)?;
        let dir = base.join(oxiscope_storage::new_id());
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(fail)?;
        Ok(Self { dir })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %self.dir.display(), "cannot remove a skill staging directory: {e}");
        }
    }
}

/// Copies the skill folder `skill_path` of the session's workspace into
/// the agent's skills.
///
/// # Errors
/// 403 for a path outside the workspace; 422 for a folder that is no
/// skill (or holds links); 413 over the limits; 409 for a name taken; 503
/// past the skill-install time limit.
pub async fn add_skill_from_path(
    state: &Engine,
    ws: &SessionWorkspace,
    skill_path: &str,
) -> SessionResult<String> {
    let deadline = InstallDeadline::start(state);
    let rel = tenant_path(ws.workspace.workdir(), skill_path)?;
    deadline
        .run(install_from_path(state, ws, rel))
        .await
        .map_err(|e| e.unavailable())?
}

async fn install_from_path(
    state: &Engine,
    ws: &SessionWorkspace,
    rel: PathBuf,
) -> SessionResult<String> {
    let _turn = install_turn(&ws.session.user_id).await?;
    let staging = Staging::new(state)?;
    let files = ws.files.clone();
    let target = staging.dir.join("skill");
    // The staging goes with the copy: a request cut off meanwhile leaves
    // its removal to the copy's thread.
    let (staging, staged) = blocking(move || {
        let staged = stage_skill_dir(&files, &rel, &SkillLimits::default(), &target)?;
        Ok((staging, staged))
    })
    .await?;
    let workspace = Arc::clone(&ws.workspace);
    Ok(commit_skill(workspace, &ws.session.agent_id, staged, staging).await?)
}

/// Checks a manifest as AgentScope does: at least one file, every path
/// `<folder>/...` and safe, one folder, a `SKILL.md` at its top, no path
/// twice, sizes within the limits.
fn check_manifest(manifest: &UploadManifest, limits: &SkillLimits) -> SessionResult<()> {
    let entries = &manifest.entries;
    if entries.is_empty() {
        return Err(SessionError::Unprocessable(
            "The upload contains no files.".to_owned(),
        ));
    }
    if entries.len() > limits.max_files {
        return Err(SessionError::TooLarge(format!(
            "A skill may hold at most {} files, got {}.",
            limits.max_files,
            entries.len()
        )));
    }
    let mut roots = HashSet::new();
    let mut seen = HashSet::new();
    let mut total: u64 = 0;
    for entry in entries {
        if entry.size > limits.max_file_bytes {
            return Err(SessionError::TooLarge(format!(
                "{:?} is {} bytes, over the {}-byte per-file limit.",
                entry.path, entry.size, limits.max_file_bytes
            )));
        }
        total = total.saturating_add(entry.size);
        let path = safe_relative_path(&entry.path, limits.max_depth)
            .map_err(|e| SessionError::Unprocessable(e.to_string()))?;
        let mut parts = path.components();
        let root = parts.next().map(|c| c.as_os_str().to_owned());
        if parts.next().is_none() {
            return Err(SessionError::Unprocessable(format!(
                "Unsafe upload path: {:?} (every path starts with the skill's folder)",
                entry.path
            )));
        }
        roots.extend(root);
        if !seen.insert(path) {
            return Err(SessionError::Unprocessable(format!(
                "{:?} appears twice in the manifest.",
                entry.path
            )));
        }
    }
    if total > limits.max_total_bytes {
        return Err(SessionError::TooLarge(format!(
            "The upload is {total} bytes, over the {}-byte limit.",
            limits.max_total_bytes
        )));
    }
    let root = match roots.into_iter().collect::<Vec<_>>().as_slice() {
        [root] => PathBuf::from(root),
        many => {
            return Err(SessionError::Unprocessable(format!(
                "A skill must be a single folder, got {}.",
                many.len()
            )));
        }
    };
    if !seen.contains(&root.join("SKILL.md")) {
        return Err(SessionError::Unprocessable(format!(
            "No SKILL.md at the root of {:?}.",
            root.display()
        )));
    }
    Ok(())
}

fn upload_error(e: &UploadError) -> SessionError {
    match e {
        UploadError::TooLarge(_) => SessionError::TooLarge(e.to_string()),
        UploadError::Malformed(_) => SessionError::Unprocessable(e.to_string()),
    }
}

/// The `manifest` part, parsed.
async fn read_manifest(upload: &mut Upload) -> SessionResult<UploadManifest> {
    let mut bytes = Vec::new();
    while let Some(chunk) = upload.chunk().await.map_err(|e| upload_error(&e))? {
        if bytes.len() + chunk.len() > MAX_MANIFEST_BYTES {
            return Err(SessionError::TooLarge(format!(
                "The manifest is over {MAX_MANIFEST_BYTES} bytes."
            )));
        }
        bytes.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| SessionError::Unprocessable(format!("The manifest is not valid: {e}")))
}

/// Streams one `files` part into the stage as `path`, checking its bytes
/// against the manifest and the limits.
async fn stream_part(
    stage: &mut SkillStage,
    upload: &mut Upload,
    path: &str,
    size: u64,
) -> SessionResult<()> {
    let mut staged = stage.create_file(path, Some(size))?;
    let file = staged
        .try_clone_file()
        .map_err(|e| SessionError::Internal(format!("a staged file: {e}")))?;
    let mut file = tokio::fs::File::from_std(file);
    while let Some(chunk) = upload.chunk().await.map_err(|e| upload_error(&e))? {
        stage.account(&mut staged, chunk.len() as u64)?;
        file.write_all(&chunk)
            .await
            .map_err(|e| SessionError::Internal(format!("a staged file: {e}")))?;
    }
    file.flush()
        .await
        .map_err(|e| SessionError::Internal(format!("a staged file: {e}")))?;
    stage.finish_file(staged)?;
    Ok(())
}

/// Installs the skill uploaded as a `manifest` part followed by one
/// `files` part per manifest entry, in order; returns its name.
///
/// # Errors
/// 422 for a malformed or hostile manifest, parts that do not match it,
/// or a `SKILL.md` without usable front matter; 413 over the limits; 409
/// for a name taken; past the skill-install time limit, 408 while the
/// parts were arriving and 503 otherwise.
pub async fn upload_skill(
    state: &Engine,
    ws: &SessionWorkspace,
    mut upload: Upload,
) -> SessionResult<String> {
    let deadline = InstallDeadline::start(state);
    let limits = SkillLimits::default();
    let manifest = deadline
        .run(first_part(&mut upload))
        .await
        .map_err(|e| e.client_too_slow())??;
    check_manifest(&manifest, &limits)?;

    let _turn = deadline
        .run(install_turn(&ws.session.user_id))
        .await
        .map_err(|e| e.unavailable())??;
    let staging = Staging::new(state)?;
    let mut stage = SkillStage::new(&staging.dir.join("skill"), limits)?;
    deadline
        .run(receive_parts(&mut stage, &mut upload, &manifest))
        .await
        .map_err(|e| e.client_too_slow())??;
    let workspace = Arc::clone(&ws.workspace);
    let agent_id = &ws.session.agent_id;
    deadline
        .run(async move {
            let (staging, staged) = blocking(move || Ok((staging, stage.finish()?))).await?;
            Ok(commit_skill(workspace, agent_id, staged, staging).await?)
        })
        .await
        .map_err(|e| e.unavailable())?
}

/// The `manifest` part, which comes first.
async fn first_part(upload: &mut Upload) -> SessionResult<UploadManifest> {
    let first = upload
        .next_part()
        .await
        .map_err(|e| upload_error(&e))?
        .ok_or_else(|| SessionError::Unprocessable("The upload is empty.".to_owned()))?;
    if first.name.as_deref() != Some("manifest") {
        return Err(SessionError::Unprocessable(
            "The first part must be the manifest.".to_owned(),
        ));
    }
    read_manifest(upload).await
}

/// Streams the `files` parts, one per manifest entry in order, into the
/// stage.
async fn receive_parts(
    stage: &mut SkillStage,
    upload: &mut Upload,
    manifest: &UploadManifest,
) -> SessionResult<()> {
    let mut sent = 0;
    while let Some(part) = upload.next_part().await.map_err(|e| upload_error(&e))? {
        if part.name.as_deref() != Some("files") {
            return Err(SessionError::Unprocessable(format!(
                "Unexpected part {:?}: only `manifest` and `files` are accepted.",
                part.name.as_deref().unwrap_or_default()
            )));
        }
        let Some(entry) = manifest.entries.get(sent) else {
            return Err(SessionError::Unprocessable(format!(
                "The manifest lists {} files but more were sent.",
                manifest.entries.len()
            )));
        };
        stream_part(stage, upload, &entry.path, entry.size).await?;
        sent += 1;
    }
    if sent != manifest.entries.len() {
        return Err(SessionError::Unprocessable(format!(
            "The manifest lists {} files but {sent} were sent.",
            manifest.entries.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::UploadEntry;

    fn manifest(entries: &[(&str, u64)]) -> UploadManifest {
        UploadManifest {
            entries: entries
                .iter()
                .map(|(p, s)| UploadEntry {
                    path: (*p).to_owned(),
                    size: *s,
                })
                .collect(),
        }
    }

    #[test]
    fn manifests_are_checked_like_agentscope_does() {
        let limits = SkillLimits::default();
        assert!(
            check_manifest(&manifest(&[("s/SKILL.md", 10), ("s/a/b.txt", 1)]), &limits).is_ok()
        );
        for (entries, too_large) in [
            (vec![], false),
            (vec![("SKILL.md", 10)], false),
            (vec![("s/SKILL.md", 10), ("t/x", 1)], false),
            (vec![("s/x", 10)], false),
            (vec![("s/SKILL.md", 10), ("s/../x", 1)], false),
            (vec![("/s/SKILL.md", 10)], false),
            (vec![("s/SKILL.md", 10), ("s//x", 1)], false),
            (vec![("s/SKILL.md", 1), ("s/SKILL.md", 1)], false),
            (vec![("s/SKILL.md", 11 << 20)], true),
            (
                vec![("s/SKILL.md", 9 << 20), ("s/a", 9 << 20), ("s/b", 9 << 20)],
                true,
            ),
        ] {
            let result = check_manifest(&manifest(&entries), &limits);
            match result {
                Err(SessionError::TooLarge(_)) => assert!(too_large, "{entries:?}"),
                Err(SessionError::Unprocessable(_)) => assert!(!too_large, "{entries:?}"),
                other => panic!("{entries:?}: {other:?}"),
            }
        }
        let many: Vec<(String, u64)> = (0..300).map(|i| (format!("s/{i}"), 1)).collect();
        let many: Vec<(&str, u64)> = many.iter().map(|(p, s)| (p.as_str(), *s)).collect();
        assert!(matches!(
            check_manifest(&manifest(&many), &limits),
            Err(SessionError::TooLarge(_))
        ));
    }
}
