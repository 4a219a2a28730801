//! The read-before-write rule over the session's read cache, and line
//! helpers shared by Read, Write and Edit.

use std::path::Path;

use crate::backend::ExecBackend;
use crate::chunk::ToolChunk;
use crate::state::{ReadCacheEntry, SessionState};

/// Largest text file Read, Write and Edit load, in bytes.
pub(super) const MAX_TEXT_BYTES: u64 = 10 * 1024 * 1024;

/// The file's lines, each with its line ending.
pub(super) fn split_lines(text: &str) -> Vec<String> {
    text.split_inclusive('\n').map(str::to_owned).collect()
}

/// Whether the text uses Windows line endings (judged by its first line
/// break).
pub(super) fn uses_crlf(text: &str) -> bool {
    text.find('\n')
        .is_some_and(|i| i > 0 && text.as_bytes()[i - 1] == b'\r')
}

/// `text` with bare `\n` turned into `\r\n`.
pub(super) fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Which tool checks a file's freshness: they word "read it first"
/// differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Writer {
    /// `Write`.
    Write,
    /// `Edit`.
    Edit,
}

impl Writer {
    /// AgentScope's answer to a change of a file not read in this session.
    fn not_read(self, path: &str) -> String {
        match self {
            Self::Write => format!(
                "Error: File {path} exists but has not been read yet. You must read the file \
                 first before writing to it."
            ),
            Self::Edit => {
                "Error: To edit a file, you must first read it using the Read tool.".to_owned()
            }
        }
    }
}

/// Decodes file bytes, refusing binary data.
pub(super) fn decode_text(path: &Path, bytes: &[u8]) -> Result<String, ToolChunk> {
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err(ToolChunk::error(format!(
            "Error: {} looks like a binary file; it cannot be handled as text.",
            path.display()
        )));
    }
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// Checks that the existing file at `path` was read in this session and has
/// not changed since; returns its current text.
///
/// A file changed since it was read gets its own message (AgentScope gives
/// the "not read" one): the model should learn that someone else edited it.
pub(super) async fn check_fresh(
    backend: &dyn ExecBackend,
    session: &SessionState,
    path: &Path,
    modified: f64,
    writer: Writer,
) -> Result<String, ToolChunk> {
    let key = path.to_string_lossy();
    let cached = session.tool_context().lock().await.cached(&key).cloned();
    let Some(entry) = cached else {
        return Err(ToolChunk::error(writer.not_read(&key)));
    };
    let bytes = backend
        .read(path, MAX_TEXT_BYTES)
        .await
        .map_err(|e| ToolChunk::error(format!("Error reading file: {e}")))?;
    let text = decode_text(path, &bytes)?;
    // A touched but unchanged file (same lines as read in full) is fine.
    if (entry.updated_at - modified).abs() > 1e-6 && split_lines(&text) != entry.lines {
        return Err(ToolChunk::error(format!(
            "Error: {key} has changed since it was last read (by the user or another program). \
             Read it again before modifying it."
        )));
    }
    Ok(text)
}

/// Records the file's new content after a write, so further edits pass the
/// freshness check.
pub(super) async fn record_write(
    backend: &dyn ExecBackend,
    session: &SessionState,
    path: &Path,
    text: &str,
) {
    let modified = backend.metadata(path).await.map_or(0.0, |m| m.modified);
    let entry = ReadCacheEntry::new(path.to_string_lossy(), split_lines(text), modified);
    session.tool_context().lock().await.record_read(entry);
}
