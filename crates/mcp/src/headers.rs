//! Headers of a streamable-HTTP client: the static ones from the config,
//! the runtime ones set with `set_runtime_headers`, and the reqwest client
//! that applies both to every request it sends.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::error::{Error, Result};

/// Headers the HTTP layer owns; setting them is an error.
const FORBIDDEN: &[&str] = &[
    "connection",
    "content-length",
    "host",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Headers the MCP transport sets per request; a user value never
/// replaces them.
const MCP_OWNED: &[&str] = &[
    "accept",
    "content-type",
    "last-event-id",
    "mcp-protocol-version",
    "mcp-session-id",
];

pub(crate) type Headers = HashMap<HeaderName, HeaderValue>;

/// Parses and checks user-given headers.
///
/// # Errors
///
/// [`Error::ForbiddenHeader`] for a hop-by-hop or framing header,
/// [`Error::InvalidHeader`] for a name or value that is not valid HTTP.
pub(crate) fn parse(headers: &BTreeMap<String, String>) -> Result<Headers> {
    let mut parsed = Headers::with_capacity(headers.len());
    for (name, value) in headers {
        let header =
            HeaderName::from_bytes(name.trim().as_bytes()).map_err(|e| Error::InvalidHeader {
                name: name.clone(),
                reason: e.to_string(),
            })?;
        if FORBIDDEN.contains(&header.as_str()) {
            return Err(Error::ForbiddenHeader {
                name: header.as_str().to_owned(),
            });
        }
        let value = HeaderValue::from_str(value).map_err(|e| Error::InvalidHeader {
            name: name.clone(),
            reason: e.to_string(),
        })?;
        parsed.insert(header, value);
    }
    Ok(parsed)
}

/// A reqwest client that adds the static and the current runtime headers
/// to each request; runtime headers win over static ones of the same name,
/// and the transport's own headers win over both.
#[derive(Clone)]
pub(crate) struct HeaderClient {
    inner: reqwest::Client,
    fixed: Arc<Headers>,
    runtime: Arc<RwLock<Headers>>,
}

impl HeaderClient {
    pub(crate) fn new(
        inner: reqwest::Client,
        fixed: Arc<Headers>,
        runtime: Arc<RwLock<Headers>>,
    ) -> Self {
        Self {
            inner,
            fixed,
            runtime,
        }
    }

    fn merge(&self, transport: Headers) -> Headers {
        let mut merged: Headers = (*self.fixed).clone();
        // A poisoned lock only means a writer panicked mid-replace; the map
        // itself is always whole, so keep using it.
        let runtime = match self.runtime.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        merged.extend(runtime);
        merged.retain(|name, _| !MCP_OWNED.contains(&name.as_str()));
        merged.extend(transport);
        merged
    }
}

/// Builds the reqwest client for MCP: rustls with the process's crypto
/// provider (ring's installed when none is), no idle pooling, no redirects.
pub(crate) fn reqwest_client(
    server: &str,
    connect_timeout: std::time::Duration,
) -> Result<reqwest::Client> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing the race to another installer is fine: one is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("oxiscope-mcp/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Error::HttpClient {
            server: server.to_owned(),
            reason: e.to_string(),
        })
}

type SseStream = BoxStream<'static, Result<Sse, SseError>>;
type HttpResult<T> = std::result::Result<T, StreamableHttpError<reqwest::Error>>;

impl StreamableHttpClient for HeaderClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let headers = self.merge(custom_headers);
        self.inner
            .post_message(uri, message, session_id, auth_header, headers)
            .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let headers = self.merge(custom_headers);
        self.inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                headers,
                max_sse_event_size,
            )
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let headers = self.merge(custom_headers);
        self.inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                headers,
                limits,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> HttpResult<()> {
        let headers = self.merge(custom_headers);
        self.inner
            .delete_session(uri, session_id, auth_header, headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> HttpResult<SseStream> {
        let headers = self.merge(custom_headers);
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> HttpResult<SseStream> {
        let headers = self.merge(custom_headers);
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn hop_by_hop_headers_are_rejected() {
        for name in ["Host", "connection", "Content-Length", "transfer-encoding"] {
            let err = parse(&map(&[(name, "x")])).unwrap_err();
            assert!(
                matches!(&err, Error::ForbiddenHeader { name: n } if n == &name.to_ascii_lowercase()),
                "{err}"
            );
        }
    }

    #[test]
    fn invalid_values_are_typed_errors() {
        let err = parse(&map(&[("x-key", "line\nbreak")])).unwrap_err();
        assert!(matches!(err, Error::InvalidHeader { .. }), "{err}");
        let err = parse(&map(&[("bad name", "v")])).unwrap_err();
        assert!(matches!(err, Error::InvalidHeader { .. }), "{err}");
    }

    #[test]
    fn runtime_headers_override_static_ones_and_the_transport_wins() {
        let fixed = parse(&map(&[("x-a", "static"), ("x-b", "static")])).unwrap();
        let runtime = parse(&map(&[("x-b", "runtime"), ("accept", "text/plain")])).unwrap();
        let client = HeaderClient::new(
            reqwest_client("t", std::time::Duration::from_secs(1)).unwrap(),
            Arc::new(fixed),
            Arc::new(RwLock::new(runtime)),
        );
        let transport = parse(&map(&[("mcp-session-id", "s1")])).unwrap();
        let merged = client.merge(transport);
        let get = |n: &'static str| {
            merged
                .get(&HeaderName::from_static(n))
                .map(|v| v.to_str().unwrap().to_owned())
        };
        assert_eq!(get("x-a").as_deref(), Some("static"));
        assert_eq!(get("x-b").as_deref(), Some("runtime"));
        assert_eq!(get("accept"), None);
        assert_eq!(get("mcp-session-id").as_deref(), Some("s1"));
    }
}
