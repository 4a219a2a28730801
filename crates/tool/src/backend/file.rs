//! Regular files only: opening, capped reading and writing that refuse
//! directories, FIFOs, sockets and devices instead of hanging on them or
//! reading them without end.
//!
//! Every function here blocks; the backend runs them on a blocking thread.

use std::fs::{self, File, FileType, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::OFlag;

/// What a path is, for a refusal the model reads.
fn kind_of(file_type: FileType) -> &'static str {
    if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else {
        "not a file or directory"
    }
}

/// `Ok` for a regular file; `IsADirectory` for a directory and
/// `InvalidInput` for anything else.
fn ensure_regular(path: &Path, file_type: FileType) -> io::Result<()> {
    if file_type.is_file() {
        Ok(())
    } else if file_type.is_dir() {
        Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is a directory", path.display()),
        ))
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a regular file ({})",
                path.display(),
                kind_of(file_type)
            ),
        ))
    }
}

/// Flags that keep `open` from blocking on a FIFO (and, with
/// `follow_links` false, from following a symbolic link in the last
/// component).
fn open_flags(follow_links: bool) -> i32 {
    let mut flags = OFlag::O_NONBLOCK;
    if !follow_links {
        flags |= OFlag::O_NOFOLLOW;
    }
    flags.bits()
}

/// Opens the regular file at `path` for reading; anything else is refused
/// after checking the opened handle, so a path swapped between a check and
/// the open cannot slip through. Never blocks on a FIFO.
///
/// # Errors
///
/// The open fails (`ELOOP` for a link when `follow_links` is false), or the
/// path is a directory (`IsADirectory`) or not a regular file
/// (`InvalidInput`).
pub(super) fn open_regular(path: &Path, follow_links: bool) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(open_flags(follow_links))
        .open(path)?;
    ensure_regular(path, file.metadata()?.file_type())?;
    Ok(file)
}

/// The bytes of the regular file at `path` (links followed), at most
/// `max_bytes`: reading stops one byte past the cap, so a file whose size
/// is misreported (`/proc`) or that grows while read is cut off.
///
/// # Errors
///
/// As [`open_regular`]; `FileTooLarge` when the file holds more than
/// `max_bytes`.
pub(super) fn read_capped(path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
    // Judge the path before opening it: opening some devices has effects.
    ensure_regular(path, fs::metadata(path)?.file_type())?;
    let file = open_regular(path, true)?;
    let len = file.metadata()?.len();
    if len > max_bytes {
        return Err(too_large(path, max_bytes, Some(len)));
    }
    let mut data = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut data)?;
    if data.len() as u64 > max_bytes {
        return Err(too_large(path, max_bytes, None));
    }
    Ok(data)
}

fn too_large(path: &Path, max_bytes: u64, len: Option<u64>) -> io::Error {
    let size = len.map_or_else(|| "holds".to_owned(), |len| format!("is {len} bytes,"));
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!(
            "{} {size} more than the limit of {max_bytes} bytes",
            path.display()
        ),
    )
}

/// Replaces the content of the regular file at `path` (links followed) with
/// `data`, creating it when missing; a directory, FIFO, socket or device is
/// refused before anything is written. Never blocks on a FIFO.
///
/// # Errors
///
/// The path is not a regular file (as [`open_regular`]) or cannot be
/// written.
pub(super) fn write_regular(path: &Path, data: &[u8]) -> io::Result<()> {
    match fs::metadata(path) {
        Ok(meta) => ensure_regular(path, meta.file_type())?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    // No O_TRUNC: the handle is checked before the old content goes.
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .custom_flags(open_flags(true))
        .open(path)?;
    ensure_regular(path, file.metadata()?.file_type())?;
    file.set_len(0)?;
    file.write_all(data)
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::{read_capped, write_regular};

    #[test]
    fn directories_are_refused_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_capped(dir.path(), 1024).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
        let err = write_regular(dir.path(), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
    }

    #[test]
    fn writing_replaces_the_whole_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        write_regular(&path, b"long content").unwrap();
        write_regular(&path, b"short").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"short");
        assert_eq!(read_capped(&path, 5).unwrap(), b"short");
    }
}
