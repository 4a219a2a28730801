//! Bounded downloads, optionally restricted to public addresses: fetching the
//! images and files a message refers to on behalf of someone who must not reach
//! this host's loopback, private network or cloud metadata service.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{self, HeaderValue};
use reqwest::{IntoUrl, Response, Url};

use crate::address::NonPublic;
use crate::builder::{public_only, reqwest_builder};
use crate::client::HttpClient;
use crate::error::{Error, Refusal, Result};

/// Most redirects a download restricted to public addresses follows.
pub const MAX_REDIRECTS: usize = 5;

/// Where a [`download`](HttpClient::download) may connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Destinations {
    /// Anywhere, through the client's proxies, following up to 10 redirects.
    #[default]
    Any,
    /// Public addresses only (see [`NonPublic`]): a URL naming another address, or
    /// a host name any of whose addresses is another, is refused with
    /// [`Error::RefusedAddress`] before anything is sent.
    ///
    /// The connection goes to the addresses that were checked (the check is the
    /// name resolution the connection uses, so a second DNS answer cannot swap
    /// them); every redirect hop is checked again, at most [`MAX_REDIRECTS`] are
    /// followed; proxies are not used (a proxy would resolve the name itself), nor
    /// the client's default headers.
    PublicOnly,
}

/// How [`HttpClient::download`] fetches: size cap, overall deadline, destinations.
///
/// ```
/// use std::time::Duration;
/// use oxiscope_http::{Destinations, DownloadOptions};
///
/// let options = DownloadOptions::new(20 << 20, Duration::from_secs(30))
///     .with_destinations(Destinations::PublicOnly);
/// assert_eq!(options.destinations(), Destinations::PublicOnly);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DownloadOptions {
    max_bytes: u64,
    timeout: Duration,
    destinations: Destinations,
    also_allowed: Vec<SocketAddr>,
}

impl DownloadOptions {
    /// At most `max_bytes` of body within `timeout` in all (redirects and retries
    /// included), from [`Destinations::Any`].
    #[must_use]
    pub fn new(max_bytes: u64, timeout: Duration) -> Self {
        Self {
            max_bytes,
            timeout,
            destinations: Destinations::Any,
            also_allowed: Vec::new(),
        }
    }

    /// Where the download may connect.
    #[must_use]
    pub fn with_destinations(mut self, destinations: Destinations) -> Self {
        self.destinations = destinations;
        self
    }

    /// With [`Destinations::PublicOnly`], also fetch from `addr` (exactly this IP and
    /// port, named as such in a URL: a host name resolving to it stays refused). For
    /// tests on a loopback server, and for an operator's own media server.
    #[must_use]
    pub fn also_allowing(mut self, addr: SocketAddr) -> Self {
        self.also_allowed.push(addr);
        self
    }

    /// The size cap in bytes.
    #[must_use]
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// The overall deadline.
    #[must_use]
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Where the download may connect.
    #[must_use]
    pub fn destinations(&self) -> Destinations {
        self.destinations
    }
}

/// A body fetched with [`HttpClient::download`] or [`HttpClient::get_bytes`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Download {
    /// The body.
    pub bytes: Bytes,
    /// The `Content-Type` the server declared, if any.
    pub content_type: Option<String>,
    /// The URL the body came from, after redirects.
    pub url: Url,
}

impl HttpClient {
    /// Downloads `url` with a GET as `options` say: never reading more than the cap
    /// (a larger body is an error, whatever `Content-Length` says or does not say),
    /// giving up at the deadline, and with [`Destinations::PublicOnly`] connecting
    /// only to public addresses. Meant for remote images and files a message refers
    /// to. Retries follow the client's policy.
    ///
    /// # Errors
    ///
    /// [`Error::RefusedAddress`] for a destination `options` rule out;
    /// [`Error::InvalidRequest`] for a URL that is not `http(s)` or a redirect that
    /// cannot be followed (over [`MAX_REDIRECTS`], no valid `Location`, another
    /// scheme); [`Error::BodyTooLarge`] past the cap; [`Error::Timeout`] at the
    /// deadline; as [`send`](Self::send) otherwise.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the download.
    pub async fn download(&self, url: impl IntoUrl, options: &DownloadOptions) -> Result<Download> {
        let request = self.get(url).build().map_err(invalid_request)?;
        let endpoint = crate::error::endpoint_of(request.url());
        let download = async {
            let response = match options.destinations {
                Destinations::Any => self.send_built(request).await?,
                Destinations::PublicOnly => self.public_response(request.url(), options).await?,
            };
            self.read_capped(response, options.max_bytes).await
        };
        tokio::time::timeout(options.timeout, download)
            .await
            .unwrap_or(Err(Error::Timeout {
                after: options.timeout,
                endpoint,
            }))
    }

    /// Downloads `url` from any address: [`download`](Self::download) with
    /// [`DownloadOptions::new`]`(max_bytes, timeout)`.
    ///
    /// # Errors
    ///
    /// As [`download`](Self::download).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the download.
    pub async fn get_bytes(
        &self,
        url: impl IntoUrl,
        max_bytes: u64,
        timeout: Duration,
    ) -> Result<Download> {
        self.download(url, &DownloadOptions::new(max_bytes, timeout))
            .await
    }

    async fn send_built(&self, request: reqwest::Request) -> Result<Response> {
        self.execute(request).await
    }

    /// The response of the first hop that is not a redirect, checking every hop.
    async fn public_response(&self, first: &Url, options: &DownloadOptions) -> Result<Response> {
        let guarded = self.guarded_client()?;
        let mut url = first.clone();
        for _ in 0..=MAX_REDIRECTS {
            check_url(&url, options)?;
            let request = guarded.get(url.clone()).build().map_err(invalid_request)?;
            let response = self.execute_on(&guarded, request, true).await?;
            if !response.status().is_redirection() {
                return Ok(response);
            }
            let Some(location) = response.headers().get(header::LOCATION) else {
                return Err(self.status_error(response).await);
            };
            url = next_hop(&url, location)?;
        }
        Err(invalid(format!(
            "{first} redirects more than {MAX_REDIRECTS} times"
        )))
    }

    /// Reads the body of `response`, refusing more than `max_bytes`.
    async fn read_capped(&self, response: Response, max_bytes: u64) -> Result<Download> {
        if response.content_length().is_some_and(|len| len > max_bytes) {
            return Err(Error::BodyTooLarge { limit: max_bytes });
        }
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let url = response.url().clone();
        let bytes = self.body(response).collect_bounded(max_bytes).await?;
        Ok(Download {
            bytes,
            content_type,
            url,
        })
    }

    /// The client that resolves names through [`PublicResolver`], follows no
    /// redirects and uses no proxy; built once and shared by clones.
    fn guarded_client(&self) -> Result<reqwest::Client> {
        let built = self.guarded.get_or_init(|| {
            public_only(reqwest_builder(&self.settings))
                .build()
                .map_err(|e| e.to_string())
        });
        match built {
            Ok(client) => Ok(client.clone()),
            Err(message) => Err(Error::Build {
                source: message.clone().into(),
            }),
        }
    }
}

/// Refuses a URL that is not `http(s)`, or that names a non-public IP address not
/// allowed by `options` (host names are checked when they are resolved).
fn check_url(url: &Url, options: &DownloadOptions) -> Result<()> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "{url} is not an http(s) URL, which is all that is downloaded"
        )));
    }
    if url.host().is_none() {
        return Err(invalid(format!("{url} names no host")));
    }
    refuse_non_public(url, &options.also_allowed)
}

/// Refuses a URL whose host is a non-public IP address, unless that address and
/// port are in `also_allowed` (host names are checked when they are resolved).
pub(crate) fn refuse_non_public(url: &Url, also_allowed: &[SocketAddr]) -> Result<()> {
    let ip: IpAddr = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.into(),
        Some(url::Host::Ipv6(ip)) => ip.into(),
        Some(url::Host::Domain(_)) | None => return Ok(()),
    };
    let Some(reason) = NonPublic::of(ip) else {
        return Ok(());
    };
    let port = url.port_or_known_default().unwrap_or_default();
    if also_allowed.contains(&SocketAddr::new(ip, port)) {
        return Ok(());
    }
    Err(Error::RefusedAddress {
        url: url.to_string(),
        address: ip,
        reason,
    })
}

/// Where a redirect from `url` leads.
fn next_hop(url: &Url, location: &HeaderValue) -> Result<Url> {
    location
        .to_str()
        .ok()
        .and_then(|location| url.join(location).ok())
        .ok_or_else(|| invalid(format!("{url} redirects to an invalid location")))
}

fn invalid(message: String) -> Error {
    Error::InvalidRequest {
        source: message.into(),
    }
}

fn invalid_request(err: reqwest::Error) -> Error {
    Error::InvalidRequest {
        source: Box::new(err),
    }
}

/// Resolves names with the system resolver and refuses the whole name when any of
/// its addresses is not public; the connection then uses exactly the addresses
/// returned here.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PublicResolver;

impl Resolve for PublicResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some((address, reason)) = addrs
                .iter()
                .find_map(|a| NonPublic::of(a.ip()).map(|reason| (a.ip(), reason)))
            {
                return Err(Box::new(Refusal {
                    host,
                    address,
                    reason,
                }) as crate::BoxError);
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn public_only() -> DownloadOptions {
        DownloadOptions::new(1024, Duration::from_secs(1))
            .with_destinations(Destinations::PublicOnly)
    }

    fn refusal(url: &str, options: &DownloadOptions) -> Option<(IpAddr, NonPublic)> {
        match check_url(&Url::parse(url).unwrap(), options) {
            Err(Error::RefusedAddress {
                address, reason, ..
            }) => Some((address, reason)),
            Ok(()) => None,
            Err(other) => panic!("{url}: {other}"),
        }
    }

    #[test]
    fn urls_naming_non_public_addresses_in_any_spelling_are_refused() {
        let options = public_only();
        let loopback = Some(("127.0.0.1".parse().unwrap(), NonPublic::Loopback));
        for url in [
            "http://127.0.0.1/x",
            "http://2130706433/x",
            "http://0x7f.1/x",
            "http://127.1/x",
        ] {
            assert_eq!(refusal(url, &options), loopback, "{url}");
        }
        assert_eq!(
            refusal("https://[::ffff:127.0.0.1]/x", &options),
            Some(("::ffff:127.0.0.1".parse().unwrap(), NonPublic::Loopback))
        );
        assert_eq!(
            refusal("http://[::1]:8080/", &options),
            Some(("::1".parse().unwrap(), NonPublic::Loopback))
        );
        assert_eq!(
            refusal("http://169.254.169.254/latest/meta-data/", &options),
            Some(("169.254.169.254".parse().unwrap(), NonPublic::LinkLocal))
        );
        assert_eq!(
            refusal("http://[fd00:ec2::254]/", &options),
            Some(("fd00:ec2::254".parse().unwrap(), NonPublic::UniqueLocal))
        );
        assert_eq!(refusal("https://93.184.215.14/a.png", &options), None);
        // Names are judged when resolved.
        assert_eq!(refusal("http://metadata.google.internal/", &options), None);
    }

    #[test]
    fn an_allowed_exception_is_one_exact_address_and_port() {
        let options = public_only().also_allowing("127.0.0.1:8080".parse().unwrap());
        assert_eq!(refusal("http://127.0.0.1:8080/a", &options), None);
        assert!(refusal("http://127.0.0.1:8081/a", &options).is_some());
        assert!(refusal("http://127.0.0.2:8080/a", &options).is_some());
    }

    #[test]
    fn only_http_urls_are_downloaded() {
        let err = check_url(&Url::parse("file:///etc/passwd").unwrap(), &public_only());
        assert!(matches!(err, Err(Error::InvalidRequest { .. })), "{err:?}");
    }

    #[test]
    fn a_relative_location_is_joined_to_the_hop() {
        let url = Url::parse("https://a.example/img/1.png").unwrap();
        let next = next_hop(&url, &HeaderValue::from_static("../2.png")).unwrap();
        assert_eq!(next.as_str(), "https://a.example/2.png");
        let next = next_hop(&url, &HeaderValue::from_static("http://127.0.0.1/")).unwrap();
        assert_eq!(next.as_str(), "http://127.0.0.1/");
    }

    #[tokio::test]
    async fn a_name_resolving_to_loopback_is_refused_by_the_resolver() {
        let name: Name = "localhost".parse().unwrap();
        let err = PublicResolver.resolve(name).await.err().unwrap();
        let refusal = err.downcast_ref::<Refusal>().unwrap();
        assert_eq!(refusal.reason, NonPublic::Loopback);
    }
}
