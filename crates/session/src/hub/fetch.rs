//! Reading catalogues and archives: local files, or bounded downloads
//! through `oxiscope-http` (no retries: an upstream failure is reported as
//! it happens).

use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use oxiscope_http::reqwest::Url;
use oxiscope_http::{Destinations, DownloadOptions, HttpClient, RetryPolicy};

use super::HubError;

/// How long one download may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The client hubs download with.
pub(crate) fn client() -> Result<HttpClient, String> {
    HttpClient::builder()
        .with_retry(RetryPolicy::none())
        .with_connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| e.to_string())
}

/// Refuses a URL that is not `https://`, or `http://` to a loopback host
/// (a hub served on this machine).
///
/// # Errors
/// Why the URL cannot be used.
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    let parsed = Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    let host = parsed.host_str().unwrap_or_default();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(format!(
            "{url:?}: hubs are fetched over https:// (http:// only on loopback)"
        )),
    }
}

/// Downloads at most `max_bytes` from `url`.
///
/// # Errors
/// [`HubError::Upstream`] (rate-limited when the hub answered 429).
pub(crate) async fn download(
    http: &HttpClient,
    url: &str,
    max_bytes: u64,
) -> Result<Bytes, HubError> {
    download_to(http, url, max_bytes, Destinations::Any).await
}

/// The scheme, host and port of `url`.
fn origin(url: &str) -> Option<(String, String, Option<u16>)> {
    let parsed = Url::parse(url).ok()?;
    Some((
        parsed.scheme().to_owned(),
        parsed.host_str()?.to_ascii_lowercase(),
        parsed.port_or_known_default(),
    ))
}

/// Downloads a skill archive a catalogue lists: from anywhere when the
/// operator named its place (a local catalogue, or the origin of the
/// remote catalogue `listed_by`), else from public addresses only — a
/// hub's card must not send the server into its private network.
///
/// # Errors
/// As [`download`]; a private address is refused.
pub(crate) async fn download_archive(
    http: &HttpClient,
    url: &str,
    listed_by: Option<&str>,
    max_bytes: u64,
) -> Result<Bytes, HubError> {
    let trusted = listed_by.is_none_or(|hub| origin(hub).is_some_and(|o| origin(url) == Some(o)));
    let destinations = if trusted {
        Destinations::Any
    } else {
        Destinations::PublicOnly
    };
    download_to(http, url, max_bytes, destinations).await
}

async fn download_to(
    http: &HttpClient,
    url: &str,
    max_bytes: u64,
    destinations: Destinations,
) -> Result<Bytes, HubError> {
    check_url(url).map_err(|reason| HubError::Invalid {
        location: url.to_owned(),
        reason,
    })?;
    let options = DownloadOptions::new(max_bytes, TIMEOUT).with_destinations(destinations);
    match http.download(url, &options).await {
        Ok(download) => Ok(download.bytes),
        Err(e) => Err(HubError::Upstream {
            location: url.to_owned(),
            rate_limited: e.status().is_some_and(|s| s.as_u16() == 429),
            reason: e.to_string(),
        }),
    }
}

/// The catalogue file a local source names: the file, or a directory's
/// `hub.json`.
pub(crate) fn catalogue_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("hub.json")
    } else {
        path.to_path_buf()
    }
}

/// Reads a local catalogue (at most `max_bytes`) and its canonical
/// directory.
///
/// # Errors
/// [`HubError::Invalid`] when the file cannot be read or is too large.
pub(crate) async fn read_local(
    path: PathBuf,
    max_bytes: u64,
) -> Result<(Vec<u8>, PathBuf), HubError> {
    let shown = path.display().to_string();
    let invalid = move |reason: String| HubError::Invalid {
        location: shown.clone(),
        reason,
    };
    let result = tokio::task::spawn_blocking(move || -> Result<(Vec<u8>, PathBuf), String> {
        use std::io::Read as _;
        let file = catalogue_file(&path);
        let canonical = std::fs::canonicalize(&file).map_err(|e| e.to_string())?;
        let root = canonical
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| "the catalogue has no directory".to_owned())?;
        let mut bytes = Vec::new();
        std::fs::File::open(&canonical)
            .map_err(|e| e.to_string())?
            .take(max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| e.to_string())?;
        if bytes.len() as u64 > max_bytes {
            return Err(format!("larger than {max_bytes} bytes"));
        }
        Ok((bytes, root))
    })
    .await
    .map_err(|e| e.to_string());
    match result {
        Ok(Ok(read)) => Ok(read),
        Ok(Err(reason)) | Err(reason) => Err(invalid(reason)),
    }
}
