//! The files of the embedding cache, synchronously: one vector per file,
//! named by its key, written to a temporary file and renamed into place,
//! with a checksum so a torn or foreign file reads as a miss.
//!
//! A file is `OXEMB\x01\0\0`, the value count (u32 LE), the values (f32
//! LE), then the first 8 bytes of SHA-256(key || values).

use std::fs;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

const MAGIC: &[u8; 8] = b"OXEMB\x01\0\0";
const HEADER: usize = MAGIC.len() + 4;
const CHECKSUM: usize = 8;
/// File extension of cache entries.
pub(super) const EXTENSION: &str = "emb";
/// Prefix of files being written.
const TEMP_PREFIX: &str = ".tmp-";
/// Largest vector read back (values); larger files are not ours.
const MAX_VALUES: usize = 1 << 20;
/// Temporary files older than this were left by a writer that died.
const STALE_TEMP: Duration = Duration::from_secs(600);

/// Whether `key` is a cache key: 64 lower-case hex digits (so it can name
/// a file in the cache directory and nothing else).
pub(super) fn is_key(key: &str) -> bool {
    key.len() == 64 && key.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn file_name(key: &str) -> String {
    format!("{key}.{EXTENSION}")
}

fn checksum(key: &str, payload: &[u8]) -> [u8; CHECKSUM] {
    let mut hasher = Sha256::new();
    hasher.update(key.as_bytes());
    hasher.update(payload);
    let digest = hasher.finalize();
    let mut out = [0; CHECKSUM];
    out.copy_from_slice(&digest[..CHECKSUM]);
    out
}

fn encode(key: &str, vector: &[f32]) -> io::Result<Vec<u8>> {
    let count = u32::try_from(vector.len())
        .ok()
        .filter(|n| (*n as usize) <= MAX_VALUES)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "vector too long to cache"))?;
    let mut bytes = Vec::with_capacity(HEADER + vector.len() * 4 + CHECKSUM);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&count.to_le_bytes());
    for value in vector {
        bytes.extend_from_slice(&value.to_le_bytes());
    }
    let sum = checksum(key, &bytes[HEADER..]);
    bytes.extend_from_slice(&sum);
    Ok(bytes)
}

fn decode(key: &str, bytes: &[u8]) -> Option<Vec<f32>> {
    let (header, rest) = bytes.split_at_checked(HEADER)?;
    let (magic, count) = header.split_at(MAGIC.len());
    if magic != MAGIC {
        return None;
    }
    let count = u32::from_le_bytes(count.try_into().ok()?) as usize;
    let (payload, sum) = rest.split_at_checked(rest.len().checked_sub(CHECKSUM)?)?;
    if payload.len() != count.checked_mul(4)? || sum != checksum(key, payload) {
        return None;
    }
    Some(
        payload
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// The vector stored under `key`, or `None` when there is none or the file
/// is not a valid entry (a damaged file is removed).
pub(super) fn read(dir: &Path, key: &str) -> Option<Vec<f32>> {
    if !is_key(key) {
        return None;
    }
    let path = dir.join(file_name(key));
    let meta = fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let limit = (HEADER + MAX_VALUES * 4 + CHECKSUM) as u64;
    if meta.len() > limit {
        let _ = fs::remove_file(&path);
        return None;
    }
    let bytes = fs::read(&path).ok()?;
    let vector = decode(key, &bytes);
    if vector.is_none() {
        let _ = fs::remove_file(&path);
    }
    vector
}

/// Stores `vector` under `key`: written to a temporary file in `dir`, then
/// renamed over the entry, so readers and concurrent writers never see a
/// partial file.
pub(super) fn write(dir: &Path, key: &str, vector: &[f32]) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    if !is_key(key) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not an embedding cache key",
        ));
    }
    let bytes = encode(key, vector)?;
    let temp = dir.join(format!(
        "{TEMP_PREFIX}{key}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut file| file.write_all(&bytes));
    let renamed = written.and_then(|()| fs::rename(&temp, dir.join(file_name(key))));
    if renamed.is_err() {
        let _ = fs::remove_file(&temp);
    }
    renamed
}

/// Removes the entry of `key`; whether there was one.
pub(super) fn remove(dir: &Path, key: &str) -> io::Result<bool> {
    if !is_key(key) {
        return Ok(false);
    }
    match fs::remove_file(dir.join(file_name(key))) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// One entry on disk.
struct Entry {
    name: std::ffi::OsString,
    modified: SystemTime,
    bytes: u64,
}

/// The entries in `dir` (regular files named `<key>.emb`), oldest first;
/// stale temporary files are removed on the way.
fn entries(dir: &Path) -> io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    let read = match fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    let now = SystemTime::now();
    for entry in read {
        let Ok(entry) = entry else { continue };
        // `DirEntry::metadata` does not follow symlinks.
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let name = entry.file_name();
        let Some(text) = name.to_str() else { continue };
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        if text.starts_with(TEMP_PREFIX) {
            if now.duration_since(modified).unwrap_or_default() > STALE_TEMP {
                let _ = fs::remove_file(entry.path());
            }
            continue;
        }
        let is_entry = text
            .strip_suffix(EXTENSION)
            .and_then(|k| k.strip_suffix('.'))
            .is_some_and(is_key);
        if is_entry {
            out.push(Entry {
                name,
                modified,
                bytes: meta.len(),
            });
        }
    }
    out.sort_by(|a, b| {
        a.modified
            .cmp(&b.modified)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(out)
}

/// The number of entries in `dir` and their total size in bytes.
pub(super) fn usage(dir: &Path) -> io::Result<(usize, u64)> {
    let entries = entries(dir)?;
    Ok((entries.len(), entries.iter().map(|e| e.bytes).sum()))
}

/// Removes the oldest entries until at most `max_files` remain and they
/// take at most `max_bytes`.
pub(super) fn evict(
    dir: &Path,
    max_files: Option<usize>,
    max_bytes: Option<u64>,
) -> io::Result<()> {
    if max_files.is_none() && max_bytes.is_none() {
        return Ok(());
    }
    let entries = entries(dir)?;
    let mut count = entries.len();
    let mut bytes: u64 = entries.iter().map(|e| e.bytes).sum();
    for entry in entries {
        let over_count = max_files.is_some_and(|m| count > m);
        let over_bytes = max_bytes.is_some_and(|m| bytes > m);
        if !over_count && !over_bytes {
            break;
        }
        match fs::remove_file(dir.join(&entry.name)) {
            // Another process evicting the same entry is as good.
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        count -= 1;
        bytes = bytes.saturating_sub(entry.bytes);
    }
    Ok(())
}

/// Removes every entry (and temporary file) in `dir`; other files are left.
pub(super) fn clear(dir: &Path) -> io::Result<()> {
    for entry in entries(dir)? {
        match fs::remove_file(dir.join(&entry.name)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    #[test]
    fn vectors_round_trip_and_any_damage_reads_as_a_miss() {
        let bytes = encode(KEY, &[1.5, -0.25, 0.0]).unwrap();
        assert_eq!(decode(KEY, &bytes), Some(vec![1.5, -0.25, 0.0]));
        for cut in 0..bytes.len() {
            assert_eq!(decode(KEY, &bytes[..cut]), None, "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[HEADER + 1] ^= 1;
        assert_eq!(decode(KEY, &flipped), None);
        let other_key = KEY.replace('0', "1");
        assert_eq!(decode(&other_key, &bytes), None);
        assert_eq!(decode(KEY, b"not a cache file at all"), None);
    }

    #[test]
    fn only_hex_keys_name_files() {
        assert!(is_key(KEY));
        assert!(!is_key("../../etc/passwd"));
        assert!(!is_key(&KEY.to_uppercase()));
        let dir = tempfile::tempdir().unwrap();
        assert!(write(dir.path(), "../escape", &[1.0]).is_err());
        assert_eq!(read(dir.path(), "../escape"), None);
        assert!(!remove(dir.path(), "../escape").unwrap());
    }
}
