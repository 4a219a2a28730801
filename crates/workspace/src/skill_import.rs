//! Skills from untrusted sources — an uploaded folder, a `.tar.gz` from a
//! hub, a directory inside a tenant's workspace — staged into a private
//! host directory with every limit checked while the bytes stream, so the
//! result can be handed to [`Workspace::add_skill`](crate::Workspace::add_skill),
//! whose `source` is trusted.
//!
//! What a stage refuses: absolute paths, `..`, `.` and empty components,
//! NUL bytes, paths deeper than the limit, the same path twice, links,
//! devices and FIFOs, more files or bytes than the limits allow, and a
//! result without a usable `SKILL.md` (at the top, or in the single
//! top-level directory). Everything is written through a [`ConfinedDir`]
//! of the staging directory, so even a path this module let through could
//! not land outside it.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use oxiscope_tool::Skill;

use crate::confined::{ConfinedDir, EntryKind};
use crate::error::{Error, Result, validate_id};

/// The skill file of a skill directory.
const SKILL_FILE: &str = "SKILL.md";
/// The largest `SKILL.md` accepted (the loader's own limit).
const MAX_SKILL_FILE: u64 = 256 * 1024;
/// Where entries are extracted before the skill's root is known.
const EXTRACT_DIR: &str = ".extract";
/// The longest path component (a file system's `NAME_MAX`).
const MAX_NAME: usize = 255;
/// Archive bytes allowed beyond the file limits, for tar headers,
/// padding and directory entries.
const ARCHIVE_SLACK_PER_ENTRY: u64 = 3 * 512;

/// How much one staged skill may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkillLimits {
    /// The most entries (files and directories).
    pub max_files: usize,
    /// The largest file, in bytes.
    pub max_file_bytes: u64,
    /// All files together, in bytes.
    pub max_total_bytes: u64,
    /// The most components a path may have (`a/b/SKILL.md` has 3).
    pub max_depth: usize,
}

impl Default for SkillLimits {
    /// 256 entries, 10 MiB per file, 20 MiB in all, 8 levels.
    fn default() -> Self {
        Self {
            max_files: 256,
            max_file_bytes: 10 << 20,
            max_total_bytes: 20 << 20,
            max_depth: 8,
        }
    }
}

impl Error {
    /// Whether this is a skill (or another upload) over a size or count
    /// limit, as opposed to a malformed one: a service answers 413 rather
    /// than 422.
    #[must_use]
    pub fn is_over_limit(&self) -> bool {
        matches!(self, Self::Io { source, .. } if source.kind() == io::ErrorKind::FileTooLarge)
    }
}

fn invalid(name: &str, reason: impl Into<String>) -> Error {
    Error::InvalidSkill {
        name: name.to_owned(),
        reason: reason.into(),
    }
}

fn over_limit(reason: String) -> Error {
    Error::io(
        "the skill is over a limit",
        io::Error::new(io::ErrorKind::FileTooLarge, reason),
    )
}

/// Checks a path an untrusted source gave (`/` or `\` separated) and
/// returns it as relative components.
///
/// # Errors
/// [`Error::InvalidSkill`] for an empty or absolute path, a `.`, `..` or
/// empty component, a NUL byte, an over-long name, or more components
/// than `max_depth`.
pub fn safe_relative_path(raw: &str, max_depth: usize) -> Result<PathBuf> {
    let bad = |why: &str| invalid(raw, format!("unsafe path: {why}"));
    if raw.is_empty() {
        return Err(bad("empty"));
    }
    if raw.contains('\0') {
        return Err(bad("it contains a NUL byte"));
    }
    if raw.starts_with('/') || raw.starts_with('\\') || raw.get(1..2) == Some(":") {
        return Err(bad("absolute paths are not allowed"));
    }
    let parts: Vec<&str> = raw.split(['/', '\\']).collect();
    if parts.len() > max_depth {
        return Err(bad(&format!("deeper than {max_depth} levels")));
    }
    let mut path = PathBuf::new();
    for part in parts {
        match part {
            "" => return Err(bad("empty component")),
            "." | ".." => return Err(bad("'.' and '..' are not allowed")),
            p if p.len() > MAX_NAME => return Err(bad("a name is longer than 255 bytes")),
            p => path.push(p),
        }
    }
    Ok(path)
}

/// A private directory being filled with one skill's files.
///
/// Made by [`SkillStage::new`] over an empty host directory the caller
/// owns; entries are added with [`add_dir`](Self::add_dir) and
/// [`create_file`](Self::create_file) + [`write_chunk`](Self::write_chunk), and
/// [`finish`](Self::finish) checks `SKILL.md` and returns the skill's
/// directory. The caller removes the staging directory afterwards.
#[derive(Debug)]
pub struct SkillStage {
    root: PathBuf,
    dir: ConfinedDir,
    limits: SkillLimits,
    entries: usize,
    total: u64,
    seen: HashSet<PathBuf>,
}

/// A file being written into a [`SkillStage`].
#[derive(Debug)]
pub struct StagedFile {
    file: File,
    path: PathBuf,
    written: u64,
    declared: Option<u64>,
}

impl StagedFile {
    /// The bytes written so far.
    #[must_use]
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The file's path in the skill.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file handle (for async callers that write themselves and
    /// account with [`SkillStage::account`]).
    ///
    /// # Errors
    /// The handle cannot be duplicated.
    pub fn try_clone_file(&self) -> io::Result<File> {
        self.file.try_clone()
    }
}

impl SkillStage {
    /// A stage writing into `staging` (created when missing; it should be
    /// a fresh directory only the caller uses).
    ///
    /// # Errors
    /// The directory cannot be created or opened, or is not empty.
    pub fn new(staging: &Path, limits: SkillLimits) -> Result<Self> {
        // Messages name paths inside the skill only: the staging
        // directory is the server's and its path is nobody else's business.
        let base = ConfinedDir::open(staging, "")
            .map_err(|e| Error::io("opening the skill staging directory", e))?;
        let listed = base
            .list(Path::new(""))
            .map_err(|e| Error::io("listing the skill staging directory", e))?;
        if !listed.is_empty() {
            return Err(Error::io(
                "the skill staging directory",
                io::Error::new(io::ErrorKind::AlreadyExists, "it is not empty"),
            ));
        }
        base.create_dir_all(Path::new(EXTRACT_DIR))
            .map_err(|e| Error::io("creating the skill staging directory", e))?;
        let dir = ConfinedDir::open(&staging.join(EXTRACT_DIR), "")
            .map_err(|e| Error::io("opening the skill staging directory", e))?;
        Ok(Self {
            root: staging.to_path_buf(),
            dir,
            limits,
            entries: 0,
            total: 0,
            seen: HashSet::new(),
        })
    }

    /// The limits in force.
    #[must_use]
    pub fn limits(&self) -> &SkillLimits {
        &self.limits
    }

    fn claim(&mut self, raw: &str) -> Result<PathBuf> {
        let path = safe_relative_path(raw, self.limits.max_depth)?;
        if self.entries >= self.limits.max_files {
            return Err(over_limit(format!(
                "a skill may hold at most {} files",
                self.limits.max_files
            )));
        }
        if !self.seen.insert(path.clone()) {
            return Err(invalid(raw, "the same path appears twice"));
        }
        self.entries += 1;
        Ok(path)
    }

    /// Adds the directory `raw` (and its missing parents).
    ///
    /// # Errors
    /// An unsafe path, a duplicate, too many entries, or the directory
    /// cannot be made (a file of that name exists).
    pub fn add_dir(&mut self, raw: &str) -> Result<()> {
        let path = self.claim(raw)?;
        self.dir
            .create_dir_all(&path)
            .map_err(|e| invalid(raw, format!("cannot create the directory: {e}")))
    }

    /// Starts the file `raw`; `declared` is its announced size, checked
    /// against the limits now and against the bytes written by
    /// [`finish_file`](Self::finish_file).
    ///
    /// # Errors
    /// An unsafe path, a duplicate, too many entries, a declared size
    /// over a limit, or the file cannot be created.
    pub fn create_file(&mut self, raw: &str, declared: Option<u64>) -> Result<StagedFile> {
        if let Some(size) = declared {
            self.check_size(raw, size, 0)?;
        }
        let path = self.claim(raw)?;
        let file = self
            .dir
            .open_append(&path)
            .map_err(|e| invalid(raw, format!("cannot create the file: {e}")))?;
        Ok(StagedFile {
            file,
            path,
            written: 0,
            declared,
        })
    }

    fn check_size(&self, raw: &str, file_bytes: u64, more_total: u64) -> Result<()> {
        if file_bytes > self.limits.max_file_bytes {
            return Err(over_limit(format!(
                "{raw:?} is more than the limit of {} bytes per file",
                self.limits.max_file_bytes
            )));
        }
        if self.total.saturating_add(more_total) > self.limits.max_total_bytes {
            return Err(over_limit(format!(
                "the skill is more than the limit of {} bytes",
                self.limits.max_total_bytes
            )));
        }
        Ok(())
    }

    /// Counts `n` more bytes of `file` against the limits and its
    /// declared size (for callers that write the handle themselves).
    ///
    /// # Errors
    /// Over a limit, or beyond the declared size.
    pub fn account(&mut self, file: &mut StagedFile, n: u64) -> Result<()> {
        let raw = file.path.display().to_string();
        let written = file.written.saturating_add(n);
        if let Some(declared) = file.declared
            && written > declared
        {
            return Err(invalid(
                &raw,
                format!("more bytes than the {declared} announced"),
            ));
        }
        self.check_size(&raw, written, n)?;
        file.written = written;
        self.total = self.total.saturating_add(n);
        Ok(())
    }

    /// Writes `chunk` to `file`, within the limits.
    ///
    /// # Errors
    /// As [`account`](Self::account); the write fails.
    pub fn write_chunk(&mut self, file: &mut StagedFile, chunk: &[u8]) -> Result<()> {
        self.account(file, chunk.len() as u64)?;
        file.file
            .write_all(chunk)
            .map_err(|e| Error::io("writing a staged skill file", e))
    }

    /// Ends `file`: its byte count must be the declared one.
    ///
    /// # Errors
    /// [`Error::InvalidSkill`] when fewer bytes came than announced.
    pub fn finish_file(&mut self, file: StagedFile) -> Result<()> {
        let StagedFile {
            file,
            path,
            written,
            declared,
        } = file;
        // Closed here: the stage holds no handle past its file.
        drop(file);
        if let Some(declared) = declared
            && written != declared
        {
            return Err(invalid(
                &path.display().to_string(),
                format!("{written} bytes arrived, {declared} were announced"),
            ));
        }
        Ok(())
    }

    /// Copies everything `reader` yields into `file`, within the limits.
    ///
    /// # Errors
    /// As [`write_chunk`](Self::write_chunk); the read fails.
    pub fn copy_from(&mut self, file: &mut StagedFile, mut reader: impl Read) -> Result<()> {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::FileTooLarge => {
                    return Err(over_limit(e.to_string()));
                }
                Err(e) => {
                    return Err(invalid(
                        &file.path.display().to_string(),
                        format!("cannot read it: {e}"),
                    ));
                }
            };
            self.write_chunk(file, &buf[..n])?;
        }
    }

    /// Finds the skill — `SKILL.md` at the top, or in the single
    /// top-level directory — checks its front matter, and moves it to
    /// `staging/<name>`, named after the skill (or its directory when
    /// the skill's name cannot be a directory name). Returns that path.
    ///
    /// # Errors
    /// [`Error::InvalidSkill`]: no `SKILL.md`, an unusable one, or no
    /// name that can be a directory name.
    pub fn finish(self) -> Result<PathBuf> {
        let list = |rel: &Path| {
            self.dir
                .list(rel)
                .map_err(|e| Error::io("listing the staged skill", e))
        };
        let top = list(Path::new(""))?;
        let has_skill_file = |entries: &[(String, EntryKind)]| {
            entries
                .iter()
                .any(|(n, k)| n == SKILL_FILE && *k == EntryKind::File)
        };
        let (skill_rel, dir_name) = if has_skill_file(&top) {
            (PathBuf::new(), None)
        } else {
            match top.as_slice() {
                [(name, EntryKind::Dir)] if has_skill_file(&list(Path::new(name))?) => {
                    (PathBuf::from(name), Some(name.clone()))
                }
                _ => {
                    return Err(invalid(
                        "upload",
                        format!("no {SKILL_FILE} at the top or in a single top-level folder"),
                    ));
                }
            }
        };
        let shown = dir_name.clone().unwrap_or_else(|| "upload".to_owned());
        let bytes = self
            .dir
            .read(&skill_rel.join(SKILL_FILE), MAX_SKILL_FILE)
            .map_err(|e| invalid(&shown, format!("{SKILL_FILE}: {e}")))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| invalid(&shown, format!("{SKILL_FILE} is not UTF-8")))?;
        let skill = Skill::from_markdown(text, None)
            .map_err(|e| invalid(&shown, format!("{SKILL_FILE}: {e}")))?;
        let name = if validate_id("skill name", &skill.name).is_ok() {
            skill.name
        } else if let Some(dir) = dir_name.filter(|d| validate_id("skill directory", d).is_ok()) {
            dir
        } else {
            return Err(invalid(
                &skill.name,
                "the skill's name must be 1 to 64 letters, digits, '_' or '-' to become a folder",
            ));
        };
        let extracted = self.root.join(EXTRACT_DIR);
        let target = self.root.join(&name);
        // The staging directory is the caller's own: plain renames.
        std::fs::rename(extracted.join(&skill_rel), &target)
            .map_err(|e| Error::io("moving the staged skill into place", e))?;
        if extracted.exists() {
            std::fs::remove_dir_all(&extracted)
                .map_err(|e| Error::io("cleaning the skill staging directory", e))?;
        }
        Ok(target)
    }
}

/// A reader that fails once more than `left` bytes came through: bounds
/// what a compressed archive may expand to.
struct Bounded<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::FileTooLarge,
                "the archive expands to more than the skill limits allow",
            )
        })?;
        Ok(n)
    }
}

/// Extracts the `.tar.gz` skill archive `reader` into `staging` (a fresh
/// private directory) and returns the staged skill directory, ready for
/// [`Workspace::add_skill`](crate::Workspace::add_skill).
///
/// Regular files and directories only: symbolic and hard links, devices
/// and FIFOs are refused, as are absolute paths and `..`. Limits are
/// checked while the archive streams, and the decompressed stream itself
/// is bounded (a gzip bomb stops at the limit).
///
/// # Errors
/// [`Error::InvalidSkill`] for a malformed or hostile archive or an
/// unusable `SKILL.md`; an over-limit archive gives an error whose
/// [`is_over_limit`](Error::is_over_limit) is true; I/O failures.
pub fn stage_skill_archive(
    reader: impl Read,
    limits: &SkillLimits,
    staging: &Path,
) -> Result<PathBuf> {
    let mut stage = SkillStage::new(staging, *limits)?;
    let bound = limits
        .max_total_bytes
        .saturating_add((limits.max_files as u64 + 8).saturating_mul(ARCHIVE_SLACK_PER_ENTRY))
        .saturating_add(1 << 20);
    let gz = flate2::read::GzDecoder::new(reader);
    let mut archive = tar::Archive::new(Bounded {
        inner: gz,
        left: bound,
    });
    let broken = |e: io::Error| {
        if e.kind() == io::ErrorKind::FileTooLarge {
            over_limit(e.to_string())
        } else {
            invalid("archive", format!("not a readable .tar.gz: {e}"))
        }
    };
    for entry in archive.entries().map_err(broken)? {
        let entry = entry.map_err(broken)?;
        let kind = entry.header().entry_type();
        let raw = String::from_utf8(entry.path_bytes().into_owned())
            .map_err(|_| invalid("archive", "an entry's path is not UTF-8"))?;
        // Archives made with `tar -C dir .` name entries `./x`.
        let trimmed = raw.trim_start_matches("./").trim_end_matches('/');
        use tar::EntryType as T;
        match kind {
            T::Directory if trimmed.is_empty() || trimmed == "." => {}
            T::Directory => stage.add_dir(trimmed)?,
            T::Regular | T::Continuous => {
                let size = entry.header().size().map_err(broken)?;
                let mut file = stage.create_file(trimmed, Some(size))?;
                stage.copy_from(&mut file, entry)?;
                stage.finish_file(file)?;
            }
            // Extended headers carry metadata only.
            T::XGlobalHeader | T::XHeader => {}
            T::Symlink | T::Link => {
                return Err(invalid(&raw, "links are not allowed in a skill archive"));
            }
            _ => {
                return Err(invalid(
                    &raw,
                    "only regular files and directories are allowed in a skill archive",
                ));
            }
        }
    }
    stage.finish()
}

/// Copies the skill directory `rel` of `source` (a tenant's workspace,
/// read through its confinement) into `staging` and returns the staged
/// skill directory.
///
/// Links are refused (one leading outside could not be followed anyway,
/// and one inside is not worth the ambiguity), as are FIFOs and devices.
///
/// # Errors
/// As [`stage_skill_archive`]; `rel` is missing, not a directory, or
/// outside `source`.
pub fn stage_skill_dir(
    source: &ConfinedDir,
    rel: &Path,
    limits: &SkillLimits,
    staging: &Path,
) -> Result<PathBuf> {
    let mut stage = SkillStage::new(staging, *limits)?;
    let top = rel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "skill".to_owned());
    let dir = source
        .subdir(rel)
        .map_err(|e| invalid(&top, format!("cannot open the folder: {e}")))?;
    copy_tree(&dir, Path::new(""), &top, &mut stage)?;
    stage.finish()
}

fn copy_tree(dir: &ConfinedDir, rel: &Path, prefix: &str, stage: &mut SkillStage) -> Result<()> {
    let shown = |name: &str| format!("{prefix}/{name}");
    let entries = dir
        .list(rel)
        .map_err(|e| invalid(prefix, format!("cannot list it: {e}")))?;
    for (name, kind) in entries {
        let path = rel.join(&name);
        let raw = shown(&name);
        match kind {
            EntryKind::Dir => {
                stage.add_dir(&raw)?;
                copy_tree(dir, &path, &raw, stage)?;
            }
            EntryKind::File => {
                let from = dir
                    .open_file(&path)
                    .map_err(|e| invalid(&raw, format!("cannot read it: {e}")))?;
                let len = from
                    .metadata()
                    .map_err(|e| Error::io("reading a skill file", e))?
                    .len();
                let mut file = stage.create_file(&raw, None)?;
                stage.check_size(&raw, len, len)?;
                stage.copy_from(&mut file, from)?;
                stage.finish_file(file)?;
            }
            EntryKind::Symlink => {
                return Err(invalid(&raw, "links are not copied into a skill"));
            }
            EntryKind::Other => {
                return Err(invalid(
                    &raw,
                    "only regular files and folders can be part of a skill",
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "skill_import_tests.rs"]
mod tests;
