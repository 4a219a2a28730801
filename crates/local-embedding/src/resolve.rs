//! [`ModelLocator`]: where the model's files are, fetching them on first
//! use.

use std::path::{Path, PathBuf};

use oxiscope_http::HttpClient;

use crate::download::{DEFAULT_MODEL_BASE_URL, ProgressFn, download_model, stderr_progress};
use crate::error::{Error, Result};
use crate::model::{MINILM_MODEL_NAME, MiniLmEmbeddingModel};

/// Names the directory that holds (or is to hold) the model's files.
pub const MODEL_DIR_ENV: &str = "OXISCOPE_EMBEDDING_MODEL_DIR";

/// Names Oxiscope's data directory; the model goes to
/// `<data dir>/models/all-MiniLM-L6-v2`.
pub const DATA_DIR_ENV: &str = "OXISCOPE_DATA_DIR";

/// Finds the model's directory: an explicit path (argument, else
/// [`MODEL_DIR_ENV`]), else `<data dir>/models/all-MiniLM-L6-v2` (the data
/// dir from an argument, else [`DATA_DIR_ENV`], else `oxiscope` in the
/// user's data directory). When that directory does not hold the model,
/// [`load`](Self::load) downloads it there first (unless downloads are
/// off), from [`DEFAULT_MODEL_BASE_URL`] or the configured base URL, with
/// a progress line on stderr.
///
/// ```
/// use oxiscope_local_embedding::ModelLocator;
///
/// let locator = ModelLocator::new().with_data_dir("/srv/oxiscope").with_model_dir(None::<&str>);
/// # if std::env::var_os("OXISCOPE_EMBEDDING_MODEL_DIR").is_none() {
/// assert_eq!(
///     locator.model_dir()?,
///     std::path::Path::new("/srv/oxiscope/models/all-MiniLM-L6-v2")
/// );
/// # }
/// # Ok::<(), oxiscope_local_embedding::Error>(())
/// ```
#[derive(Clone)]
pub struct ModelLocator {
    model_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    base_url: String,
    download: bool,
    progress: ProgressFn,
}

impl std::fmt::Debug for ModelLocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelLocator")
            .field("model_dir", &self.model_dir)
            .field("data_dir", &self.data_dir)
            .field("base_url", &self.base_url)
            .field("download", &self.download)
            .finish_non_exhaustive()
    }
}

impl Default for ModelLocator {
    fn default() -> Self {
        Self::new()
    }
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

impl ModelLocator {
    /// The locator the environment describes ([`MODEL_DIR_ENV`],
    /// [`DATA_DIR_ENV`]), downloading from the Hugging Face hub.
    #[must_use]
    pub fn new() -> Self {
        Self {
            model_dir: env_path(MODEL_DIR_ENV),
            data_dir: env_path(DATA_DIR_ENV),
            base_url: DEFAULT_MODEL_BASE_URL.to_owned(),
            download: true,
            progress: stderr_progress(),
        }
    }

    /// Uses `dir` as the model's directory (`None`: the data directory's).
    #[must_use]
    pub fn with_model_dir(mut self, dir: Option<impl Into<PathBuf>>) -> Self {
        self.model_dir = dir.map(Into::into);
        self
    }

    /// Uses `dir` as Oxiscope's data directory.
    #[must_use]
    pub fn with_data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Fetches `<base_url>/<file>` instead of the Hugging Face hub.
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Whether a missing model is downloaded (on by default).
    #[must_use]
    pub fn with_download(mut self, download: bool) -> Self {
        self.download = download;
        self
    }

    /// Reports download progress to `progress` instead of stderr.
    #[must_use]
    pub fn with_progress(mut self, progress: ProgressFn) -> Self {
        self.progress = progress;
        self
    }

    /// The model's directory (which may not exist yet).
    ///
    /// # Errors
    /// [`Error::NoDataDir`] when no directory is given and the user has no
    /// data directory.
    pub fn model_dir(&self) -> Result<PathBuf> {
        if let Some(dir) = &self.model_dir {
            return Ok(dir.clone());
        }
        let data = self
            .data_dir
            .clone()
            .or_else(|| dirs::data_dir().map(|d| d.join("oxiscope")))
            .ok_or(Error::NoDataDir)?;
        Ok(data.join("models").join(MINILM_MODEL_NAME))
    }

    /// The model's directory, downloading the files into it first when it
    /// does not hold them.
    ///
    /// # Errors
    /// [`Error::MissingFile`] when the model is missing and downloads are
    /// off, [`Error::Download`] when fetching fails (nothing is left in
    /// the directory then), [`Error::Corrupt`] when the fetched files do
    /// not load, [`Error::Io`] when the directory cannot be written.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the download and may leave a
    /// `.all-MiniLM-L6-v2.partial-<pid>` directory beside the target, which
    /// the next download replaces; the target itself is never half-written.
    pub async fn resolve(&self) -> Result<PathBuf> {
        let dir = self.model_dir()?;
        if is_complete(&dir) {
            return Ok(dir);
        }
        if !self.download {
            return Err(Error::MissingFile {
                path: dir.join("model.safetensors"),
            });
        }
        let http = HttpClient::shared().map_err(|e| Error::Download {
            url: self.base_url.clone(),
            reason: e.to_string(),
        })?;
        download_model(&http, &self.base_url, &dir, &self.progress).await?;
        Ok(dir)
    }

    /// Resolves the directory (see [`resolve`](Self::resolve)) and loads
    /// the model from it on a blocking thread.
    ///
    /// # Errors
    /// As [`resolve`](Self::resolve) and [`MiniLmEmbeddingModel::load`].
    pub async fn load(&self) -> Result<MiniLmEmbeddingModel> {
        let dir = self.resolve().await?;
        tokio::task::spawn_blocking(move || MiniLmEmbeddingModel::load(dir))
            .await
            .map_err(|e| Error::Inference {
                message: format!("the loading task failed: {e}"),
            })?
    }
}

/// Whether `dir` holds the files a load needs.
pub(crate) fn is_complete(dir: &Path) -> bool {
    let has = |name: &str| dir.join(name).is_file();
    has("config.json") && has("model.safetensors") && (has("vocab.txt") || has("tokenizer.json"))
}
