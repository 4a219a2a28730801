//! Walking a workspace through handles only, for Glob and Grep.
//!
//! Sandboxed code can swap a directory for a link to `/` while the server
//! walks (from a background process or an MCP server). A walk by path
//! would follow it; this one never names a path twice: each directory is
//! opened from its parent's handle with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS)` and `O_NOFOLLOW`, each file the same way, and a
//! swapped entry fails to open instead of leading out.
//!
//! Like ripgrep, hidden entries (a leading `.`) are skipped and
//! `.gitignore` files are respected. A walk is bounded: entries seen,
//! depth, and a deadline; what it did not finish is reported as truncated.

use std::fs::File;
use std::io::Read as _;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, ResolveFlags};

/// How entries below a handle are opened: beneath it, no link anywhere.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);
/// The most entries one walk looks at.
const MAX_ENTRIES: usize = 200_000;
/// The deepest directory a walk enters.
const MAX_DEPTH: usize = 64;
/// How long one walk may take.
const DEADLINE: Duration = Duration::from_secs(20);
/// The largest `.gitignore` read.
const MAX_IGNORE_FILE: u64 = 256 * 1024;

/// A regular file the walk found.
pub(crate) struct Found<'a> {
    /// Its path relative to the walk's root.
    pub(crate) rel: &'a Path,
    /// Its directory's handle.
    dir: BorrowedFd<'a>,
    /// Its name in the directory.
    name: &'a std::ffi::CStr,
    /// Its modification time in seconds since the epoch.
    pub(crate) modified: f64,
}

impl Found<'_> {
    /// Opens the file for reading (refused if it became anything but a
    /// regular file in the meantime).
    pub(crate) fn open(&self) -> Option<File> {
        let fd = open_child(
            self.dir,
            self.name,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
        )?;
        let file = File::from(fd);
        file.metadata().ok().filter(std::fs::Metadata::is_file)?;
        Some(file)
    }
}

/// What a walk reports back to its visitor.
pub(crate) trait Visitor {
    /// Whether to enter the directory `rel` (or consider the file `rel`).
    fn wants(&self, rel: &Path, is_dir: bool) -> bool;
    /// A regular file; `false` stops the walk.
    fn file(&mut self, found: &Found<'_>) -> bool;
}

/// Walks the directory behind `root` (its contents; the root's own name is
/// not matched). Returns whether the walk was cut short (entry cap,
/// deadline).
pub(crate) fn walk(root: &OwnedFd, visitor: &mut dyn Visitor) -> bool {
    let mut walk = Walk {
        seen: 0,
        deadline: Instant::now() + DEADLINE,
        truncated: false,
        ignores: Vec::new(),
    };
    walk.dir(root.as_fd(), Path::new(""), 0, visitor);
    walk.truncated
}

struct Walk {
    seen: usize,
    deadline: Instant,
    truncated: bool,
    ignores: Vec<Gitignore>,
}

/// Opens `name` below `dir`, no link followed.
fn open_child(dir: BorrowedFd<'_>, name: &std::ffi::CStr, flags: OFlags) -> Option<OwnedFd> {
    loop {
        match rustix::fs::openat2(
            dir,
            name,
            flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            RESOLVE,
        ) {
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {}
            other => return other.ok(),
        }
    }
}

impl Walk {
    /// Walks `dir` (at `rel`); `false` when the walk must stop.
    fn dir(
        &mut self,
        dir: BorrowedFd<'_>,
        rel: &Path,
        depth: usize,
        visitor: &mut dyn Visitor,
    ) -> bool {
        let pushed = self.push_ignore(dir, rel);
        let go_on = self.entries(dir, rel, depth, visitor);
        if pushed {
            self.ignores.pop();
        }
        go_on
    }

    fn entries(
        &mut self,
        dir: BorrowedFd<'_>,
        rel: &Path,
        depth: usize,
        visitor: &mut dyn Visitor,
    ) -> bool {
        let Ok(listing) = Dir::read_from(dir) else {
            return true;
        };
        let mut names = Vec::new();
        for entry in listing {
            let Ok(entry) = entry else { break };
            let bytes = entry.file_name().to_bytes();
            if bytes.first() == Some(&b'.') {
                continue;
            }
            self.seen += 1;
            if self.seen > MAX_ENTRIES || Instant::now() > self.deadline {
                self.truncated = true;
                return false;
            }
            names.push((entry.file_name().to_owned(), entry.file_type()));
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, kind) in names {
            let child = rel.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
            let Ok(stat) = rustix::fs::statat(dir, &*name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            let kind = match kind {
                FileType::Unknown => FileType::from_raw_mode(stat.st_mode),
                known => known,
            };
            match kind {
                FileType::Directory => {
                    if depth >= MAX_DEPTH
                        || self.ignored(&child, true)
                        || !visitor.wants(&child, true)
                    {
                        continue;
                    }
                    let Some(sub) = open_child(dir, &name, OFlags::RDONLY | OFlags::DIRECTORY)
                    else {
                        continue;
                    };
                    if !self.dir(sub.as_fd(), &child, depth + 1, visitor) {
                        return false;
                    }
                }
                FileType::RegularFile => {
                    if self.ignored(&child, false) || !visitor.wants(&child, false) {
                        continue;
                    }
                    let found = Found {
                        rel: &child,
                        dir,
                        name: &name,
                        modified: stat.st_mtime as f64 + f64::from(stat.st_mtime_nsec as u32) / 1e9,
                    };
                    if !visitor.file(&found) {
                        return false;
                    }
                }
                // Links, FIFOs, sockets, devices: never followed or read.
                _ => {}
            }
        }
        true
    }

    /// Reads `dir`'s `.gitignore`, if any; whether one was pushed.
    fn push_ignore(&mut self, dir: BorrowedFd<'_>, rel: &Path) -> bool {
        let Some(fd) = open_child(dir, c".gitignore", OFlags::RDONLY | OFlags::NONBLOCK) else {
            return false;
        };
        let file = File::from(fd);
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return false;
        }
        let mut text = String::new();
        if file
            .take(MAX_IGNORE_FILE)
            .read_to_string(&mut text)
            .is_err()
        {
            return false;
        }
        let mut builder = GitignoreBuilder::new(rel);
        for line in text.lines() {
            let _ = builder.add_line(None, line);
        }
        match builder.build() {
            Ok(ignore) => {
                self.ignores.push(ignore);
                true
            }
            Err(_) => false,
        }
    }

    /// Whether the closest `.gitignore` with an opinion ignores `rel`.
    fn ignored(&self, rel: &Path, is_dir: bool) -> bool {
        for ignore in self.ignores.iter().rev() {
            let matched = ignore.matched(rel, is_dir);
            if matched.is_ignore() {
                return true;
            }
            if matched.is_whitelist() {
                return false;
            }
        }
        false
    }
}

/// `rel` below `shown` (the sandbox's name of the walk's root).
pub(crate) fn shown(shown: &Path, rel: &Path) -> PathBuf {
    if rel.as_os_str().is_empty() {
        shown.to_path_buf()
    } else {
        shown.join(rel)
    }
}
