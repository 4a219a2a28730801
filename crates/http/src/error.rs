//! The error type of the crate: data, not strings.

use std::net::IpAddr;
use std::time::Duration;

use reqwest::StatusCode;

use crate::address::NonPublic;

/// A boxed error from the transport underneath (connection, TLS, protocol).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The result type of the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while talking HTTP.
///
/// Errors keep their data (status, body, request id, retry delay) in fields;
/// [`Error::is_retryable`], [`Error::retry_after`] and [`Error::status`] read them.
/// In a stream, an error item is always the last item.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with a non-success status.
    #[error("{0}")]
    Status(Box<StatusError>),

    /// The HTTP client could not be set up (TLS roots, invalid options).
    #[error("cannot build the HTTP client: {source}")]
    Build {
        /// What failed.
        #[source]
        source: BoxError,
    },

    /// The request could not be built or sent as given (bad URL, bad header, unsupported
    /// scheme). Retrying does not help.
    #[error("invalid request: {source}")]
    InvalidRequest {
        /// What was wrong.
        #[source]
        source: BoxError,
    },

    /// The connection could not be made, or broke before the response headers arrived.
    ///
    /// The message says what failed, where, and what to check:
    /// `connection refused by http://127.0.0.1:8080: is the server running at
    /// http://127.0.0.1:8080?`.
    #[error("{}", connect_message(*kind, endpoint, source))]
    Connect {
        /// What failed.
        kind: ConnectFailure,
        /// Where: `scheme://host:port`, never a path, query or credentials.
        endpoint: String,
        /// The transport error.
        #[source]
        source: BoxError,
    },

    /// No response (headers, or a whole bounded download) arrived within the time allowed.
    #[error(
        "no response from {endpoint} within {after:?}: the server accepted the connection \
         but did not answer in time"
    )]
    Timeout {
        /// The time that was allowed.
        after: Duration,
        /// Where: `scheme://host:port`, never a path, query or credentials.
        endpoint: String,
    },

    /// A response body went silent: no chunk arrived within the idle timeout.
    #[error("response body idle for {after:?}")]
    IdleTimeout {
        /// The idle timeout that elapsed.
        after: Duration,
    },

    /// The response body ended before it was complete: the connection broke mid-body, or
    /// (raised by a caller) the stream ended before the protocol's final event.
    #[error("response body ended unexpectedly{}", source_suffix(source.as_ref()))]
    UnexpectedEof {
        /// The transport error, when the connection broke; `None` when the body ended
        /// cleanly but too early.
        #[source]
        source: Option<BoxError>,
    },

    /// A download or client restricted to public addresses
    /// ([`Destinations::PublicOnly`](crate::Destinations::PublicOnly)) named, resolved
    /// to or was redirected to an address that is not public. Nothing was sent to it.
    #[error("{url} resolves to {reason} ({address}), which is not fetched")]
    RefusedAddress {
        /// The URL refused (after redirects, the hop that was refused).
        url: String,
        /// The first non-public address it resolved to.
        address: IpAddr,
        /// Why that address is not public.
        reason: NonPublic,
    },

    /// A body was larger than the limit the caller set.
    #[error("response body larger than {limit} bytes")]
    BodyTooLarge {
        /// The limit in bytes.
        limit: u64,
    },

    /// Bytes of a body could not be decoded (invalid UTF-8, invalid JSON, an over-long
    /// line or event).
    #[error("cannot decode response body: {kind}")]
    Decode {
        /// What could not be decoded.
        kind: DecodeError,
    },
}

/// Why a connection could not be made (or broke before the response headers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectFailure {
    /// Nothing listens at the address: the server is not running, or the port is wrong.
    Refused,
    /// The host name could not be resolved.
    Dns,
    /// The TLS handshake failed: not an HTTPS server, or a certificate problem.
    Tls,
    /// No connection could be opened within the connect timeout.
    TimedOut {
        /// The connect timeout.
        after: Duration,
    },
    /// Anything else (a reset, a broken connection, a proxy failure).
    Other,
}

/// The message of [`Error::Connect`]: what failed, where, and a hint.
fn connect_message(kind: ConnectFailure, endpoint: &str, source: &BoxError) -> String {
    match kind {
        ConnectFailure::Refused => {
            format!("connection refused by {endpoint}: is the server running at {endpoint}?")
        }
        ConnectFailure::Dns => format!(
            "cannot resolve the host of {endpoint} ({}): check the host name and your \
             network or proxy settings",
            innermost(source.as_ref())
        ),
        ConnectFailure::Tls => format!(
            "TLS handshake with {endpoint} failed ({}): does the server speak HTTPS on that \
             port, with a valid certificate?",
            innermost(source.as_ref())
        ),
        ConnectFailure::TimedOut { after } => format!(
            "no connection to {endpoint} within {after:?}: is the host reachable (address, \
             firewall, proxy)?"
        ),
        ConnectFailure::Other => format!(
            "connection to {endpoint} failed: {}",
            innermost(source.as_ref())
        ),
    }
}

/// The message of the deepest error in a source chain: the most specific one.
fn innermost(err: &(dyn std::error::Error + 'static)) -> String {
    let mut last = err;
    while let Some(next) = source_of(last) {
        last = next;
    }
    last.to_string()
}

/// The source of `err`, looking inside `io::Error`s that wrap another error (their
/// `source()` skips the wrapped error itself).
fn source_of<'e>(
    err: &'e (dyn std::error::Error + 'static),
) -> Option<&'e (dyn std::error::Error + 'static)> {
    if let Some(io) = err.downcast_ref::<std::io::Error>()
        && let Some(inner) = io.get_ref()
    {
        return Some(inner);
    }
    err.source()
}

/// Classifies a transport error that happened while connecting.
fn classify(err: &reqwest::Error, connect_timeout: Duration) -> ConnectFailure {
    let mut chain: Vec<&(dyn std::error::Error + 'static)> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = next {
        chain.push(e);
        next = source_of(e);
    }
    if err.is_timeout() {
        return ConnectFailure::TimedOut {
            after: connect_timeout,
        };
    }
    let io_kind = |kind: std::io::ErrorKind| {
        chain.iter().any(|e| {
            e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == kind)
        })
    };
    // Not the first error: reqwest's own message names the URL, which may say anything.
    let says = |needle: &str| {
        chain
            .iter()
            .skip(1)
            .any(|e| e.to_string().to_ascii_lowercase().contains(needle))
    };
    if io_kind(std::io::ErrorKind::ConnectionRefused) {
        ConnectFailure::Refused
    } else if says("dns error")
        || says("failed to lookup address")
        || says("name or service not known")
        || says("no such host")
    {
        ConnectFailure::Dns
    } else if chain
        .iter()
        .any(|e| e.downcast_ref::<rustls::Error>().is_some())
        || says("tls")
        || says("certificate")
    {
        ConnectFailure::Tls
    } else if io_kind(std::io::ErrorKind::TimedOut) {
        ConnectFailure::TimedOut {
            after: connect_timeout,
        }
    } else {
        ConnectFailure::Other
    }
}

/// Where a request went, for messages: `scheme://host:port`, without the path, the
/// query or any credentials.
#[must_use]
pub fn endpoint_of(url: &url::Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port_or_known_default() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

/// A non-success HTTP status, with what the server said about it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StatusError {
    /// The status code.
    pub status: StatusCode,
    /// The response body, lossily decoded as UTF-8 and capped in length.
    pub body: String,
    /// The request id the server gave (`x-request-id`, `request-id`, ...), if any.
    pub request_id: Option<String>,
    /// The delay the server asked for in `Retry-After` (or `retry-after-ms`), if any.
    pub retry_after: Option<Duration>,
    /// The server's explicit `x-should-retry` verdict, if it sent one.
    pub should_retry: Option<bool>,
}

/// What could not be decoded in a body.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// A line was not valid UTF-8.
    #[error("invalid UTF-8 in line {line}")]
    Utf8 {
        /// The 1-based line number.
        line: u64,
    },
    /// A body, or a line of it, was not valid JSON (or not of the expected shape).
    #[error("invalid JSON{}: {source}", line_suffix(*line))]
    Json {
        /// The 1-based line number, for line-delimited bodies.
        line: Option<u64>,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A line or an event grew past the limit.
    #[error("line or event longer than {limit} bytes")]
    TooLong {
        /// The limit in bytes.
        limit: usize,
    },
}

/// How much of an error body the error message shows.
const DISPLAY_BODY_CHARS: usize = 1000;

fn line_suffix(line: Option<u64>) -> String {
    line.map(|n| format!(" in line {n}")).unwrap_or_default()
}

fn source_suffix(source: Option<&BoxError>) -> String {
    source.map(|e| format!(": {e}")).unwrap_or_default()
}

impl std::fmt::Display for StatusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP status {}", self.status)?;
        if let Some(id) = &self.request_id {
            write!(f, " (request id {id})")?;
        }
        if !self.body.is_empty() {
            // The whole body stays in the field; messages show its start.
            match self.body.char_indices().nth(DISPLAY_BODY_CHARS) {
                Some((cut, _)) => write!(f, ": {}...", &self.body[..cut])?,
                None => write!(f, ": {}", self.body)?,
            }
        }
        Ok(())
    }
}

impl StatusError {
    /// A status error with a body and nothing else; for tests and for callers that map
    /// an error reported in a successful response.
    #[must_use]
    pub fn new(status: StatusCode, body: impl Into<String>) -> Self {
        Self {
            status,
            body: body.into(),
            request_id: None,
            retry_after: None,
            should_retry: None,
        }
    }

    /// Sets the request id.
    #[must_use]
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Self {
        self.request_id = Some(request_id.into());
        self
    }

    /// Sets the delay the server asked for.
    #[must_use]
    pub fn with_retry_after(mut self, retry_after: Duration) -> Self {
        self.retry_after = Some(retry_after);
        self
    }

    /// Whether this status is worth retrying: the server's `x-should-retry` verdict if it
    /// gave one, else 408, 409, 429 and 5xx except 501 and 505.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        self.should_retry
            .unwrap_or_else(|| is_retryable_status(self.status))
    }
}

/// Whether a status is transient by its code alone: 408, 409, 429, and 5xx except 501
/// (not implemented) and 505 (version not supported).
#[must_use]
pub fn is_retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409 | 429)
        || (status.is_server_error() && !matches!(status.as_u16(), 501 | 505))
}

impl Error {
    /// The error for a stream that ended cleanly before the protocol's final event.
    ///
    /// Providers return this when, for example, an OpenAI stream ends without `[DONE]`.
    #[must_use]
    pub fn unexpected_eof() -> Self {
        Self::UnexpectedEof { source: None }
    }

    /// Whether the failure is transient, so that trying the same call again may succeed.
    ///
    /// The client itself retries only before a response body starts; a caller that sees
    /// [`Error::IdleTimeout`] or [`Error::UnexpectedEof`] mid-stream must decide whether a
    /// repeat is safe (what was already consumed would be produced again).
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Status(status) => status.is_retryable(),
            Self::Connect { .. }
            | Self::Timeout { .. }
            | Self::IdleTimeout { .. }
            | Self::UnexpectedEof { .. } => true,
            Self::Build { .. }
            | Self::InvalidRequest { .. }
            | Self::RefusedAddress { .. }
            | Self::BodyTooLarge { .. }
            | Self::Decode { .. } => false,
        }
    }

    /// The delay the server asked for before a retry, if it gave one.
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Status(status) => status.retry_after,
            _ => None,
        }
    }

    /// The HTTP status, for [`Error::Status`].
    #[must_use]
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Self::Status(status) => Some(status.status),
            _ => None,
        }
    }

    /// The request id the server gave, for [`Error::Status`].
    #[must_use]
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Self::Status(status) => status.request_id.as_deref(),
            _ => None,
        }
    }

    /// The (capped) response body, for [`Error::Status`].
    #[must_use]
    pub fn body(&self) -> Option<&str> {
        match self {
            Self::Status(status) => Some(status.body.as_str()),
            _ => None,
        }
    }

    /// Classifies a transport error that happened before the response headers arrived.
    /// `timeout` is the response timeout, reported when the transport itself timed out
    /// waiting for headers; `connect_timeout` the one reported for a connect timeout.
    pub(crate) fn from_send(
        err: reqwest::Error,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Self {
        if let Some(refused) = find_refusal(&err) {
            return Self::RefusedAddress {
                url: err.url().map(ToString::to_string).unwrap_or_default(),
                address: refused.address,
                reason: refused.reason,
            };
        }
        let endpoint = err
            .url()
            .map_or_else(|| "the server".to_owned(), endpoint_of);
        if err.is_builder() {
            Self::InvalidRequest {
                source: Box::new(err),
            }
        } else if err.is_timeout() && !err.is_connect() {
            Self::Timeout {
                after: timeout,
                endpoint,
            }
        } else {
            Self::Connect {
                kind: classify(&err, connect_timeout),
                endpoint,
                source: Box::new(err),
            }
        }
    }

    /// Classifies a transport error that happened while reading a body: no content
    /// decoders are enabled, so any such error means the body was cut short.
    pub(crate) fn from_body(err: reqwest::Error) -> Self {
        Self::UnexpectedEof {
            source: Some(Box::new(err)),
        }
    }
}

/// The refusal of the guarded resolver, somewhere in the source chain of a send error.
fn find_refusal(err: &reqwest::Error) -> Option<&Refusal> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = source {
        if let Some(refusal) = e.downcast_ref::<Refusal>() {
            return Some(refusal);
        }
        source = e.source();
    }
    None
}

/// A host name resolved to an address that is not public: the guarded resolver's
/// error, turned into [`Error::RefusedAddress`] once it comes back from the transport.
#[derive(Debug, thiserror::Error)]
#[error("{host} resolves to {reason} ({address})")]
pub(crate) struct Refusal {
    pub(crate) host: String,
    pub(crate) address: IpAddr,
    pub(crate) reason: NonPublic,
}

impl From<StatusError> for Error {
    fn from(value: StatusError) -> Self {
        Self::Status(Box::new(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status_error(status: u16, body: &str) -> StatusError {
        StatusError::new(StatusCode::from_u16(status).unwrap(), body).with_request_id("req_1")
    }

    #[test]
    fn endpoints_leave_out_path_query_and_credentials() {
        let url = url::Url::parse("https://user:secret@api.example.com/v1/chat?key=sk-1").unwrap();
        assert_eq!(endpoint_of(&url), "https://api.example.com:443");
        let url = url::Url::parse("http://[::1]:11434/api").unwrap();
        assert_eq!(endpoint_of(&url), "http://[::1]:11434");
    }

    #[test]
    fn connect_messages_say_what_failed_where_and_what_to_check() {
        let err = |kind| Error::Connect {
            kind,
            endpoint: "http://127.0.0.1:9".to_owned(),
            source: std::io::Error::other("inner detail").into(),
        };
        assert_eq!(
            err(ConnectFailure::Refused).to_string(),
            "connection refused by http://127.0.0.1:9: is the server running at \
             http://127.0.0.1:9?"
        );
        assert_eq!(
            err(ConnectFailure::Other).to_string(),
            "connection to http://127.0.0.1:9 failed: inner detail"
        );
        assert!(
            err(ConnectFailure::TimedOut {
                after: Duration::from_secs(10)
            })
            .to_string()
            .starts_with("no connection to http://127.0.0.1:9 within 10s")
        );
    }

    #[test]
    fn message_names_status_request_id_and_body_start() {
        let err = Error::from(status_error(429, "slow down"));
        assert_eq!(
            err.to_string(),
            "HTTP status 429 Too Many Requests (request id req_1): slow down"
        );
        let long = Error::from(status_error(500, &"é".repeat(5000)));
        let shown = long.to_string();
        assert!(shown.ends_with("..."));
        assert_eq!(
            shown.chars().filter(|c| *c == 'é').count(),
            DISPLAY_BODY_CHARS
        );
    }

    #[test]
    fn retryable_statuses() {
        let retryable: Vec<u16> = (100..600)
            .filter(|code| StatusCode::from_u16(*code).is_ok_and(is_retryable_status))
            .filter(|code| !(500..600).contains(code))
            .collect();
        assert_eq!(retryable, [408, 409, 429]);
        for code in [500, 502, 503, 504, 529] {
            assert!(
                is_retryable_status(StatusCode::from_u16(code).unwrap()),
                "{code}"
            );
        }
        for code in [400, 401, 403, 404, 413, 422, 501, 505] {
            assert!(
                !is_retryable_status(StatusCode::from_u16(code).unwrap()),
                "{code}"
            );
        }
    }

    #[test]
    fn retry_after_is_read_through_the_error() {
        let err = Error::from(status_error(429, "").with_retry_after(Duration::from_secs(2)));
        assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
        assert_eq!(err.status(), Some(StatusCode::TOO_MANY_REQUESTS));
    }

    #[test]
    fn should_retry_verdict_wins() {
        let mut status = status_error(503, "");
        status.should_retry = Some(false);
        assert!(!Error::from(status.clone()).is_retryable());
        status.status = StatusCode::BAD_REQUEST;
        status.should_retry = Some(true);
        assert!(Error::from(status).is_retryable());
    }

    #[test]
    fn accessors_are_empty_for_other_variants() {
        let err = Error::IdleTimeout {
            after: Duration::from_secs(1),
        };
        assert_eq!(
            (
                err.status(),
                err.request_id(),
                err.body(),
                err.retry_after()
            ),
            (None, None, None, None)
        );
        assert!(err.is_retryable());
        assert!(!Error::BodyTooLarge { limit: 1 }.is_retryable());
        assert_eq!(
            Error::unexpected_eof().to_string(),
            "response body ended unexpectedly"
        );
    }
}
