//! The HTTP client: building it, sending with retries, and the streaming entry points.

use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use reqwest::header::{self, HeaderValue};
use reqwest::{IntoUrl, Method, RequestBuilder, Response};
use serde::de::DeserializeOwned;

use crate::body::BodyStream;
use crate::builder::{HttpClientBuilder, Settings};
use crate::download::{Destinations, refuse_non_public};
use crate::error::{DecodeError, Error, Result, StatusError, endpoint_of};
use crate::ndjson::{LineStream, NdjsonStream};
use crate::retry::{RetryPolicy, parse_retry_after};
use crate::sse::SseStream;

/// Headers that carry a server's request id, most common first.
const REQUEST_ID_HEADERS: &[&str] = &[
    "x-request-id",
    "request-id",
    "x-amzn-requestid",
    "x-amz-request-id",
    "x-ms-request-id",
    "apim-request-id",
    "x-goog-request-id",
    "x-trace-id",
];

/// A client built once per process, or the message of its build failure.
type Shared = OnceLock<std::result::Result<HttpClient, String>>;

/// The client in `cell`, built with `options` on first use.
fn shared_of(cell: &Shared, options: impl FnOnce() -> HttpClientBuilder) -> Result<HttpClient> {
    match cell.get_or_init(|| options().build().map_err(|e| e.to_string())) {
        Ok(client) => Ok(client.clone()),
        Err(message) => Err(Error::Build {
            source: message.clone().into(),
        }),
    }
}

/// The HTTP client of Oxiscope: one per process is plenty (it pools connections), and
/// cloning it is cheap.
///
/// Requests are built with [`HttpClient::request`] (or [`get`](HttpClient::get),
/// [`post`](HttpClient::post)) as plain [`reqwest::RequestBuilder`]s, then sent with one of
/// the entry points below, which retry per the [`RetryPolicy`] before the response body
/// starts and turn non-success statuses into [`Error::Status`]:
///
/// | entry point | returns |
/// |---|---|
/// | [`send`](HttpClient::send) | the [`Response`], status checked |
/// | [`send_json`](HttpClient::send_json) | the body parsed as `T` |
/// | [`sse`](HttpClient::sse) | an [`SseStream`] of events |
/// | [`ndjson`](HttpClient::ndjson) | an [`NdjsonStream`] of JSON values |
/// | [`lines`](HttpClient::lines) | a [`LineStream`] of raw lines |
/// | [`download`](HttpClient::download) | a bounded [`Download`](crate::Download), optionally from public addresses only |
/// | [`get_bytes`](HttpClient::get_bytes) | the same, from any address |
///
/// Setup failures (connection, timeout, 4xx/5xx) come back in the outer `Result` of the
/// streaming entry points; failures after the body started arrive as the stream's last
/// item and are never retried, so a stream is never silently restarted or truncated.
#[derive(Debug, Clone)]
pub struct HttpClient {
    pub(crate) inner: reqwest::Client,
    pub(crate) settings: Arc<Settings>,
    /// The client for downloads restricted to public addresses, built on first use
    /// and shared by the clones of this one.
    pub(crate) guarded: Arc<OnceLock<std::result::Result<reqwest::Client, String>>>,
}

impl HttpClient {
    pub(crate) fn from_parts(inner: reqwest::Client, settings: Arc<Settings>) -> Self {
        Self {
            inner,
            settings,
            guarded: Arc::default(),
        }
    }

    /// Options for a client.
    #[must_use]
    pub fn builder() -> HttpClientBuilder {
        HttpClientBuilder::default()
    }

    /// A client with the default options.
    ///
    /// # Errors
    ///
    /// As [`HttpClientBuilder::build`].
    pub fn new() -> Result<Self> {
        Self::builder().build()
    }

    /// A client with the default options, built once per process and
    /// shared (one connection pool; the TLS roots are loaded once). Use it
    /// wherever no particular client was configured.
    ///
    /// # Errors
    ///
    /// As [`HttpClientBuilder::build`], on every call when the first build
    /// failed.
    pub fn shared() -> Result<Self> {
        static SHARED: Shared = OnceLock::new();
        shared_of(&SHARED, HttpClientBuilder::default)
    }

    /// A client with the default options whose requests reach public addresses
    /// only ([`HttpClientBuilder::with_destinations`] with
    /// [`Destinations::PublicOnly`]), built once per process and shared: the client
    /// for calls a service makes to endpoints its tenants name.
    ///
    /// ```
    /// # async fn demo() {
    /// use oxiscope_http::{Error, HttpClient};
    ///
    /// let http = HttpClient::shared_public_only().unwrap();
    /// let err = http.send(http.post("http://169.254.169.254/v1")).await.unwrap_err();
    /// assert!(matches!(err, Error::RefusedAddress { .. }));
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`shared`](Self::shared).
    pub fn shared_public_only() -> Result<Self> {
        static SHARED: Shared = OnceLock::new();
        shared_of(&SHARED, || {
            HttpClientBuilder::default().with_destinations(Destinations::PublicOnly)
        })
    }

    /// Where the requests of this client may connect.
    #[must_use]
    pub fn destinations(&self) -> Destinations {
        self.settings.destinations
    }

    /// The same client (sharing its connection pool) with another retry policy, for
    /// calls configured with their own retry count.
    #[must_use]
    pub fn with_retry_policy(&self, retry: RetryPolicy) -> Self {
        let settings = Settings {
            retry,
            ..(*self.settings).clone()
        };
        Self {
            inner: self.inner.clone(),
            settings: Arc::new(settings),
            guarded: Arc::clone(&self.guarded),
        }
    }

    /// The retry policy in force.
    #[must_use]
    pub fn retry_policy(&self) -> RetryPolicy {
        self.settings.retry
    }

    /// Starts a request. Its body must be buffered (JSON, bytes, text) for it to be
    /// retried; a request with a streaming body is sent once.
    pub fn request(&self, method: Method, url: impl IntoUrl) -> RequestBuilder {
        self.inner.request(method, url)
    }

    /// Starts a GET request.
    pub fn get(&self, url: impl IntoUrl) -> RequestBuilder {
        self.inner.get(url)
    }

    /// Starts a POST request.
    pub fn post(&self, url: impl IntoUrl) -> RequestBuilder {
        self.inner.post(url)
    }

    /// Sends a request, retrying per the policy, and returns a response with a 2xx status.
    ///
    /// # Errors
    ///
    /// [`Error::Status`] for a non-2xx status (after retries, for a retryable one), with
    /// the capped body, request id and `Retry-After`; [`Error::Connect`] or
    /// [`Error::Timeout`] when no response came; [`Error::InvalidRequest`] when the request
    /// cannot be built.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the request (and any pending retry); nothing else
    /// happens.
    pub async fn send(&self, request: RequestBuilder) -> Result<Response> {
        let request = request.build().map_err(|source| Error::InvalidRequest {
            source: Box::new(source),
        })?;
        self.execute(request).await
    }

    /// Sends a request (as [`send`](Self::send)) and parses the whole body as JSON.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send); also [`Error::Decode`] when the body is not a `T`,
    /// [`Error::BodyTooLarge`] past the client's body limit, and [`Error::IdleTimeout`] or
    /// [`Error::UnexpectedEof`] when the body stalls or breaks (not retried).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the request.
    pub async fn send_json<T: DeserializeOwned>(&self, request: RequestBuilder) -> Result<T> {
        let response = self.send(request).await?;
        let body = self
            .body(response)
            .collect_bounded(self.settings.max_body)
            .await?;
        serde_json::from_slice(&body).map_err(|source| Error::Decode {
            kind: DecodeError::Json { line: None, source },
        })
    }

    /// Sends a request and reads the response as server-sent events.
    ///
    /// Adds `Accept: text/event-stream` unless the request has an `Accept` header.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send), for everything up to the response headers. Later failures
    /// are stream items: see [`SseStream`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the request; dropping the stream closes the
    /// connection.
    pub async fn sse(&self, request: RequestBuilder) -> Result<SseStream<BodyStream>> {
        let mut request = request.build().map_err(|source| Error::InvalidRequest {
            source: Box::new(source),
        })?;
        request
            .headers_mut()
            .entry(header::ACCEPT)
            .or_insert(HeaderValue::from_static("text/event-stream"));
        let response = self.execute(request).await?;
        Ok(SseStream::new(self.body(response)))
    }

    /// Sends a request and reads the response as newline-delimited JSON, one `T` per
    /// non-blank line (use [`serde_json::Value`] for untyped lines).
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send), for everything up to the response headers. Later failures
    /// are stream items: see [`NdjsonStream`].
    ///
    /// # Cancel safety
    ///
    /// As for [`sse`](Self::sse).
    pub async fn ndjson<T: DeserializeOwned>(
        &self,
        request: RequestBuilder,
    ) -> Result<NdjsonStream<BodyStream, T>> {
        let response = self.send(request).await?;
        Ok(NdjsonStream::new(self.body(response)))
    }

    /// Sends a request and reads the response as raw non-blank text lines.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send), for everything up to the response headers. Later failures
    /// are stream items: see [`LineStream`].
    ///
    /// # Cancel safety
    ///
    /// As for [`sse`](Self::sse).
    pub async fn lines(&self, request: RequestBuilder) -> Result<LineStream<BodyStream>> {
        let response = self.send(request).await?;
        Ok(LineStream::new(self.body(response)))
    }

    /// The body of a response from [`send`](Self::send) as a byte stream with the
    /// client's idle timeout.
    #[must_use]
    pub fn body(&self, response: Response) -> BodyStream {
        BodyStream::new(response, self.settings.idle_timeout)
    }

    /// The retry loop around single attempts, on the main client; a client for
    /// public addresses only refuses a URL naming another address up front.
    pub(crate) async fn execute(&self, request: reqwest::Request) -> Result<Response> {
        if self.settings.destinations == Destinations::PublicOnly {
            refuse_non_public(request.url(), &[])?;
        }
        self.execute_on(&self.inner, request, false).await
    }

    /// The retry loop around single attempts on `client`; with `redirects`, a 3xx
    /// response is returned (for a caller following redirects itself) instead of
    /// being an error.
    pub(crate) async fn execute_on(
        &self,
        client: &reqwest::Client,
        mut request: reqwest::Request,
        redirects: bool,
    ) -> Result<Response> {
        let policy = self.settings.retry;
        let mut attempt = 1;
        loop {
            let spare = if policy.allows_retry_after_attempt(attempt) {
                request.try_clone()
            } else {
                None
            };
            let err = match self.attempt(client, request, redirects).await {
                Ok(response) => return Ok(response),
                Err(err) => err,
            };
            let Some(next) = spare.filter(|_| err.is_retryable()) else {
                return Err(err);
            };
            let delay = policy.delay(attempt, err.retry_after());
            // Retries are visible: the console shows warnings on stderr.
            tracing::warn!(
                endpoint = %endpoint_of(next.url()),
                attempt,
                max_attempts = policy.max_attempts,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                "retrying in {delay:.1?} (attempt {attempt} of {} failed): {err}",
                policy.max_attempts,
            );
            tokio::time::sleep(delay).await;
            request = next;
            attempt += 1;
        }
    }

    /// One attempt: up to the response headers, and the error body for a failure status.
    async fn attempt(
        &self,
        client: &reqwest::Client,
        request: reqwest::Request,
        redirects: bool,
    ) -> Result<Response> {
        let timeout = self.settings.response_timeout;
        let endpoint = endpoint_of(request.url());
        let response = match tokio::time::timeout(timeout, client.execute(request)).await {
            Err(_elapsed) => {
                return Err(Error::Timeout {
                    after: timeout,
                    endpoint,
                });
            }
            Ok(Err(err)) => {
                return Err(Error::from_send(
                    err,
                    timeout,
                    self.settings.connect_timeout,
                ));
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_success() || (redirects && status.is_redirection()) {
            return Ok(response);
        }
        Err(self.status_error(response).await)
    }

    pub(crate) async fn status_error(&self, response: Response) -> Error {
        let status = response.status();
        let headers = response.headers();
        let request_id = REQUEST_ID_HEADERS
            .iter()
            .find_map(|name| headers.get(*name)?.to_str().ok())
            .map(str::to_owned);
        let retry_after = parse_retry_after(headers, SystemTime::now());
        let should_retry = headers
            .get("x-should-retry")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| match v.trim() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            });
        let body = self
            .body(response)
            .collect_lossy(self.settings.max_error_body)
            .await;
        let body = String::from_utf8_lossy(&body).into_owned();
        StatusError {
            status,
            body,
            request_id,
            retry_after,
            should_retry,
        }
        .into()
    }
}
