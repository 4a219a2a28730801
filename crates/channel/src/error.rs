//! What can go wrong in a channel: the platform refused or failed, the
//! connection broke, the configuration is wrong, or the engine refused.

use std::time::Duration;

/// A channel's failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The platform answered with an error.
    #[error("the platform answered {status}: {description}")]
    Platform {
        /// The HTTP status (or the platform's error code).
        status: u16,
        /// What the platform said.
        description: String,
        /// The delay the platform asked for before trying again.
        retry_after: Option<Duration>,
    },
    /// No answer: the connection failed, timed out or broke mid-body.
    #[error("the platform could not be reached: {0}")]
    Transport(String),
    /// The platform sent something that is not its protocol.
    #[error("the platform sent a malformed answer: {0}")]
    Malformed(String),
    /// Credentials or config that do not fit the channel type.
    #[error("{0}")]
    Invalid(String),
    /// The channel type is not registered.
    #[error("unknown channel type {0:?}")]
    UnknownType(String),
    /// The storage backend keeps no channels, or failed.
    #[error("storage: {0}")]
    Storage(String),
    /// The session engine refused or failed.
    #[error(transparent)]
    Session(#[from] oxiscope_session::SessionError),
}

impl Error {
    /// Whether trying again later may succeed (a 429, a 5xx, a broken
    /// connection).
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Platform { status, .. } => *status == 429 || *status >= 500,
            Self::Transport(_) | Self::Malformed(_) | Self::Storage(_) => true,
            _ => false,
        }
    }

    /// The delay the platform asked for, if any.
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Platform { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the credentials were refused (no retry helps until they
    /// are changed).
    #[must_use]
    pub fn is_unauthorized(&self) -> bool {
        matches!(
            self,
            Self::Platform {
                status: 401 | 403,
                ..
            }
        )
    }
}

impl From<oxiscope_storage::Error> for Error {
    fn from(e: oxiscope_storage::Error) -> Self {
        Self::Storage(e.to_string())
    }
}

/// `Result` of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
