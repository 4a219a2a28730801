//! [`SandboxBackend`]: the built-in tools' files and processes in a
//! sandboxed workspace.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oxiscope_tool::{
    ExecBackend, ExecOutput, ExecRequest, FileMeta, GlobMatch, GlobRequest, GrepOutput, GrepRequest,
};
use tokio_util::sync::CancellationToken;

use super::Launch;
use super::bwrap::SANDBOX_ROOT;
use crate::confined::ConfinedDir;

/// Files through a [`ConfinedDir`] of the workspace, commands through
/// `bwrap`. Paths are the sandbox's: `/workspace/...`, or relative to it.
#[derive(Debug, Clone)]
pub struct SandboxBackend {
    root: ConfinedDir,
    launch: Launch,
}

/// `path` as an absolute, normalised path inside the sandbox, if it is
/// under [`SANDBOX_ROOT`].
///
/// # Errors
/// `PermissionDenied` naming the path, when it is outside.
pub(crate) fn inside(path: &Path) -> io::Result<PathBuf> {
    let absolute = Path::new(SANDBOX_ROOT).join(path);
    let normal = oxiscope_permission::normalise(&absolute);
    if normal.starts_with(SANDBOX_ROOT) {
        Ok(normal)
    } else {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is outside the workspace {SANDBOX_ROOT}", path.display()),
        ))
    }
}

/// `path` relative to the workspace directory.
fn relative(path: &Path) -> io::Result<PathBuf> {
    let inside = inside(path)?;
    Ok(inside
        .strip_prefix(SANDBOX_ROOT)
        .map(Path::to_path_buf)
        .unwrap_or_default())
}

/// Rewrites paths that start with the pinned handle's path to the
/// sandbox's name for that directory.
#[derive(Debug)]
struct Renamer {
    pinned: String,
    shown: String,
}

impl Renamer {
    fn path(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.pinned) {
            Ok(rest) if rest.as_os_str().is_empty() => PathBuf::from(&self.shown),
            Ok(rest) => Path::new(&self.shown).join(rest),
            Err(_) => path.to_path_buf(),
        }
    }

    fn line(&self, line: &str) -> String {
        match line.strip_prefix(&self.pinned) {
            Some(rest) => format!("{}{rest}", self.shown),
            None => line.to_owned(),
        }
    }

    fn error(&self, e: &io::Error) -> io::Error {
        io::Error::new(e.kind(), e.to_string().replace(&self.pinned, &self.shown))
    }
}

impl SandboxBackend {
    pub(crate) fn new(root: ConfinedDir, launch: Launch) -> Self {
        Self { root, launch }
    }

    /// Pins directory `dir` (sandbox path) for a path-based walk: the
    /// handle to keep alive, the path to walk, and how to name results.
    fn pin(&self, dir: &Path) -> io::Result<(OwnedFd, PathBuf, Renamer)> {
        let rel = relative(dir)?;
        let (fd, path) = self.root.pinned(&rel)?;
        let renamer = Renamer {
            pinned: path.to_string_lossy().into_owned(),
            shown: inside(dir)?.to_string_lossy().into_owned(),
        };
        Ok((fd, path, renamer))
    }

    /// A search root: a directory is pinned itself; a file is reached
    /// through its pinned directory, and must not be a link.
    fn search_root(&self, root: &Path) -> io::Result<(OwnedFd, PathBuf, Renamer)> {
        let rel = relative(root)?;
        if self.root.metadata(&rel)?.is_dir() {
            return self.pin(root);
        }
        let (Some(parent), Some(name)) = (
            inside(root)?.parent().map(Path::to_path_buf),
            rel.file_name().map(ToOwned::to_owned),
        ) else {
            return self.pin(root);
        };
        let (fd, path, renamer) = self.pin(&parent)?;
        let stat = rustix::fs::statat(&fd, name.as_os_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
            .map_err(io::Error::from)?;
        if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a regular file or directory", root.display()),
            ));
        }
        Ok((fd, path.join(name), renamer))
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
            let rel = relative(path)?;
            let root = self.root.clone();
            let meta = blocking(move || root.metadata(&rel)).await?;
            Ok(FileMeta {
                len: meta.len(),
                modified: meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0.0, |d| d.as_secs_f64()),
                is_dir: meta.is_dir(),
            })
        }
        .boxed()
    }

    fn read<'a>(&'a self, path: &'a Path, max_bytes: u64) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        async move {
            let rel = relative(path)?;
            let root = self.root.clone();
            blocking(move || root.read(&rel, max_bytes)).await
        }
        .boxed()
    }

    fn write<'a>(&'a self, path: &'a Path, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        async move {
            let rel = relative(path)?;
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
            let cwd = inside(&request.cwd)?;
            let rel = relative(&cwd)?;
            let root = self.root.clone();
            let is_dir = blocking(move || root.metadata(&rel).map(|m| m.is_dir())).await?;
            if !is_dir {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} is not a directory", cwd.display()),
                ));
            }
            let (program, args) = self.launch.command(
                &cwd,
                &BTreeMap::new(),
                "/bin/bash",
                &["-c".to_owned(), request.command],
            );
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            oxiscope_tool::run_process(command, request.timeout, request.max_output, cancel).await
        }
        .boxed()
    }

    fn glob(&self, request: GlobRequest) -> BoxFuture<'_, io::Result<Vec<GlobMatch>>> {
        async move {
            // An absolute pattern names its own base directory.
            let (root, pattern) = if Path::new(&request.pattern).is_absolute() {
                let rest = relative(Path::new(&request.pattern))?;
                (
                    PathBuf::from(SANDBOX_ROOT),
                    rest.to_string_lossy().into_owned(),
                )
            } else {
                (request.root.clone(), request.pattern.clone())
            };
            let (fd, path, renamer) = self.pin(&root)?;
            blocking(move || {
                let found = oxiscope_tool::search_glob(&GlobRequest {
                    pattern,
                    root: path,
                })
                .map_err(|e| renamer.error(&e))?;
                drop(fd);
                Ok(found
                    .into_iter()
                    .map(|m| GlobMatch {
                        path: renamer.path(&m.path),
                        modified: m.modified,
                    })
                    .collect())
            })
            .await
        }
        .boxed()
    }

    fn grep(&self, request: GrepRequest) -> BoxFuture<'_, io::Result<GrepOutput>> {
        async move {
            let (fd, path, renamer) = self.search_root(&request.root)?;
            blocking(move || {
                let mut output = oxiscope_tool::search_grep(&GrepRequest {
                    root: path,
                    ..request
                })
                .map_err(|e| renamer.error(&e))?;
                drop(fd);
                for entry in &mut output.entries {
                    *entry = renamer.line(entry);
                }
                Ok(output)
            })
            .await
        }
        .boxed()
    }
}
