//! The crate's error type.

/// Everything that can go wrong while reading credentials or model cards.
///
/// Every variant carries the offending name or a message as data, so callers
/// (for example the service's credential routes) can map it to a response
/// without parsing strings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A credential's `type` is not one of the registered credential types.
    #[error("unknown credential type `{type_name}`")]
    UnknownCredentialType {
        /// The `type` value that was given.
        type_name: String,
    },
    /// A credential object has no `type` string to pick its kind by.
    #[error("credential has no `type` field naming its kind")]
    MissingCredentialType,
    /// A credential's fields do not fit its type (missing `api_key`, a number
    /// where a string belongs, ...).
    #[error("invalid `{type_name}` credential: {message}")]
    InvalidCredential {
        /// The credential type that was being read.
        type_name: String,
        /// What the parser objected to.
        message: String,
    },
    /// A `model_class` is not one of the chat model classes this crate knows.
    #[error("unknown model class `{name}`")]
    UnknownModelClass {
        /// The `model_class` value that was given.
        name: String,
    },
    /// A model card document is not valid YAML, or not shaped like a card.
    #[error("invalid model card YAML in {origin}: {message}")]
    InvalidCardYaml {
        /// Where the YAML came from (a file name or a caller-chosen label).
        origin: String,
        /// What the parser objected to.
        message: String,
    },
    /// A model card parsed, but its content breaks a card rule.
    #[error("invalid model card `{card}`: {reason}")]
    InvalidCard {
        /// The card's `name`.
        card: String,
        /// The rule it breaks.
        reason: String,
    },
}

/// Result alias with [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
