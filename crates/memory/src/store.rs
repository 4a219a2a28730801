//! The memory directory as the middleware reads it: the `MEMORY.md` index
//! and the topic files with their front matter, through an
//! [`ExecBackend`], every path checked to lie inside the directory.
//!
//! Bad files never fail a reply: a file without front matter, larger than
//! the limit, not UTF-8, or unreachable (a symbolic link out of the
//! directory is refused by the confined backend, and the glob skips links)
//! is skipped with a warning.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use oxiscope_tool::{ExecBackend, GlobRequest};

use crate::frontmatter::{FrontMatter, parse_front_matter};
use crate::text::{cut_to_bytes, token_bytes};

/// The name of the index file.
pub const MEMORY_INDEX: &str = "MEMORY.md";

/// One memory file, as listed (front matter only).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryFile {
    /// The path relative to the memory directory (`user_profile.md`).
    pub filename: String,
    /// The full path.
    pub path: PathBuf,
    /// Its front matter.
    pub front: FrontMatter,
    /// Modification time in seconds since the epoch (0 when unknown).
    pub modified: f64,
}

/// Reads the memory directory; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct MemoryStore {
    dir: PathBuf,
    backend: Arc<dyn ExecBackend>,
    max_file_bytes: u64,
}

impl MemoryStore {
    pub(crate) fn new(dir: PathBuf, backend: Arc<dyn ExecBackend>, max_file_bytes: u64) -> Self {
        Self {
            dir,
            backend,
            max_file_bytes,
        }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn index_path(&self) -> PathBuf {
        self.dir.join(MEMORY_INDEX)
    }

    /// Creates an empty `MEMORY.md` when there is none (never replaces one).
    pub(crate) async fn ensure_layout(&self) {
        let path = self.index_path();
        match self.backend.metadata(&path).await {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                tracing::info!(path = %path.display(), "creating the memory index");
                if let Err(e) = self.backend.write(&path, b"").await {
                    tracing::warn!(path = %path.display(), error = %e, "cannot create the memory index");
                }
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot reach the memory index");
            }
        }
    }

    /// The index's text (invalid UTF-8 replaced), `None` when it cannot be
    /// read (logged).
    pub(crate) async fn read_index(&self) -> Option<String> {
        let path = self.index_path();
        match self.backend.read(&path, self.max_file_bytes).await {
            Ok(bytes) => Some(match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(e) => {
                    tracing::warn!(path = %path.display(), "the memory index is not UTF-8; \
                        invalid bytes are replaced");
                    String::from_utf8_lossy(e.as_bytes()).into_owned()
                }
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot read the memory index");
                None
            }
        }
    }

    /// The text of the memory file at `path` (inside the directory), or why
    /// it is skipped.
    pub(crate) async fn read_text(&self, path: &Path) -> Result<String, String> {
        let path = self
            .inside(path)
            .ok_or_else(|| format!("{} is outside the memory directory", path.display()))?;
        let bytes = self
            .backend
            .read(&path, self.max_file_bytes)
            .await
            .map_err(|e| e.to_string())?;
        String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", path.display()))
    }

    /// The topic files (every `*.md` below the directory but the index),
    /// newest first, at most `max_files`; front matter is looked for in
    /// the first `frontmatter_tokens` tokens.
    pub(crate) async fn list(
        &self,
        max_files: usize,
        frontmatter_tokens: usize,
    ) -> Vec<MemoryFile> {
        let request = GlobRequest {
            pattern: "**/*.md".to_owned(),
            root: self.dir.clone(),
        };
        let found = match self.backend.glob(request).await {
            Ok(found) => found,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                tracing::warn!(dir = %self.dir.display(), error = %e, "cannot list the memory directory");
                return Vec::new();
            }
        };
        let mut files = Vec::new();
        for hit in found {
            if files.len() >= max_files {
                break;
            }
            let Some(path) = self.inside(&hit.path) else {
                tracing::warn!(path = %hit.path.display(), "skipping a memory file outside the memory directory");
                continue;
            };
            let Some(filename) = relative_name(&self.dir, &path) else {
                continue;
            };
            if filename == MEMORY_INDEX {
                continue;
            }
            let text = match self.read_text(&path).await {
                Ok(text) => text,
                Err(reason) => {
                    tracing::warn!(path = %path.display(), %reason, "skipping a memory file");
                    continue;
                }
            };
            let head = cut_to_bytes(&text, token_bytes(frontmatter_tokens));
            match parse_front_matter(head) {
                Ok((front, _)) => files.push(MemoryFile {
                    filename,
                    path,
                    front,
                    modified: hit.modified,
                }),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "skipping a memory file");
                }
            }
        }
        files
    }

    /// `path` normalised, when it lies strictly inside the directory.
    fn inside(&self, path: &Path) -> Option<PathBuf> {
        let normal = oxiscope_permission::normalise(path);
        let dir = oxiscope_permission::normalise(&self.dir);
        (normal != dir && normal.starts_with(&dir)).then_some(normal)
    }
}

/// `path` relative to `dir`, with `/` separators.
fn relative_name(dir: &Path, path: &Path) -> Option<String> {
    let dir = oxiscope_permission::normalise(dir);
    let rel = path.strip_prefix(&dir).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}
