//! Errors of a model call.

use std::time::Duration;

use oxiscope_message::{ErrorInfo, ErrorType};

/// Why a model call failed.
///
/// Setup failures (authentication, a rejected request) come back from
/// [`ChatModel::call`](super::ChatModel::call); failures after the response
/// started arrive as an error item on the stream.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an error status.
    #[error("{provider} returned HTTP {status}{}: {message}", code_suffix(code.as_deref()))]
    Provider {
        /// The provider or model family.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's error code, when it sent one.
        code: Option<String>,
        /// The provider's message.
        message: String,
        /// The request id, for support tickets.
        request_id: Option<String>,
        /// How long the provider asked us to wait before retrying.
        retry_after: Option<Duration>,
    },
    /// The connection failed or timed out.
    #[error("connection to the model failed: {message}")]
    Connection {
        /// What went wrong.
        message: String,
    },
    /// The stream broke: malformed data, or it ended before the provider's
    /// final event.
    #[error("the model's stream is broken: {message}")]
    Stream {
        /// What went wrong.
        message: String,
    },
    /// The request could not be built (unsupported input, bad configuration).
    #[error("invalid model request: {message}")]
    InvalidRequest {
        /// What is wrong.
        message: String,
    },
}

fn code_suffix(code: Option<&str>) -> String {
    code.map(|c| format!(" ({c})")).unwrap_or_default()
}

impl ModelError {
    /// Whether retrying the same call may succeed.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Provider { status, .. } => matches!(status, 408 | 409 | 429 | 500..=599),
            Self::Connection { .. } | Self::Stream { .. } => true,
            Self::InvalidRequest { .. } => false,
        }
    }

    /// The error class reported in a reply's [`ErrorInfo`].
    #[must_use]
    pub fn error_type(&self) -> ErrorType {
        match self {
            Self::Provider { status: 401, .. } => ErrorType::Authentication,
            Self::Provider { status: 403, .. } => ErrorType::Permission,
            Self::Provider { status: 429, .. } => ErrorType::RateLimit,
            Self::Provider {
                status: 400..=499, ..
            }
            | Self::InvalidRequest { .. } => ErrorType::InvalidRequest,
            Self::Provider { .. } | Self::Stream { .. } => ErrorType::Upstream,
            Self::Connection { .. } => ErrorType::Connection,
        }
    }

    /// The error as a reply's [`ErrorInfo`].
    #[must_use]
    pub fn to_error_info(&self) -> ErrorInfo {
        ErrorInfo::new(self.error_type(), self.to_string())
    }
}
