//! Reading a `file://` media URL under a [`MediaPolicy`]: inside the
//! allowed roots after every link is resolved, a regular file only, never
//! more than the cap. Every function here blocks.

use std::fs::{File, FileType, OpenOptions};
use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;
use oxiscope_http::reqwest::Url;

use super::MediaPolicy;

/// Why a file is refused where its existence must not be given away: the
/// same words for a missing file and for one outside the roots.
const NOT_IN_ROOTS: &str = "no file this model may read is there (it is missing, or outside the directories \
     media may be read from)";

/// The bytes of the file `url` names, as `policy` allows; the error is the
/// reason, for a message naming the URL.
pub(super) fn read(url: &Url, policy: &MediaPolicy) -> Result<Vec<u8>, String> {
    let (real, roots) = judge(url, policy)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOFOLLOW).bits())
        .open(&real)
        .map_err(|e| e.to_string())?;
    // The handle is what is read: judge it again, so a path swapped after
    // the checks above cannot slip through.
    let meta = file.metadata().map_err(|e| e.to_string())?;
    ensure_regular(meta.file_type())?;
    if let Some(roots) = &roots
        && !opened_inside(&file, roots)
    {
        return Err(NOT_IN_ROOTS.to_owned());
    }
    let max = policy.max_bytes;
    if meta.len() > max {
        return Err(format!("larger than {max} bytes"));
    }
    let mut data = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| e.to_string())?;
    if data.len() as u64 > max {
        return Err(format!("larger than {max} bytes"));
    }
    Ok(data)
}

/// Whether the file `url` names may be read under `policy` as it is now
/// (inside the roots, a regular file, within the cap), without opening
/// it; the error is the reason, as [`read`] gives it.
pub(super) fn check(url: &Url, policy: &MediaPolicy) -> Result<(), String> {
    let (real, _) = judge(url, policy)?;
    let meta = std::fs::metadata(&real).map_err(|e| e.to_string())?;
    if meta.len() > policy.max_bytes {
        return Err(format!("larger than {} bytes", policy.max_bytes));
    }
    Ok(())
}

/// The real path of the file `url` names, judged by its path (inside the
/// roots, a regular file), with the roots resolved.
fn judge(url: &Url, policy: &MediaPolicy) -> Result<(PathBuf, Option<Vec<PathBuf>>), String> {
    let roots = match &policy.file_roots {
        Some(roots) if roots.is_empty() => {
            return Err("local files are not read here; send the media inline".to_owned());
        }
        Some(roots) => Some(canonical_roots(roots)),
        None => None,
    };
    let path = url
        .to_file_path()
        .map_err(|()| "not a local file path".to_owned())?;
    let real = match &roots {
        Some(roots) => match std::fs::canonicalize(&path) {
            Ok(real) if inside(&real, roots) => real,
            _ => return Err(NOT_IN_ROOTS.to_owned()),
        },
        None => std::fs::canonicalize(&path).map_err(|e| e.to_string())?,
    };
    // Judge the path before opening it: opening some devices has effects.
    let meta = std::fs::metadata(&real).map_err(|e| e.to_string())?;
    ensure_regular(meta.file_type())?;
    Ok((real, roots))
}

/// The roots with their links resolved; a root that does not exist holds
/// nothing and is left out.
fn canonical_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .filter_map(|root| std::fs::canonicalize(root).ok())
        .collect()
}

fn inside(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| path.starts_with(root))
}

/// Whether the file behind `file` is inside `roots`, by the path the
/// kernel gives for the open descriptor; `true` where the system gives
/// none (the checks before opening then stand alone).
fn opened_inside(file: &File, roots: &[PathBuf]) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd as _;
        if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return inside(&real, roots);
        }
    }
    let _ = (file, roots);
    true
}

fn ensure_regular(file_type: FileType) -> Result<(), String> {
    let kind = if file_type.is_file() {
        return Ok(());
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else {
        "an unknown kind of file"
    };
    Err(format!("not a regular file ({kind})"))
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
