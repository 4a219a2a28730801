//! Whether a URL a tenant gives leads to a non-public address: what the
//! server refuses to call (model endpoints) or fetch (media) unless the
//! operator allows it, checked when the URL is given, so the refusal is a
//! clear answer then instead of a failure at every later use.

use std::net::IpAddr;
use std::time::Duration;

use oxiscope_http::NonPublic;

/// How long a name is given to resolve.
const RESOLVE: Duration = Duration::from_secs(3);

/// What `url`'s host is (a literal address) or resolves to here that is
/// not public, if anything. A URL without a host, or whose name does not
/// resolve here, is none: each call or fetch checks again.
pub async fn non_public(url: &str) -> Option<NonPublic> {
    let parsed = oxiscope_http::reqwest::Url::parse(url).ok()?;
    let host = parsed
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addresses: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => {
            match tokio::time::timeout(RESOLVE, tokio::net::lookup_host((host, port))).await {
                Ok(Ok(found)) => found.map(|a| a.ip()).collect(),
                _ => Vec::new(),
            }
        }
    };
    addresses.into_iter().find_map(NonPublic::of)
}
