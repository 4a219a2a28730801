//! The backend on this machine.

use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{
    ExecBackend, ExecOutput, ExecRequest, FileMeta, GlobMatch, GlobRequest, GrepOutput,
    GrepRequest, file, process, search,
};

/// The local file system and processes.
///
/// By default every path is reachable (the permission engine decides what
/// a call may touch); [`with_roots`](Self::with_roots) confines file access
/// to some directories.
#[derive(Debug, Clone, Default)]
pub struct LocalBackend {
    roots: Option<Vec<PathBuf>>,
}

/// `path` with symbolic links resolved in its longest existing ancestor
/// (the rest, not yet created, appended as is).
async fn resolve_links(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut missing = Vec::new();
    loop {
        if let Ok(real) = tokio::fs::canonicalize(existing).await {
            return missing
                .iter()
                .rev()
                .fold(real, |acc: PathBuf, part| acc.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_owned());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

impl LocalBackend {
    /// A backend that can reach every path.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Confines file access to paths inside `roots`, after resolving `..`
    /// and symbolic links (a link inside a root that leads outside is
    /// refused).
    #[must_use]
    pub fn with_roots(mut self, roots: impl IntoIterator<Item = PathBuf>) -> Self {
        self.roots = Some(
            roots
                .into_iter()
                .map(|r| oxiscope_permission::normalise(&r))
                .collect(),
        );
        self
    }

    async fn check(&self, path: &Path) -> io::Result<()> {
        let Some(roots) = &self.roots else {
            return Ok(());
        };
        let normal = oxiscope_permission::normalise(path);
        let mut real_roots = Vec::with_capacity(roots.len());
        for root in roots {
            real_roots.push(resolve_links(root).await);
        }
        let real = resolve_links(&normal).await;
        if oxiscope_permission::is_within(&normal, roots)
            && oxiscope_permission::is_within(&real, &real_roots)
        {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is outside the directories this tool may access",
                    path.display()
                ),
            ))
        }
    }
}

pub(crate) fn mtime_of(meta: &std::fs::Metadata) -> f64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64())
}

impl ExecBackend for LocalBackend {
    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileMeta>> {
        async move {
            self.check(path).await?;
            let meta = tokio::fs::metadata(path).await?;
            Ok(FileMeta::of(&meta))
        }
        .boxed()
    }

    fn read<'a>(&'a self, path: &'a Path, max_bytes: u64) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        async move {
            self.check(path).await?;
            let path = path.to_path_buf();
            blocking(move || file::read_capped(&path, max_bytes)).await
        }
        .boxed()
    }

    fn write<'a>(&'a self, path: &'a Path, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        async move {
            self.check(path).await?;
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent).await?;
            }
            let (path, data) = (path.to_path_buf(), data.to_vec());
            blocking(move || file::write_regular(&path, &data)).await
        }
        .boxed()
    }

    fn exec(
        &self,
        request: ExecRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, io::Result<ExecOutput>> {
        let mut command = tokio::process::Command::new("bash");
        command
            .arg("-c")
            .arg(&request.command)
            .current_dir(&request.cwd);
        process::run_process(command, request.timeout, request.max_output, cancel).boxed()
    }

    fn glob(&self, request: GlobRequest) -> BoxFuture<'_, io::Result<Vec<GlobMatch>>> {
        async move {
            // An absolute pattern is searched from its own leading
            // directory, not from `root`.
            self.check(&search::glob_root(&request)).await?;
            blocking(move || search::glob(&request)).await
        }
        .boxed()
    }

    fn grep(&self, request: GrepRequest) -> BoxFuture<'_, io::Result<GrepOutput>> {
        async move {
            self.check(&request.root).await?;
            blocking(move || search::grep(&request)).await
        }
        .boxed()
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| io::Error::other(format!("file system task failed: {e}")))?
}
