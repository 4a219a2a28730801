//! [`ConfinedDir`]: file operations that cannot leave one directory.
//!
//! Every path is resolved by the kernel relative to an open handle of the
//! directory with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: a `..`
//! or a symbolic link (absolute, or relative and climbing out) that would
//! lead outside makes the call fail instead of following it, and there is
//! no window between checking a path and using it. This is what lets the
//! server touch a directory that a sandboxed tenant can rearrange at will
//! (swap a directory for a link to `/` while the server writes, say).
//!
//! The operations are blocking; async callers run them on a blocking
//! thread. Error messages name paths as `shown/rel` (e.g.
//! `/workspace/notes.txt`), never the host path of the directory.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// How every path is resolved: beneath the directory, no `/proc` magic
/// links.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

/// A directory whose handle every operation starts from.
///
/// Cheap to clone (the handle is shared).
#[derive(Debug, Clone)]
pub struct ConfinedDir {
    fd: Arc<OwnedFd>,
    shown: PathBuf,
    owner: Option<(u32, u32)>,
}

/// What kind of entry a listing found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (never followed by a listing).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

impl ConfinedDir {
    /// Opens (creating it and its parents when missing) the directory at
    /// `host`; messages will call it `shown`.
    ///
    /// # Errors
    /// The directory cannot be created or opened, or `host` is not a
    /// directory.
    pub fn open(host: &Path, shown: impl Into<PathBuf>) -> io::Result<Self> {
        std::fs::create_dir_all(host)?;
        let fd = rustix::fs::open(
            host,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Self {
            fd: Arc::new(fd),
            shown: shown.into(),
            owner: None,
        })
    }

    /// Gives what this handle creates (directories, files) to `uid:gid`
    /// (when the server, as root, works for a sandbox that runs as another
    /// user).
    #[must_use]
    pub fn with_owner(mut self, owner: (u32, u32)) -> Self {
        self.owner = Some(owner);
        self
    }

    /// Hands a file or directory this handle created to its owner.
    fn own(&self, fd: &impl AsFd, rel: &Path) -> io::Result<()> {
        match self.owner {
            Some((uid, gid)) => std::os::unix::fs::fchown(fd, Some(uid), Some(gid)).map_err(|e| {
                io::Error::new(e.kind(), format!("{}: {e}", self.display(rel).display()))
            }),
            None => Ok(()),
        }
    }

    /// The name of the directory in messages.
    #[must_use]
    pub fn shown(&self) -> &Path {
        &self.shown
    }

    /// `rel` as messages show it.
    #[must_use]
    pub fn display(&self, rel: &Path) -> PathBuf {
        if rel.as_os_str().is_empty() {
            self.shown.clone()
        } else {
            self.shown.join(rel)
        }
    }

    /// Turns a kernel error into one that names the path as shown, and
    /// says "outside" for an escape.
    fn fail(&self, rel: &Path, errno: Errno) -> io::Error {
        let shown = self.display(rel);
        if errno == Errno::XDEV {
            return io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is outside the workspace {} (after following links)",
                    shown.display(),
                    self.shown.display()
                ),
            );
        }
        let base = io::Error::from(errno);
        io::Error::new(base.kind(), format!("{}: {base}", shown.display()))
    }

    fn at(&self, rel: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        open_beneath(self.fd.as_fd(), rel, flags, mode).map_err(|e| self.fail(rel, e))
    }

    /// Metadata of `rel` (links followed, within the directory).
    ///
    /// # Errors
    /// Missing, unreachable or outside.
    pub fn metadata(&self, rel: &Path) -> io::Result<std::fs::Metadata> {
        let fd = self.at(rel, OFlags::PATH, Mode::empty())?;
        File::from(fd).metadata()
    }

    /// The bytes of the regular file `rel`, at most `max_bytes`: a file
    /// that turns out longer while being read is refused too.
    ///
    /// # Errors
    /// `IsADirectory`; `InvalidInput` for a FIFO, socket or device;
    /// `FileTooLarge` beyond `max_bytes`; missing or outside.
    pub fn read(&self, rel: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
        let fd = self.at(
            rel,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::empty(),
        )?;
        let file = File::from(fd);
        let meta = file.metadata()?;
        self.require_file(rel, &meta)?;
        if meta.len() > max_bytes {
            return Err(too_large(&self.display(rel), meta.len(), max_bytes));
        }
        let mut data = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut data)?;
        if data.len() as u64 > max_bytes {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!(
                    "{} grew beyond {max_bytes} bytes while reading",
                    self.display(rel).display()
                ),
            ));
        }
        Ok(data)
    }

    fn require_file(&self, rel: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
        if meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("{} is a directory", self.display(rel).display()),
            ));
        }
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is not a regular file (a FIFO, socket or device)",
                    self.display(rel).display()
                ),
            ));
        }
        Ok(())
    }

    /// Writes `data` to `rel` (replacing its contents), creating missing
    /// parent directories.
    ///
    /// # Errors
    /// Outside, not a regular file, or the write fails.
    pub fn write(&self, rel: &Path, data: &[u8]) -> io::Result<()> {
        self.write_with(rel, data, OFlags::TRUNC)
    }

    /// Appends `data` to `rel`, creating it and missing parents.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub fn append(&self, rel: &Path, data: &[u8]) -> io::Result<()> {
        self.open_append(rel)?
            .write_all(data)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.display(rel).display())))
    }

    /// Opens the regular file `rel` for reading and appending, creating it
    /// and missing parents.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub fn open_append(&self, rel: &Path) -> io::Result<File> {
        self.open_writable(rel, OFlags::RDWR | OFlags::APPEND)
    }

    fn write_with(&self, rel: &Path, data: &[u8], mode_flag: OFlags) -> io::Result<()> {
        self.open_writable(rel, OFlags::WRONLY | mode_flag)?
            .write_all(data)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.display(rel).display())))
    }

    fn open_writable(&self, rel: &Path, flags: OFlags) -> io::Result<File> {
        if let Some(parent) = rel.parent() {
            self.create_dir_all(parent)?;
        }
        let fd = self.at(
            rel,
            flags | OFlags::CREATE | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::from_raw_mode(0o644),
        )?;
        let file = File::from(fd);
        self.require_file(rel, &file.metadata()?)?;
        self.own(&file, rel)?;
        Ok(file)
    }

    /// Writes `data` to a new file beside `rel` and renames it over `rel`,
    /// so readers see the old or the new contents, never a part.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub fn write_atomic(&self, rel: &Path, data: &[u8]) -> io::Result<()> {
        let (parent, name) = split(rel)?;
        self.create_dir_all(parent)?;
        let dir = self.at(parent, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())?;
        let tmp = format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            uuid::Uuid::new_v4().simple()
        );
        let fd = open_beneath(
            dir.as_fd(),
            Path::new(&tmp),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW,
            Mode::from_raw_mode(0o644),
        )
        .map_err(|e| self.fail(rel, e))?;
        let mut file = File::from(fd);
        let written = self.own(&file, rel).and_then(|()| file.write_all(data));
        let renamed = written.and_then(|()| {
            rustix::fs::renameat(&dir, tmp.as_str(), &dir, name).map_err(|e| self.fail(rel, e))
        });
        if renamed.is_err() {
            let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
        }
        renamed
    }

    /// Creates `rel` and its missing parents as directories.
    ///
    /// # Errors
    /// A component exists and is not a directory, or leads outside.
    pub fn create_dir_all(&self, rel: &Path) -> io::Result<()> {
        let mut done = PathBuf::new();
        for component in rel.components() {
            let Component::Normal(name) = component else {
                if matches!(component, Component::CurDir) {
                    continue;
                }
                return Err(self.fail(rel, Errno::XDEV));
            };
            let parent = self.at(&done, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())?;
            done.push(name);
            match rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(0o755)) {
                Ok(()) => {
                    if self.owner.is_some() {
                        let made =
                            self.at(&done, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())?;
                        self.own(&made, &done)?;
                    }
                }
                Err(Errno::EXIST) => {}
                Err(e) => return Err(self.fail(&done, e)),
            }
        }
        // Proves the whole chain is a directory inside.
        self.at(rel, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())
            .map(drop)
    }

    /// Removes `rel` — a file, a link (not what it points to) or a whole
    /// directory tree; a missing `rel` is not an error.
    ///
    /// # Errors
    /// Something in the tree cannot be removed, or `rel` is outside.
    pub fn remove_all(&self, rel: &Path) -> io::Result<()> {
        let (parent, name) = split(rel)?;
        let dir = match self.at(parent, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        match remove_tree(dir.as_fd(), Path::new(name), 0) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(self.fail(rel, e)),
        }
    }

    /// The entries of directory `rel` (names and kinds, links not
    /// followed), sorted by name; a missing directory lists as empty.
    ///
    /// # Errors
    /// `rel` is not a directory, or outside.
    pub fn list(&self, rel: &Path) -> io::Result<Vec<(String, EntryKind)>> {
        self.list_at_most(rel, usize::MAX)
            .map(|(entries, _)| entries)
    }

    /// As [`list`](Self::list), reading at most `max` entries (which ones,
    /// when there are more, is the directory's order); the flag says
    /// whether more were left unread. A directory of millions of entries
    /// costs no more than `max` of them.
    ///
    /// # Errors
    /// As [`list`](Self::list).
    pub fn list_at_most(
        &self,
        rel: &Path,
        max: usize,
    ) -> io::Result<(Vec<(String, EntryKind)>, bool)> {
        let fd = match self.at(rel, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), false)),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        let mut more = false;
        let dir = Dir::read_from(&fd).map_err(|e| self.fail(rel, e))?;
        for entry in dir {
            let entry = entry.map_err(|e| self.fail(rel, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "." || name == ".." {
                continue;
            }
            if out.len() == max {
                more = true;
                break;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    rustix::fs::statat(&fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                        .map(|st| kind_of(FileType::from_raw_mode(st.st_mode)))
                        .unwrap_or(EntryKind::Other)
                }
                other => kind_of(other),
            };
            out.push((name, kind));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok((out, more))
    }

    /// A handle of directory `rel` as a new confined directory (messages
    /// show it as `shown/rel`).
    ///
    /// # Errors
    /// Missing, not a directory, or outside.
    pub fn subdir(&self, rel: &Path) -> io::Result<Self> {
        let fd = self.at(rel, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())?;
        Ok(Self {
            fd: Arc::new(fd),
            shown: self.display(rel),
            owner: self.owner,
        })
    }

    /// An open handle of directory `rel` (for a walk through handles).
    ///
    /// # Errors
    /// Missing, not a directory, or outside.
    pub fn open_dir(&self, rel: &Path) -> io::Result<OwnedFd> {
        self.at(rel, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
    }

    /// The regular file `rel`, opened for reading.
    ///
    /// # Errors
    /// As [`read`](Self::read), but for the size.
    pub fn open_file(&self, rel: &Path) -> io::Result<File> {
        let fd = self.at(
            rel,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::empty(),
        )?;
        let file = File::from(fd);
        self.require_file(rel, &file.metadata()?)?;
        Ok(file)
    }
}

fn kind_of(kind: FileType) -> EntryKind {
    match kind {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Dir,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Other,
    }
}

fn too_large(shown: &Path, len: u64, max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!(
            "{} is {len} bytes, more than the limit of {max} bytes",
            shown.display()
        ),
    )
}

/// `rel` split into its parent and its last name.
fn split(rel: &Path) -> io::Result<(&Path, &OsStr)> {
    match (rel.parent(), rel.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", rel.display()),
        )),
    }
}

fn open_beneath(
    dir: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    loop {
        match rustix::fs::openat2(dir, rel, flags | OFlags::CLOEXEC, mode, RESOLVE) {
            // The kernel asks for a retry when a rename raced the lookup.
            Err(Errno::AGAIN | Errno::INTR) => {}
            other => return other,
        }
    }
}

/// How deep [`remove_tree`] goes (a tree a tenant built can be deeper
/// than the stack or the open-file limit allow).
const MAX_REMOVE_DEPTH: usize = 256;

/// Removes `name` in `dir` recursively without following links.
fn remove_tree(dir: BorrowedFd<'_>, name: &Path, depth: usize) -> Result<(), Errno> {
    if depth > MAX_REMOVE_DEPTH {
        return Err(Errno::LOOP);
    }
    let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        return rustix::fs::unlinkat(dir, name, AtFlags::empty());
    }
    let sub = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut names = Vec::new();
    for entry in Dir::read_from(&sub)? {
        let entry = entry?;
        let entry_name = entry.file_name().to_bytes();
        if entry_name != b"." && entry_name != b".." {
            names.push(PathBuf::from(OsStr::from_bytes(entry_name)));
        }
    }
    for entry in names {
        remove_tree(sub.as_fd(), &entry, depth + 1)?;
    }
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
}

impl oxiscope_tool::OffloadFs for ConfinedDir {
    fn file_len(&self, rel: &Path) -> Option<u64> {
        self.metadata(rel)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len())
    }

    fn write_atomic(&self, rel: &Path, bytes: &[u8]) -> io::Result<()> {
        Self::write_atomic(self, rel, bytes)
    }

    fn open_append(&self, rel: &Path) -> io::Result<File> {
        Self::open_append(self, rel)
    }
}

#[cfg(test)]
#[path = "confined_tests.rs"]
mod tests;
