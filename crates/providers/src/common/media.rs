//! Inline media: turning a data block's source into base64 bytes, shared by
//! the Anthropic and Ollama formatters.
//!
//! Base64 sources are used as they are. `http(s)://` sources are downloaded
//! with the shared HTTP client, with a size cap and a timeout; `file://`
//! sources are read from disk under the same size cap.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use oxiscope_http::HttpClient;
use oxiscope_http::reqwest::Url;
use oxiscope_message::DataSource;
use oxiscope_model::ModelError;

/// Default cap on one inlined file: 20 MiB.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 20 * 1024 * 1024;
/// Default time allowed for one download.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Fetches media for inlining.
#[derive(Debug, Clone)]
pub(crate) struct MediaLoader {
    pub(crate) http: Option<HttpClient>,
    pub(crate) max_bytes: u64,
    pub(crate) timeout: Duration,
}

impl Default for MediaLoader {
    fn default() -> Self {
        Self {
            http: None,
            max_bytes: DEFAULT_MAX_BYTES,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

impl MediaLoader {
    /// The base64 text of `source`.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when a URL cannot be fetched or read,
    /// is too large, or has a scheme other than `http`, `https` or `file`.
    pub(crate) async fn base64(&self, source: &DataSource) -> Result<String, ModelError> {
        let url = match source {
            DataSource::Base64(b) => return Ok(b.data.clone()),
            DataSource::Url(u) => &u.url,
        };
        let parsed = Url::parse(url).map_err(|e| invalid(url, &e.to_string()))?;
        let bytes = match parsed.scheme() {
            "http" | "https" => self.download(parsed).await?,
            "file" => self.read_file(&parsed).await?,
            other => return Err(invalid(url, &format!("unsupported scheme `{other}`"))),
        };
        Ok(STANDARD.encode(bytes))
    }

    async fn download(&self, url: Url) -> Result<Vec<u8>, ModelError> {
        let shown = url.to_string();
        let http = match &self.http {
            Some(http) => http.clone(),
            None => HttpClient::shared().map_err(|e| invalid(&shown, &e.to_string()))?,
        };
        let download = http
            .get_bytes(url, self.max_bytes, self.timeout)
            .await
            .map_err(|e| invalid(&shown, &e.to_string()))?;
        Ok(download.bytes.to_vec())
    }

    async fn read_file(&self, url: &Url) -> Result<Vec<u8>, ModelError> {
        let shown = url.as_str();
        let path = url
            .to_file_path()
            .map_err(|()| invalid(shown, "not a local file path"))?;
        let meta = tokio::fs::metadata(&path)
            .await
            .map_err(|e| invalid(shown, &e.to_string()))?;
        if meta.len() > self.max_bytes {
            return Err(invalid(
                shown,
                &format!("larger than {} bytes", self.max_bytes),
            ));
        }
        tokio::fs::read(&path)
            .await
            .map_err(|e| invalid(shown, &e.to_string()))
    }
}

fn invalid(url: &str, reason: &str) -> ModelError {
    ModelError::InvalidRequest {
        message: format!("cannot inline media from {url}: {reason}"),
    }
}
