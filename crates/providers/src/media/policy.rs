//! [`MediaPolicy`]: which media URLs a model's formatter may read or fetch.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Default cap on one media input (a local file or a download): 20 MiB.
pub const DEFAULT_MAX_MEDIA_BYTES: u64 = 20 * 1024 * 1024;

/// Default time allowed for one download, redirects included: 30 s.
pub const DEFAULT_MEDIA_TIMEOUT: Duration = Duration::from_secs(30);

/// Which `http(s)` media URLs a formatter downloads.
///
/// Only downloads are governed: a URL a vendor accepts as a link (an
/// OpenAI `image_url`) is passed on unchanged, and the vendor fetches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RemoteMedia {
    /// Any URL, through the HTTP client's proxies.
    #[default]
    Allow,
    /// Public addresses only: a URL naming, resolving to or redirecting to
    /// a loopback, private, link-local (cloud metadata), carrier-grade NAT,
    /// unique-local, multicast, broadcast, documentation or reserved
    /// address is refused before anything is sent to it (see
    /// [`oxiscope_http::Destinations::PublicOnly`]).
    PublicOnly,
    /// No downloads at all: a message must carry its media inline.
    Deny,
}

/// Which addresses a model built by [`crate::chat_model_with`] sends its
/// calls to (its credential's `base_url`, host or `api_host`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Endpoints {
    /// Any endpoint, through the HTTP client's proxies, as a library user on
    /// their own machine expects (a local Ollama or vLLM server included).
    #[default]
    Any,
    /// Public addresses only: an endpoint naming or resolving to a loopback,
    /// private, link-local (cloud metadata) or other non-public address is
    /// refused before anything is sent, and the call fails with
    /// [`oxiscope_model::ModelError::InvalidRequest`] naming the endpoint and
    /// the rule; redirects are not followed and no proxy is used (see
    /// [`oxiscope_http::HttpClient::shared_public_only`]). Its downloads of
    /// media go through the same client, so they are public-only too.
    PublicOnly,
}

/// The error of a call whose endpoint a [`Endpoints::PublicOnly`] model
/// refused ([`oxiscope_http::Error::RefusedAddress`]), naming the endpoint,
/// the address and the rule; `None` for any other HTTP error.
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "ollama",
    feature = "gemini"
))]
pub(crate) fn refused_endpoint(err: &oxiscope_http::Error) -> Option<oxiscope_model::ModelError> {
    let oxiscope_http::Error::RefusedAddress {
        url,
        address,
        reason,
    } = err
    else {
        return None;
    };
    Some(oxiscope_model::ModelError::InvalidRequest {
        message: format!(
            "the model endpoint {url} resolves to {reason} ({address}), and model endpoints \
             are restricted to public addresses here; nothing was sent to it"
        ),
    })
}

/// What a model's formatter may read and download to inline a data block
/// given by URL (`file://`, `http(s)://`).
///
/// The default is what a library user on their own machine expects: any
/// local file, any URL. A service running models for others confines them:
///
/// ```
/// use std::path::PathBuf;
/// use oxiscope_providers::{MediaPolicy, RemoteMedia};
///
/// let policy = MediaPolicy {
///     file_roots: Some(vec![PathBuf::from("/srv/oxiscope/workspaces/u1/w1")]),
///     remote: RemoteMedia::PublicOnly,
///     ..MediaPolicy::default()
/// };
/// assert_eq!(policy.max_bytes, oxiscope_providers::DEFAULT_MAX_MEDIA_BYTES);
/// ```
///
/// Whatever the policy, only regular files are read (never a FIFO, socket
/// or device), and no read or download holds more than `max_bytes + 1`
/// bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MediaPolicy {
    /// Where `file://` URLs may point. `None`: anywhere. `Some(roots)`:
    /// only at a regular file inside one of `roots` once `..` and every
    /// symbolic link are resolved; `Some(vec![])` refuses every `file://`
    /// URL.
    pub file_roots: Option<Vec<PathBuf>>,
    /// Which `http(s)` URLs are downloaded.
    pub remote: RemoteMedia,
    /// Largest file read or body downloaded, in bytes.
    pub max_bytes: u64,
    /// Time allowed for one download.
    pub timeout: Duration,
    /// Which addresses the model itself calls (not a media rule, but given
    /// to [`crate::chat_model_with`] alongside them).
    pub endpoints: Endpoints,
}

impl Default for MediaPolicy {
    fn default() -> Self {
        Self {
            file_roots: None,
            remote: RemoteMedia::Allow,
            max_bytes: DEFAULT_MAX_MEDIA_BYTES,
            timeout: DEFAULT_MEDIA_TIMEOUT,
            endpoints: Endpoints::Any,
        }
    }
}

impl MediaPolicy {
    /// Confines `file://` URLs to `roots` (empty: no local files at all).
    #[must_use]
    pub fn with_file_roots(mut self, roots: Vec<PathBuf>) -> Self {
        self.file_roots = Some(roots);
        self
    }

    /// Sets which `http(s)` URLs are downloaded.
    #[must_use]
    pub fn with_remote(mut self, remote: RemoteMedia) -> Self {
        self.remote = remote;
        self
    }

    /// Sets which addresses the model calls.
    #[must_use]
    pub fn with_endpoints(mut self, endpoints: Endpoints) -> Self {
        self.endpoints = endpoints;
        self
    }

    /// Caps each file or download at `max_bytes` and each download at
    /// `timeout`.
    #[must_use]
    pub fn with_limits(mut self, max_bytes: u64, timeout: Duration) -> Self {
        self.max_bytes = max_bytes;
        self.timeout = timeout;
        self
    }
}
