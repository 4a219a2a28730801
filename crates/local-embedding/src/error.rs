//! [`Error`]: what can go wrong loading, fetching or running the model.

use std::path::PathBuf;

use oxiscope_model::ModelError;

/// A failure of the local embedding model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file the model needs is not in its directory.
    #[error("the model file {path} is missing")]
    MissingFile {
        /// The file that was looked for.
        path: PathBuf,
    },
    /// A model file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A model file was read but does not hold what the model needs
    /// (truncated weights, a wrong shape, invalid JSON, an unknown setting).
    #[error("{path} is not a usable model file: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Running the network failed.
    #[error("inference failed: {message}")]
    Inference {
        /// What the tensor library said.
        message: String,
    },
    /// Fetching the model files failed; nothing was left in the model
    /// directory.
    #[error("cannot download {url}: {reason}")]
    Download {
        /// The file's URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// No model directory was given and no data directory is known.
    #[error(
        "no directory for the embedding model is known: set OXISCOPE_EMBEDDING_MODEL_DIR or OXISCOPE_DATA_DIR"
    )]
    NoDataDir,
    /// The request asked for vectors of another size than the model makes.
    #[error("all-MiniLM-L6-v2 produces vectors of {supported} values, not {asked}")]
    Dimensions {
        /// The size asked for.
        asked: u32,
        /// The model's only size.
        supported: usize,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn inference(err: &candle_core::Error) -> Self {
        Self::Inference {
            message: err.to_string(),
        }
    }

    /// Takes `reason` by value so that `map_err(|e| Error::corrupt(path, e))`
    /// reads naturally.
    #[allow(clippy::needless_pass_by_value)]
    pub(crate) fn corrupt(path: impl Into<PathBuf>, reason: impl ToString) -> Self {
        Self::Corrupt {
            path: path.into(),
            reason: reason.to_string(),
        }
    }
}

impl From<Error> for ModelError {
    /// A failed download is a connection error (retrying may help); a
    /// broken run is a stream error; everything else is a request that
    /// cannot be served as configured.
    fn from(err: Error) -> Self {
        match err {
            Error::Download { .. } => Self::Connection {
                message: err.to_string(),
            },
            Error::Inference { .. } => Self::Stream {
                message: err.to_string(),
            },
            _ => Self::InvalidRequest {
                message: err.to_string(),
            },
        }
    }
}
