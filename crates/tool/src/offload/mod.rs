//! Where content goes when it leaves an agent's context.
//!
//! When the agent compresses its context (older messages summarised away)
//! or truncates a huge tool result, the full content is handed to an
//! [`Offloader`], which persists it and returns a reference — a path the
//! model can later open with its file tools (`Read`, `Grep`, `Glob`).
//!
//! [`FileOffloader`] keeps everything under one root directory:
//!
//! ```text
//! {root}/
//!   sessions/{session_id}/context.jsonl               one JSON message per line, appended
//!   sessions/{session_id}/tool_result-{call_id}.txt   a full tool result as text
//!   data/{sha256}.{ext}                               decoded base64 payloads, deduplicated
//! ```
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use oxiscope_message::{Msg, Role};
//! use oxiscope_tool::offload::{FileOffloader, Offloader};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let root = std::env::temp_dir().join(format!("offload-doc-{}", std::process::id()));
//! let offloader: Arc<dyn Offloader> = Arc::new(FileOffloader::new(&root));
//! let msgs = [Msg::from_text("alice", Role::User, "an old question")];
//! let path = offloader.offload_context("session-1", &msgs).await?;
//! assert!(path.ends_with("context.jsonl"));
//! let line = std::fs::read_to_string(&path)?;
//! let back: Msg = serde_json::from_str(line.trim_end())?;
//! assert_eq!(back, msgs[0]);
//! # std::fs::remove_dir_all(&root)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod file;
mod media;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use futures_util::future::BoxFuture;
use oxiscope_message::{DataBlock, Msg, ToolResultBlock};

pub use file::{FileOffloader, OffloadFs};

/// Persists content that leaves an agent's context and says where it went.
///
/// The agent holds it as `Arc<dyn Offloader>`. Every method returns a
/// reference to the persisted content — for [`FileOffloader`], the absolute
/// path of a file the model can read back (or, for data that already lives
/// at a URL, that URL).
pub trait Offloader: Send + Sync + std::fmt::Debug {
    /// Persists messages compressed out of the context of `session_id`;
    /// returns a reference (path) to read them back.
    ///
    /// Calls for one session accumulate: later messages are appended after
    /// earlier ones.
    fn offload_context<'a>(
        &'a self,
        session_id: &'a str,
        msgs: &'a [Msg],
    ) -> BoxFuture<'a, Result<String, OffloadError>>;

    /// Persists the full text of a tool result that was truncated in the
    /// context; returns a reference to the persisted text.
    fn offload_tool_result<'a>(
        &'a self,
        session_id: &'a str,
        result: &'a ToolResultBlock,
    ) -> BoxFuture<'a, Result<String, OffloadError>>;

    /// Persists one data block (image, audio, file) dropped from the
    /// context; returns a reference to its bytes.
    fn offload_data_block<'a>(
        &'a self,
        session_id: &'a str,
        block: &'a DataBlock,
    ) -> BoxFuture<'a, Result<String, OffloadError>>;
}

/// Why content could not be offloaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OffloadError {
    /// The session id cannot name a directory: empty, `.` or `..`, longer
    /// than 200 bytes, or holding a path separator, NUL or another control
    /// character.
    #[error("invalid session id {id:?}: {reason}")]
    InvalidSessionId {
        /// The rejected id.
        id: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// Reading or writing a file failed.
    #[error("offload I/O failed at {}: {source}", path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A message could not be serialised to JSON.
    #[error("cannot encode message {msg_id} as JSON: {source}")]
    Encode {
        /// The id of the message.
        msg_id: String,
        /// The serialisation error.
        #[source]
        source: serde_json::Error,
    },
    /// A data block's base64 payload does not decode.
    #[error("data block {block_id} holds invalid base64 data: {reason}")]
    InvalidBase64 {
        /// The id of the data block.
        block_id: String,
        /// The decoder's complaint.
        reason: String,
    },
    /// A path under the root is not valid UTF-8, so it cannot be returned
    /// as a reference.
    #[error("path {} is not valid UTF-8", path.display())]
    NonUtf8Path {
        /// The path.
        path: PathBuf,
    },
    /// A background file task stopped before finishing (its runtime is
    /// shutting down).
    #[error("offload task did not finish: {reason}")]
    TaskFailed {
        /// What the runtime reported.
        reason: String,
    },
}
