//! [`MediaLoader`]: the bytes behind a media URL, read or downloaded as the
//! model's [`MediaPolicy`] allows. The only place providers touch local
//! files or download media.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use oxiscope_http::reqwest::Url;
use oxiscope_http::{Destinations, DownloadOptions, HttpClient};
use oxiscope_message::DataSource;
use oxiscope_model::ModelError;

use super::{MediaPolicy, RemoteMedia};

/// Reads and downloads media for a formatter.
#[derive(Debug, Clone, Default)]
pub(crate) struct MediaLoader {
    /// The client for downloads; the process's shared one when `None`.
    pub(crate) http: Option<HttpClient>,
    pub(crate) policy: MediaPolicy,
}

impl MediaLoader {
    /// The base64 text of `source`: inline data as it is (a `data:` URL's
    /// payload too), else the bytes of [`fetch`](Self::fetch).
    ///
    /// # Errors
    /// As [`fetch`](Self::fetch).
    #[cfg_attr(
        not(any(feature = "anthropic", feature = "ollama")),
        allow(dead_code, reason = "used by the Anthropic and Ollama formatters")
    )]
    pub(crate) async fn base64(&self, source: &DataSource) -> Result<String, ModelError> {
        let url = match source {
            DataSource::Base64(b) => return Ok(b.data.clone()),
            DataSource::Url(u) => u.url.as_str(),
        };
        if let Some((_, data)) = url
            .strip_prefix("data:")
            .and_then(|rest| rest.split_once(";base64,"))
        {
            return Ok(data.to_owned());
        }
        Ok(STANDARD.encode(self.fetch(url).await?))
    }

    /// The bytes `url` names: a `file://` URL read, an `http(s)://` one
    /// downloaded, each as the policy allows.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] naming the URL and the reason: the
    /// policy refuses it (a file outside the roots, a non-public address,
    /// downloads turned off), it is not a regular file, it is over the size
    /// cap, it cannot be read or downloaded, or its scheme is another.
    ///
    /// # Cancel safety
    /// Dropping the future abandons a download; a file read already started
    /// finishes on its blocking thread and is dropped.
    pub(crate) async fn fetch(&self, url: &str) -> Result<Bytes, ModelError> {
        let parsed = Url::parse(url).map_err(|e| refused(url, &e.to_string()))?;
        match parsed.scheme() {
            "file" => {
                let policy = self.policy.clone();
                let read = tokio::task::spawn_blocking(move || super::file::read(&parsed, &policy))
                    .await
                    .map_err(|e| refused(url, &e.to_string()))?;
                read.map(Bytes::from)
                    .map_err(|reason| refused(url, &reason))
            }
            "http" | "https" => self.download(url, parsed).await,
            other => Err(refused(url, &format!("unsupported scheme `{other}`"))),
        }
    }

    async fn download(&self, shown: &str, url: Url) -> Result<Bytes, ModelError> {
        let destinations = match self.policy.remote {
            RemoteMedia::Allow => Destinations::Any,
            RemoteMedia::PublicOnly => Destinations::PublicOnly,
            RemoteMedia::Deny => {
                return Err(refused(
                    shown,
                    "media URLs are not downloaded here; send the media inline",
                ));
            }
        };
        let http = match &self.http {
            Some(http) => http.clone(),
            None => HttpClient::shared().map_err(|e| refused(shown, &e.to_string()))?,
        };
        let options = DownloadOptions::new(self.policy.max_bytes, self.policy.timeout)
            .with_destinations(destinations);
        let download = http
            .download(url, &options)
            .await
            .map_err(|e| refused(shown, &e.to_string()))?;
        Ok(download.bytes)
    }
}

impl MediaPolicy {
    /// Whether a data block naming `url` can be inlined under this policy,
    /// as far as can be told without downloading anything: a `file://` URL
    /// names a file that may be read now (inside the roots, a regular
    /// file, within the cap), an `http(s)` URL is not refused outright
    /// (downloads off), `data:` always passes, and other schemes fail. A
    /// download's address is judged when it is made. The error is the
    /// reason, for a message naming the URL.
    ///
    /// A service checks what a message names before it keeps the message:
    /// a block the formatter refuses later fails every reply that sends
    /// it. Blocks (reads the file's metadata).
    ///
    /// # Errors
    /// The reason the block would be refused.
    pub fn check_url(&self, url: &str) -> Result<(), String> {
        if url.starts_with("data:") {
            return Ok(());
        }
        let parsed = Url::parse(url).map_err(|e| e.to_string())?;
        match parsed.scheme() {
            "file" => super::file::check(&parsed, self),
            "http" | "https" if self.remote == RemoteMedia::Deny => {
                Err("media URLs are not downloaded here; send the media inline".to_owned())
            }
            "http" | "https" => Ok(()),
            other => Err(format!("unsupported scheme `{other}`")),
        }
    }
}

fn refused(url: &str, reason: &str) -> ModelError {
    ModelError::InvalidRequest {
        message: format!("cannot inline media from {url}: {reason}"),
    }
}

#[cfg(test)]
#[path = "loader_tests.rs"]
mod tests;
