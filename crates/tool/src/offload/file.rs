//! [`FileOffloader`]: offloaded content as files under one root directory.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use oxiscope_message::{
    ContentBlock, DataBlock, DataSource, MediaBlock, Msg, RichContent, ToolResultBlock, UrlSource,
};

use super::media::{
    call_id_file_part, decode_base64, extension_for, sha256_hex, validate_session_id,
};
use super::{OffloadError, Offloader};

/// The directory of per-session files under the root.
const SESSIONS_DIR: &str = "sessions";
/// The directory of decoded data payloads under the root.
const DATA_DIR: &str = "data";
/// The file each session's offloaded messages are appended to.
const CONTEXT_FILE: &str = "context.jsonl";

/// An [`Offloader`] writing files under a root directory, the layout the
/// agent's file tools read back:
///
/// - `sessions/{session_id}/context.jsonl` — [`Offloader::offload_context`]
///   appends one compact JSON [`Msg`] per line. Base64 data blocks inside
///   the messages (top-level, in hints and in tool results) are written to
///   `data/` first and their source replaced by a `file://` URL source
///   naming that file, with the media type kept; so the lines stay small,
///   and the bytes are one file away. A payload that is not valid base64
///   stays inline, so nothing is lost. One call's lines are written with a
///   single append while holding a per-session lock, so concurrent calls
///   never interleave; if the file does not end with a newline (an earlier
///   write was cut short), one is added first so the new lines parse.
/// - `sessions/{session_id}/tool_result-{call_id}.txt` —
///   [`Offloader::offload_tool_result`] writes the result's text: its parts
///   joined with `\n`, each data block replaced by a bracketed line naming
///   its media type and the file (or URL) holding it. Tool call ids that are
///   not plain file names are sanitised (see below). Offloading the same
///   call again replaces the file.
/// - `data/{sha256}.{ext}` — the decoded bytes of a base64 data block, the
///   extension from its media type (`bin` when unknown). A file that exists
///   with the right size is not written again, so equal payloads are stored
///   once, across sessions. A URL-sourced block is never downloaded: its URL
///   is the reference.
///
/// Files are replaced atomically (a temporary file in the same directory,
/// then a rename), so a reader sees either no file or the whole file.
/// Directories are created as needed. All file work runs on the blocking
/// thread pool.
///
/// Session ids must be one plain directory name (see
/// [`OffloadError::InvalidSessionId`]); a rejected id writes nothing. Tool
/// call ids made of ASCII letters, digits, `_`, `-` and `.`, up to 100
/// bytes, are used verbatim; any other id has other characters replaced by
/// `_`, is cut to 100 bytes, and gets 16 hex digits of its SHA-256
/// appended, so distinct ids never share a file and no id leaves the
/// session directory.
///
/// Every reference returned is an absolute path (or the URL of a
/// URL-sourced block). Clones share their session locks.
#[derive(Debug, Clone)]
pub struct FileOffloader {
    root: PathBuf,
    fs: Arc<dyn OffloadFs>,
    locks: Arc<SessionLocks>,
}

/// The file operations a [`FileOffloader`] performs, on paths relative to
/// its root. The default works on the host's file system; a workspace
/// that a sandboxed tenant can rearrange supplies one that cannot be led
/// outside by links.
pub trait OffloadFs: Send + Sync + std::fmt::Debug {
    /// The length of the regular file `rel`; `None` when it is missing or
    /// not a regular file.
    fn file_len(&self, rel: &Path) -> Option<u64>;

    /// Replaces `rel` with `bytes` so readers see the old or the new
    /// contents, creating missing parent directories.
    ///
    /// # Errors
    /// The file cannot be written.
    fn write_atomic(&self, rel: &Path, bytes: &[u8]) -> io::Result<()>;

    /// Opens `rel` for reading and appending, creating it and its missing
    /// parent directories.
    ///
    /// # Errors
    /// The file cannot be opened or created.
    fn open_append(&self, rel: &Path) -> io::Result<fs::File>;
}

/// [`OffloadFs`] on the host under a root directory.
#[derive(Debug)]
struct HostFs {
    root: PathBuf,
}

impl OffloadFs for HostFs {
    fn file_len(&self, rel: &Path) -> Option<u64> {
        fs::metadata(self.root.join(rel))
            .ok()
            .filter(fs::Metadata::is_file)
            .map(|m| m.len())
    }

    fn write_atomic(&self, rel: &Path, bytes: &[u8]) -> io::Result<()> {
        static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);
        let path = self.root.join(rel);
        let dir = path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir)?;
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let temp = dir.join(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            NEXT_TEMP.fetch_add(1, Ordering::Relaxed)
        ));
        let written = fs::File::create_new(&temp)
            .and_then(|mut file| file.write_all(bytes))
            .and_then(|()| fs::rename(&temp, &path));
        if written.is_err() {
            // Best effort: the error that matters is the one returned.
            let _ = fs::remove_file(&temp);
        }
        written
    }

    fn open_append(&self, rel: &Path) -> io::Result<fs::File> {
        let path = self.root.join(rel);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
    }
}

impl FileOffloader {
    /// An offloader writing under `root`, made absolute against the current
    /// directory. Nothing is created until something is offloaded.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let root = std::path::absolute(&root).unwrap_or(root);
        Self {
            fs: Arc::new(HostFs { root: root.clone() }),
            root,
            locks: Arc::default(),
        }
    }

    /// An offloader writing through `fs`, naming what it wrote as paths
    /// under `shown_root` (where the agent's tools see `fs`'s root).
    pub fn with_fs(shown_root: impl Into<PathBuf>, fs: Arc<dyn OffloadFs>) -> Self {
        Self {
            root: shown_root.into(),
            fs,
            locks: Arc::default(),
        }
    }

    /// `path` (under the root) relative to the root.
    fn rel(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.root).unwrap_or(path).to_path_buf()
    }

    /// The root directory.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the offloaded messages of `session_id` are appended.
    ///
    /// # Errors
    /// [`OffloadError::InvalidSessionId`] for an id that cannot name a
    /// directory.
    pub fn context_path(&self, session_id: &str) -> Result<PathBuf, OffloadError> {
        Ok(self.session_dir(session_id)?.join(CONTEXT_FILE))
    }

    /// Where the full text of tool call `call_id` of `session_id` is
    /// written.
    ///
    /// # Errors
    /// [`OffloadError::InvalidSessionId`] for an id that cannot name a
    /// directory.
    pub fn tool_result_path(
        &self,
        session_id: &str,
        call_id: &str,
    ) -> Result<PathBuf, OffloadError> {
        Ok(self
            .session_dir(session_id)?
            .join(format!("tool_result-{}.txt", call_id_file_part(call_id))))
    }

    fn session_dir(&self, session_id: &str) -> Result<PathBuf, OffloadError> {
        validate_session_id(session_id)?;
        Ok(self.root.join(SESSIONS_DIR).join(session_id))
    }

    fn data_dir(&self) -> PathBuf {
        self.root.join(DATA_DIR)
    }

    async fn context(&self, session_id: &str, msgs: &[Msg]) -> Result<String, OffloadError> {
        let path = self.context_path(session_id)?;
        let mut batch = String::new();
        for msg in msgs {
            let mut msg = msg.clone();
            self.externalise_msg(&mut msg).await?;
            let line = serde_json::to_string(&msg).map_err(|source| OffloadError::Encode {
                msg_id: msg.id.to_string(),
                source,
            })?;
            batch.push_str(&line);
            batch.push('\n');
        }
        // The guard moves into the blocking task: the lock is released when
        // the write is done, even if this future is dropped meanwhile.
        let guard = self.locks.get(session_id).lock_owned().await;
        let (fs, rel, shown) = (Arc::clone(&self.fs), self.rel(&path), path.clone());
        blocking(move || {
            let result = append_batch(&*fs, &rel, &shown, batch.as_bytes());
            drop(guard);
            result
        })
        .await?;
        path_string(path)
    }

    async fn tool_result(
        &self,
        session_id: &str,
        result: &ToolResultBlock,
    ) -> Result<String, OffloadError> {
        let path = self.tool_result_path(session_id, &result.id)?;
        let text = match &result.output {
            RichContent::Text(text) => text.clone(),
            RichContent::Blocks(blocks) => {
                let mut parts = Vec::with_capacity(blocks.len());
                for block in blocks {
                    parts.push(match block {
                        MediaBlock::Text(t) => t.text.clone(),
                        MediaBlock::Data(d) => self.data_reference_line(d).await?,
                    });
                }
                parts.join("\n")
            }
        };
        let (fs, rel, shown) = (Arc::clone(&self.fs), self.rel(&path), path.clone());
        blocking(move || {
            fs.write_atomic(&rel, text.as_bytes())
                .map_err(io_at(&shown))
        })
        .await?;
        path_string(path)
    }

    async fn data_block(
        &self,
        session_id: &str,
        block: &DataBlock,
    ) -> Result<String, OffloadError> {
        validate_session_id(session_id)?;
        match &block.source {
            DataSource::Url(url) => Ok(url.url.clone()),
            DataSource::Base64(b64) => {
                let stored = self
                    .store_base64(&block.id, &b64.data, &b64.media_type)
                    .await?;
                path_string(stored)
            }
        }
    }

    /// Decodes a base64 payload and stores it under `data/`.
    async fn store_base64(
        &self,
        block_id: &str,
        data: &str,
        media_type: &str,
    ) -> Result<PathBuf, OffloadError> {
        let (fs, dir) = (Arc::clone(&self.fs), self.data_dir());
        let data = data.to_owned();
        let ext = extension_for(media_type);
        let block_id = block_id.to_owned();
        blocking(move || {
            let bytes = decode_base64(&data)
                .map_err(|reason| OffloadError::InvalidBase64 { block_id, reason })?;
            store_bytes(&*fs, &dir, &bytes, ext)
        })
        .await
    }

    /// The line standing for a data block in a tool result's text.
    async fn data_reference_line(&self, block: &DataBlock) -> Result<String, OffloadError> {
        let label = match &block.name {
            Some(name) => format!("data block {name:?}"),
            None => "data block".to_owned(),
        };
        let media_type = block.source.media_type();
        match &block.source {
            DataSource::Url(url) => Ok(format!("[{label}: {media_type}, at {}]", url.url)),
            DataSource::Base64(b64) => {
                match self
                    .store_base64(&block.id, &b64.data, &b64.media_type)
                    .await
                {
                    Ok(path) => Ok(format!(
                        "[{label}: {media_type}, saved to {}]",
                        path_string(path)?
                    )),
                    Err(OffloadError::InvalidBase64 { .. }) => {
                        // Keep the payload anyway: the text is all that is left.
                        let (fs, dir) = (Arc::clone(&self.fs), self.data_dir());
                        let raw = b64.data.clone().into_bytes();
                        let path = blocking(move || store_bytes(&*fs, &dir, &raw, "b64")).await?;
                        Ok(format!(
                            "[{label}: {media_type}, payload is not valid base64; raw payload \
                             saved to {}]",
                            path_string(path)?
                        ))
                    }
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// Moves every base64 payload of `msg` to `data/`, pointing its block
    /// at the file instead.
    async fn externalise_msg(&self, msg: &mut Msg) -> Result<(), OffloadError> {
        for block in &mut msg.content {
            match block {
                ContentBlock::Data(d) => self.externalise_block(d).await?,
                ContentBlock::Hint(h) => self.externalise_rich(&mut h.hint).await?,
                ContentBlock::ToolResult(r) => self.externalise_rich(&mut r.output).await?,
                ContentBlock::Text(_) | ContentBlock::Thinking(_) | ContentBlock::ToolCall(_) => {}
            }
        }
        Ok(())
    }

    async fn externalise_rich(&self, content: &mut RichContent) -> Result<(), OffloadError> {
        if let RichContent::Blocks(blocks) = content {
            for block in blocks {
                if let MediaBlock::Data(d) = block {
                    self.externalise_block(d).await?;
                }
            }
        }
        Ok(())
    }

    async fn externalise_block(&self, block: &mut DataBlock) -> Result<(), OffloadError> {
        let DataSource::Base64(b64) = &block.source else {
            return Ok(());
        };
        let path = match self
            .store_base64(&block.id, &b64.data, &b64.media_type)
            .await
        {
            Ok(path) => path,
            // Undecodable data stays inline: nothing is lost.
            Err(OffloadError::InvalidBase64 { .. }) => return Ok(()),
            Err(e) => return Err(e),
        };
        // Only an absolute path has a file URL; the root is made absolute
        // in `new`, so falling back to the inline payload is a last resort.
        let Ok(url) = url::Url::from_file_path(&path) else {
            return Ok(());
        };
        block.source = DataSource::Url(UrlSource {
            url: url.into(),
            media_type: b64.media_type.clone(),
        });
        Ok(())
    }
}

impl Offloader for FileOffloader {
    fn offload_context<'a>(
        &'a self,
        session_id: &'a str,
        msgs: &'a [Msg],
    ) -> BoxFuture<'a, Result<String, OffloadError>> {
        Box::pin(self.context(session_id, msgs))
    }

    fn offload_tool_result<'a>(
        &'a self,
        session_id: &'a str,
        result: &'a ToolResultBlock,
    ) -> BoxFuture<'a, Result<String, OffloadError>> {
        Box::pin(self.tool_result(session_id, result))
    }

    fn offload_data_block<'a>(
        &'a self,
        session_id: &'a str,
        block: &'a DataBlock,
    ) -> BoxFuture<'a, Result<String, OffloadError>> {
        Box::pin(self.data_block(session_id, block))
    }
}

/// One async mutex per session with an append in flight.
#[derive(Debug, Default)]
struct SessionLocks(Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>);

impl SessionLocks {
    fn get(&self, session_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // Clones are only made here, under the map lock, so an entry nobody
        // else holds can go: the map stays as small as the sessions in use.
        map.retain(|_, lock| Arc::strong_count(lock) > 1);
        Arc::clone(map.entry(session_id.to_owned()).or_default())
    }
}

/// Runs file work on the blocking pool.
async fn blocking<T, F>(work: F) -> Result<T, OffloadError>
where
    F: FnOnce() -> Result<T, OffloadError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| OffloadError::TaskFailed {
            reason: e.to_string(),
        })?
}

fn path_string(path: PathBuf) -> Result<String, OffloadError> {
    path.into_os_string()
        .into_string()
        .map_err(|path| OffloadError::NonUtf8Path { path: path.into() })
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> OffloadError + '_ {
    move |source| OffloadError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Stores `bytes` as `{DATA_DIR}/{sha256}.{ext}` unless an equal file is
/// there; `dir` is that directory as shown.
fn store_bytes(
    fs: &dyn OffloadFs,
    dir: &Path,
    bytes: &[u8],
    ext: &str,
) -> Result<PathBuf, OffloadError> {
    let name = format!("{}.{ext}", sha256_hex(bytes));
    let rel = Path::new(DATA_DIR).join(&name);
    let path = dir.join(name);
    if fs.file_len(&rel) != Some(bytes.len() as u64) {
        fs.write_atomic(&rel, bytes).map_err(io_at(&path))?;
    }
    Ok(path)
}

/// Appends `batch` to `rel` (shown as `shown`) with one write, after a
/// newline if the file does not end with one.
fn append_batch(
    fs: &dyn OffloadFs,
    rel: &Path,
    shown: &Path,
    batch: &[u8],
) -> Result<(), OffloadError> {
    let io = || -> io::Result<()> {
        let mut file = fs.open_append(rel)?;
        let mut buf = Vec::with_capacity(batch.len() + 1);
        if file.metadata()?.len() > 0 {
            file.seek(SeekFrom::End(-1))?;
            let mut last = [0u8];
            file.read_exact(&mut last)?;
            if last[0] != b'\n' {
                buf.push(b'\n');
            }
        }
        buf.extend_from_slice(batch);
        if !buf.is_empty() {
            file.write_all(&buf)?;
        }
        Ok(())
    };
    io().map_err(io_at(shown))
}
