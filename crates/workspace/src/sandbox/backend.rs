//! [`SandboxBackend`]: the built-in tools' files and processes in a
//! sandboxed workspace.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oxiscope_tool::{
    ExecBackend, ExecOutput, ExecRequest, FileMeta, GlobMatch, GlobRequest, GrepOpened, GrepOutput,
    GrepRequest,
};
use tokio_util::sync::CancellationToken;

use super::{Launch, walk};
use crate::confined::ConfinedDir;

/// Files through a [`ConfinedDir`] of the workspace, commands through the
/// sandbox. Paths are the sandbox's: `/workspace/...` (bubblewrap; the
/// host directory itself under Landlock), or relative to it.
#[derive(Debug, Clone)]
pub struct SandboxBackend {
    root: ConfinedDir,
    launch: Launch,
}

/// `path` as an absolute, normalised path inside the sandbox, if it is
/// under `root` (where the sandbox shows the workspace).
///
/// # Errors
/// `PermissionDenied` naming the path, when it is outside.
pub(crate) fn inside(root: &Path, path: &Path) -> io::Result<PathBuf> {
    let absolute = root.join(path);
    let normal = oxiscope_permission::normalise(&absolute);
    if normal.starts_with(root) {
        Ok(normal)
    } else {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is outside the workspace {}",
                path.display(),
                root.display()
            ),
        ))
    }
}

/// `path` relative to the workspace directory.
fn relative(root: &Path, path: &Path) -> io::Result<PathBuf> {
    let inside = inside(root, path)?;
    Ok(inside
        .strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_default())
}

impl SandboxBackend {
    pub(crate) fn new(root: ConfinedDir, launch: Launch) -> Self {
        Self { root, launch }
    }
}

/// Finds files whose path (relative to the root) matches a glob.
struct GlobVisitor {
    matcher: globset::GlobMatcher,
    shown: PathBuf,
    found: Vec<GlobMatch>,
}

impl walk::Visitor for GlobVisitor {
    fn wants(&self, _rel: &Path, _is_dir: bool) -> bool {
        true
    }

    fn file(&mut self, found: &walk::Found<'_>) -> bool {
        if self.matcher.is_match(found.rel) {
            self.found.push(GlobMatch {
                path: walk::shown(&self.shown, found.rel),
                modified: found.modified,
            });
        }
        true
    }
}

/// Searches every file it is handed.
struct GrepVisitor<'r> {
    search: GrepOpened<'r>,
    shown: PathBuf,
}

impl walk::Visitor for GrepVisitor<'_> {
    fn wants(&self, rel: &Path, is_dir: bool) -> bool {
        self.search.filter(rel, is_dir)
    }

    fn file(&mut self, found: &walk::Found<'_>) -> bool {
        let Some(file) = found.open() else {
            return true;
        };
        let name = walk::shown(&self.shown, found.rel);
        self.search.search(&name.to_string_lossy(), &file)
    }
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| io::Error::other(format!("file task failed: {e}")))?
}

impl ExecBackend for SandboxBackend {
    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileMeta>> {
        async move {
            let rel = relative(self.launch.shown(), path)?;
            let root = self.root.clone();
            let meta = blocking(move || root.metadata(&rel)).await?;
            Ok(FileMeta::of(&meta))
        }
        .boxed()
    }

    fn read<'a>(&'a self, path: &'a Path, max_bytes: u64) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        async move {
            let rel = relative(self.launch.shown(), path)?;
            let root = self.root.clone();
            blocking(move || root.read(&rel, max_bytes)).await
        }
        .boxed()
    }

    fn write<'a>(&'a self, path: &'a Path, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        async move {
            let rel = relative(self.launch.shown(), path)?;
            let root = self.root.clone();
            let data = data.to_vec();
            blocking(move || root.write(&rel, &data)).await
        }
        .boxed()
    }

    fn exec(
        &self,
        request: ExecRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, io::Result<ExecOutput>> {
        async move {
            let cwd = inside(self.launch.shown(), &request.cwd)?;
            let rel = relative(self.launch.shown(), &cwd)?;
            let root = self.root.clone();
            let is_dir = blocking(move || root.metadata(&rel).map(|m| m.is_dir())).await?;
            if !is_dir {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} is not a directory", cwd.display()),
                ));
            }
            let command = self
                .launch
                .command(
                    &cwd,
                    &BTreeMap::new(),
                    "/bin/bash",
                    &["-c".to_owned(), request.command],
                )
                .await?;
            oxiscope_tool::run_process(command, request.timeout, request.max_output, cancel).await
        }
        .boxed()
    }

    fn glob(&self, request: GlobRequest) -> BoxFuture<'_, io::Result<Vec<GlobMatch>>> {
        async move {
            // An absolute pattern names its own base directory.
            let (root, pattern) = if Path::new(&request.pattern).is_absolute() {
                let rest = relative(self.launch.shown(), Path::new(&request.pattern))?;
                (
                    self.launch.shown().to_path_buf(),
                    rest.to_string_lossy().into_owned(),
                )
            } else {
                (request.root.clone(), request.pattern.clone())
            };
            let pattern = pattern.trim_start_matches("./").to_owned();
            let matcher = globset::GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("invalid glob pattern `{}`: {e}", request.pattern),
                    )
                })?
                .compile_matcher();
            let rel = relative(self.launch.shown(), &root)?;
            let shown = inside(self.launch.shown(), &root)?;
            let dir = self.root.clone();
            blocking(move || {
                let fd = dir.open_dir(&rel)?;
                let mut visitor = GlobVisitor {
                    matcher,
                    shown,
                    found: Vec::new(),
                };
                walk::walk(&fd, &mut visitor);
                let mut found = visitor.found;
                found.sort_by(|a, b| {
                    b.modified
                        .total_cmp(&a.modified)
                        .then_with(|| a.path.cmp(&b.path))
                });
                Ok(found)
            })
            .await
        }
        .boxed()
    }

    fn grep(&self, request: GrepRequest) -> BoxFuture<'_, io::Result<GrepOutput>> {
        async move {
            // Checked before the walk: a bad regex or glob is the caller's.
            GrepOpened::new(&request)?;
            let rel = relative(self.launch.shown(), &request.root)?;
            let shown = inside(self.launch.shown(), &request.root)?;
            let dir = self.root.clone();
            blocking(move || {
                let mut search = GrepOpened::new(&request)?;
                if dir.metadata(&rel)?.is_dir() {
                    let fd = dir.open_dir(&rel)?;
                    let mut visitor = GrepVisitor { search, shown };
                    if walk::walk(&fd, &mut visitor) {
                        visitor.search.truncate();
                    }
                    Ok(visitor.search.finish())
                } else {
                    let file = dir.open_file(&rel)?;
                    search.search(&shown.to_string_lossy(), &file);
                    Ok(search.finish())
                }
            })
            .await
        }
        .boxed()
    }
}
