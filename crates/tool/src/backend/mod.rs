//! Where the built-in tools act: the [`ExecBackend`] trait and the
//! [`LocalBackend`] on this machine's file system and processes.
//!
//! A sandbox implements the same trait; the tools do not know the
//! difference. It can reuse the searches ([`search_glob`],
//! [`search_grep`]) and the process runner ([`run_process`]).

mod file;
mod local;
mod process;
mod search;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

pub use local::LocalBackend;
pub use process::{pass_data_fd, run_process};
pub use search::{GrepOpened, glob as search_glob, grep as search_grep};

/// What a backend knows about a path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileMeta {
    /// Size in bytes.
    pub len: u64,
    /// Modification time in seconds since the epoch (0 when unknown).
    pub modified: f64,
    /// Whether the path is a directory.
    pub is_dir: bool,
}

impl FileMeta {
    /// What `meta` says of a file.
    #[must_use]
    pub fn of(meta: &std::fs::Metadata) -> Self {
        Self {
            len: meta.len(),
            modified: local::mtime_of(meta),
            is_dir: meta.is_dir(),
        }
    }
}

/// A shell command to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecRequest {
    /// The command line, run with `bash -c`.
    pub command: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// Wall-clock limit; the whole process group is killed after it.
    pub timeout: Duration,
    /// How many bytes of combined stdout/stderr to keep.
    pub max_output: usize,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutput {
    /// The exit code; `None` when killed by a signal (timeout, cancel, ...).
    pub exit_code: Option<i32>,
    /// The first `max_output` bytes of stdout and stderr, interleaved as
    /// they arrived.
    pub output: Vec<u8>,
    /// How many output bytes the command produced in total.
    pub total_bytes: u64,
    /// Whether the time limit was hit.
    pub timed_out: bool,
    /// Whether the call was cancelled.
    pub cancelled: bool,
}

impl ExecOutput {
    /// Whether output was dropped because of the cap.
    #[must_use]
    pub fn truncated(&self) -> bool {
        self.total_bytes > self.output.len() as u64
    }
}

/// A file-name search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobRequest {
    /// A glob such as `**/*.rs`, matched against paths relative to `root`.
    pub pattern: String,
    /// The directory searched.
    pub root: PathBuf,
}

/// One file found by a glob search.
#[derive(Debug, Clone, PartialEq)]
pub struct GlobMatch {
    /// The absolute path.
    pub path: PathBuf,
    /// Modification time in seconds since the epoch.
    pub modified: f64,
}

/// What a content search reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GrepMode {
    /// Matching lines (with context lines).
    Content,
    /// Only the names of files with a match.
    #[default]
    FilesWithMatches,
    /// The number of matching lines per file.
    Count,
}

/// A content search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepRequest {
    /// The regular expression (Rust `regex` syntax, as ripgrep).
    pub pattern: String,
    /// A file or a directory to search.
    pub root: PathBuf,
    /// What to report.
    pub mode: GrepMode,
    /// Only files whose path matches this glob.
    pub glob: Option<String>,
    /// Only files of this ripgrep file type (`rust`, `py`, ...).
    pub file_type: Option<String>,
    /// Context lines before each match (content mode).
    pub before: usize,
    /// Context lines after each match (content mode).
    pub after: usize,
    /// Prefix content lines with their line numbers.
    pub line_numbers: bool,
    /// Match case-insensitively.
    pub case_insensitive: bool,
    /// Let matches span lines (`.` matches newlines too).
    pub multiline: bool,
    /// Stop after this many output entries (lines, files or counts).
    pub max_entries: usize,
}

/// The result of a content search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrepOutput {
    /// Output entries: `path:line:text` / `path-line-text` lines in content
    /// mode, paths for files-with-matches, `path:count` in count mode.
    pub entries: Vec<String>,
    /// Whether `max_entries` cut the output short.
    pub truncated: bool,
    /// How many files had a match.
    pub files: usize,
    /// How many matching lines were found in total (content and count mode;
    /// may stop counting once truncated).
    pub matches: u64,
}

/// File system and process access for the built-in tools.
///
/// Methods return boxed futures so tools hold an `Arc<dyn ExecBackend>`.
/// Every method reports problems as [`io::Error`]s with a clear message;
/// none may panic or hang beyond the limits in its request.
pub trait ExecBackend: Send + Sync + fmt::Debug {
    /// Metadata of `path`.
    ///
    /// # Errors
    ///
    /// The path does not exist, is not reachable, or is outside what the
    /// backend lets tools touch (`PermissionDenied`).
    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileMeta>>;

    /// The bytes of the regular file at `path`, at most `max_bytes`.
    ///
    /// Must not hang or read without end on a FIFO, a device or a file
    /// whose reported size is wrong (`/proc`).
    ///
    /// # Errors
    ///
    /// As [`metadata`](Self::metadata); `FileTooLarge` when the file holds
    /// more than `max_bytes`; `IsADirectory` for a directory;
    /// `InvalidInput` for anything else that is not a regular file (a
    /// FIFO, a socket, a device), with a message naming what it is.
    fn read<'a>(&'a self, path: &'a Path, max_bytes: u64) -> BoxFuture<'a, io::Result<Vec<u8>>>;

    /// Writes `data` to `path`, creating missing parent directories.
    ///
    /// # Errors
    ///
    /// The file cannot be written or is outside the allowed area;
    /// `IsADirectory` for a directory; `InvalidInput`, before anything is
    /// written and without blocking, for anything else that is not a
    /// regular file (a FIFO, a socket, a device).
    fn write<'a>(&'a self, path: &'a Path, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>>;

    /// Runs a shell command. A timeout or a cancellation is not an error:
    /// the process group is killed and the output so far is returned.
    ///
    /// # Errors
    ///
    /// The command could not be started.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future kills the process group without reporting;
    /// cancel `cancel` instead to kill it and get the partial output.
    fn exec(
        &self,
        request: ExecRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, io::Result<ExecOutput>>;

    /// Files under `request.root` matching the glob, newest first,
    /// respecting ignore files.
    ///
    /// # Errors
    ///
    /// An invalid glob (`InvalidInput`) or an unreadable root.
    fn glob(&self, request: GlobRequest) -> BoxFuture<'_, io::Result<Vec<GlobMatch>>>;

    /// Searches file contents, respecting ignore files, skipping binary
    /// files.
    ///
    /// # Errors
    ///
    /// An invalid regex, glob or file type (`InvalidInput`) or an
    /// unreadable root.
    fn grep(&self, request: GrepRequest) -> BoxFuture<'_, io::Result<GrepOutput>>;
}
