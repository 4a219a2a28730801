//! Options for the HTTP client, and building it.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderMap;

use crate::client::HttpClient;
use crate::download::{Destinations, PublicResolver};
use crate::error::{Error, Result};
use crate::retry::RetryPolicy;

/// What the client needs besides the reqwest client.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) retry: RetryPolicy,
    pub(crate) response_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_error_body: usize,
    pub(crate) max_body: u64,
    /// Kept for the guarded download client, built when first needed.
    pub(crate) connect_timeout: Duration,
    pub(crate) user_agent: String,
    /// Where every request of the client may connect.
    pub(crate) destinations: Destinations,
}

/// Options for an [`HttpClient`]; start from [`HttpClient::builder`].
#[derive(Debug, Clone)]
pub struct HttpClientBuilder {
    default_headers: HeaderMap,
    settings: Settings,
}

impl Default for HttpClientBuilder {
    fn default() -> Self {
        Self {
            default_headers: HeaderMap::new(),
            settings: Settings {
                retry: RetryPolicy::default(),
                response_timeout: Duration::from_secs(600),
                idle_timeout: Duration::from_secs(300),
                max_error_body: 64 * 1024,
                max_body: 64 * 1024 * 1024,
                connect_timeout: Duration::from_secs(10),
                user_agent: concat!("oxiscope/", env!("CARGO_PKG_VERSION")).to_owned(),
                destinations: Destinations::Any,
            },
        }
    }
}

impl HttpClientBuilder {
    /// Time allowed to open a connection (TCP and TLS). Default 10 s.
    #[must_use]
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.settings.connect_timeout = timeout;
        self
    }

    /// Time allowed from sending a request to its response headers, per attempt. Default
    /// 600 s, since a non-streaming model call sends its headers only when done.
    #[must_use]
    pub fn with_response_timeout(mut self, timeout: Duration) -> Self {
        self.settings.response_timeout = timeout;
        self
    }

    /// Longest silence between two chunks of a response body. Default 300 s.
    #[must_use]
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.settings.idle_timeout = timeout;
        self
    }

    /// The retry policy. Default [`RetryPolicy::default`].
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.settings.retry = retry;
        self
    }

    /// How much of an error response's body [`Error::Status`] keeps. Default 64 KiB.
    #[must_use]
    pub fn with_max_error_body(mut self, bytes: usize) -> Self {
        self.settings.max_error_body = bytes;
        self
    }

    /// Largest body [`HttpClient::send_json`] reads. Default 64 MiB.
    #[must_use]
    pub fn with_max_body(mut self, bytes: u64) -> Self {
        self.settings.max_body = bytes;
        self
    }

    /// The `User-Agent` header. Default `oxiscope/<version>`.
    #[must_use]
    pub fn with_user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.settings.user_agent = user_agent.into();
        self
    }

    /// Headers sent with every request (a request's own headers win), except
    /// [`download`](HttpClient::download)s restricted to public addresses, which go
    /// through a client of their own without them.
    #[must_use]
    pub fn with_default_headers(mut self, headers: HeaderMap) -> Self {
        self.default_headers = headers;
        self
    }

    /// Where every request of the client may connect. Default [`Destinations::Any`].
    ///
    /// With [`Destinations::PublicOnly`] the client is for requests made on someone
    /// else's behalf (a tenant's model endpoint): host names resolve through the
    /// same checking resolver as public-only [`download`](HttpClient::download)s, so
    /// a connection goes only to public addresses that were checked; a URL naming a
    /// non-public IP address is refused with [`Error::RefusedAddress`] before
    /// anything is sent; redirects are not followed (a 3xx is an [`Error::Status`]);
    /// proxies are not used (a proxy would resolve the name itself).
    #[must_use]
    pub fn with_destinations(mut self, destinations: Destinations) -> Self {
        self.settings.destinations = destinations;
        self
    }

    /// Builds the client.
    ///
    /// TLS uses rustls with the process's default crypto provider; if the process has
    /// none, *ring*'s is installed as the default.
    ///
    /// # Errors
    ///
    /// [`Error::Build`] when TLS cannot be set up or an option is invalid.
    pub fn build(self) -> Result<HttpClient> {
        let mut builder = reqwest_builder(&self.settings).default_headers(self.default_headers);
        if self.settings.destinations == Destinations::PublicOnly {
            builder = public_only(builder);
        }
        let inner = builder.build().map_err(|source| Error::Build {
            source: Box::new(source),
        })?;
        Ok(HttpClient::from_parts(inner, Arc::new(self.settings)))
    }
}

/// A reqwest builder with the connection options of `settings`, TLS on rustls with
/// the process's default crypto provider (*ring*'s, installed when the process has
/// none).
pub(crate) fn reqwest_builder(settings: &Settings) -> reqwest::ClientBuilder {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race to another installer is fine: a provider is then installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
        .connect_timeout(settings.connect_timeout)
        .user_agent(settings.user_agent.clone())
}

/// `builder` restricted to public addresses: names resolve through
/// [`PublicResolver`], no redirects are followed and no proxy is used.
pub(crate) fn public_only(builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
    builder
        .dns_resolver(PublicResolver)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn building_installs_a_crypto_provider_when_none_is_set() {
        let client = HttpClientBuilder::default().build();
        assert!(client.is_ok(), "{client:?}");
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
