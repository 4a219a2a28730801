//! [`SessionError`]: what the engine refuses or fails with, as data. The
//! service maps it to HTTP in one place; other doors (channels, realtime
//! voice) map it their own way.

/// An engine operation was refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The operator's policy does not allow what was asked; the message
    /// names the setting.
    #[error("{0}")]
    Forbidden(String),
}

/// The engine's result.
pub type Result<T, E = SessionError> = std::result::Result<T, E>;
