//! Fetching the model files from a Hugging Face-style file server into a
//! directory, atomically: every file goes to a temporary directory beside
//! the target, is size-checked, and the directory is renamed into place
//! only when all files are complete and the model loads. A cut download
//! leaves nothing behind.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::StreamExt;
use oxiscope_http::HttpClient;
use tokio::io::AsyncWriteExt;

use crate::error::{Error, Result};
use crate::model::{MODEL_FILES, MiniLmEmbeddingModel};

/// Where the files of all-MiniLM-L6-v2 are fetched from by default:
/// `<base>/<file>`.
pub const DEFAULT_MODEL_BASE_URL: &str =
    "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main";

/// The optional files fetched too when the server has them (a 404 is
/// fine): they pin the sequence length and the exact tokenizer.
const OPTIONAL_FILES: [&str; 2] = ["sentence_bert_config.json", "tokenizer.json"];

/// Told how a download goes: file name, bytes so far, total when known.
pub type ProgressFn = Arc<dyn Fn(&str, u64, Option<u64>) + Send + Sync>;

/// A progress reporter that prints `downloading <file>: NN%` on one
/// stderr line, once per whole percent.
#[must_use]
pub fn stderr_progress() -> ProgressFn {
    let last = Arc::new(std::sync::Mutex::new((String::new(), u64::MAX)));
    Arc::new(move |file, done, total| {
        let percent = match total {
            Some(t) if t > 0 => done.saturating_mul(100) / t,
            _ => done >> 20,
        };
        let Ok(mut last) = last.lock() else { return };
        if last.0 == file && last.1 == percent {
            return;
        }
        *last = (file.to_owned(), percent);
        let line = match total {
            Some(_) => format!("\rdownloading all-MiniLM-L6-v2 {file}: {percent:>3}%"),
            None => format!("\rdownloading all-MiniLM-L6-v2 {file}: {percent} MiB"),
        };
        let done_now = total.is_some_and(|t| done >= t);
        eprint!("{line}{}", if done_now { "\n" } else { "" });
    })
}

/// Downloads the model into `target` (which must not exist yet) from
/// `base_url`, reporting to `progress`.
pub(crate) async fn download_model(
    http: &HttpClient,
    base_url: &str,
    target: &Path,
    progress: &ProgressFn,
) -> Result<()> {
    let parent = target.parent().unwrap_or_else(|| Path::new("."));
    tokio::fs::create_dir_all(parent)
        .await
        .map_err(|source| Error::Io {
            path: parent.to_owned(),
            source,
        })?;
    let staging = staging_dir(target);
    let _ = tokio::fs::remove_dir_all(&staging).await;
    tokio::fs::create_dir(&staging)
        .await
        .map_err(|source| Error::Io {
            path: staging.clone(),
            source,
        })?;
    let result = fill(http, base_url, &staging, progress).await;
    let result = match result {
        Ok(()) => check_and_move(&staging, target).await,
        Err(e) => Err(e),
    };
    if result.is_err() {
        let _ = tokio::fs::remove_dir_all(&staging).await;
    }
    result
}

/// `<parent>/.<name>.partial-<pid>`: a sibling, so the final rename stays
/// on one file system.
fn staging_dir(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".to_owned());
    target.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

async fn fill(http: &HttpClient, base: &str, dir: &Path, progress: &ProgressFn) -> Result<()> {
    let base = base.trim_end_matches('/');
    for file in MODEL_FILES {
        fetch(
            http,
            &format!("{base}/{file}"),
            &dir.join(file),
            file,
            progress,
            true,
        )
        .await?;
    }
    for file in OPTIONAL_FILES {
        fetch(
            http,
            &format!("{base}/{file}"),
            &dir.join(file),
            file,
            progress,
            false,
        )
        .await?;
    }
    Ok(())
}

/// Streams `url` into `path`, checking the byte count against
/// `Content-Length`; a 404 of an optional file is skipped.
async fn fetch(
    http: &HttpClient,
    url: &str,
    path: &Path,
    name: &str,
    progress: &ProgressFn,
    required: bool,
) -> Result<()> {
    let failed = |reason: String| Error::Download {
        url: url.to_owned(),
        reason,
    };
    let response = match http.send(http.get(url)).await {
        Ok(r) => r,
        Err(e) if !required && e.status().map(|s| s.as_u16()) == Some(404) => return Ok(()),
        Err(e) => return Err(failed(e.to_string())),
    };
    let total = response.content_length();
    let mut body = http.body(response);
    let mut out = tokio::fs::File::create(path)
        .await
        .map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let mut done: u64 = 0;
    progress(name, 0, total);
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| failed(e.to_string()))?;
        out.write_all(&chunk).await.map_err(io)?;
        done += chunk.len() as u64;
        if total.is_some_and(|t| done > t) {
            return Err(failed(format!("more than the announced {done} bytes")));
        }
        progress(name, done, total);
    }
    out.flush().await.map_err(io)?;
    out.sync_all().await.map_err(io)?;
    if let Some(expected) = total
        && done != expected
    {
        return Err(failed(format!("got {done} of {expected} bytes")));
    }
    if done == 0 {
        return Err(failed("the file is empty".to_owned()));
    }
    if total.is_none() {
        // The length is known now: the reporter can finish its line.
        progress(name, done, Some(done));
    }
    Ok(())
}

/// Loads the staged model (so a file that arrived whole but broken is
/// refused), then renames the directory into place.
async fn check_and_move(staging: &Path, target: &Path) -> Result<()> {
    let dir = staging.to_owned();
    tokio::task::spawn_blocking(move || MiniLmEmbeddingModel::load(&dir).map(drop))
        .await
        .map_err(|e| Error::Inference {
            message: format!("the check of the downloaded model failed: {e}"),
        })??;
    match tokio::fs::rename(staging, target).await {
        Ok(()) => Ok(()),
        // Another process finished the same download first: keep its copy.
        Err(_) if crate::resolve::is_complete(target) => {
            let _ = tokio::fs::remove_dir_all(staging).await;
            Ok(())
        }
        Err(source) => Err(Error::Io {
            path: target.to_owned(),
            source,
        }),
    }
}
