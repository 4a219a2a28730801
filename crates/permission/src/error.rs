//! Errors of the permission crate.

/// Why a permission-related value could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A rule string (`Tool(content)` or `Tool`) is malformed.
    #[error("invalid permission rule `{rule}`: {reason}")]
    InvalidRule {
        /// The rule text as given.
        rule: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A permission mode name is not one of the five modes.
    #[error(
        "unknown permission mode `{0}` (expected default, accept-edits, explore, bypass or dont-ask)"
    )]
    UnknownMode(String),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;
