//! Errors of the memory middleware's setup.

/// What can go wrong when a memory middleware is built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is out of range or a path is unusable.
    #[error("invalid memory parameters: {0}")]
    InvalidParameters(String),
}

/// The result type of this crate.
pub type Result<T> = std::result::Result<T, Error>;
