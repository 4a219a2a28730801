//! The one place in Oxiscope that talks HTTP: building the client, timeouts, retries
//! with backoff that honour `Retry-After`, and the framing of streamed responses
//! (server-sent events, newline-delimited JSON).
//!
//! It owns transport concerns only. Provider wire formats (what the JSON in an event
//! means, which event is final) belong to the providers built on it; it does not know
//! any vendor.
//!
//! # Contract
//!
//! - A request is retried (per [`RetryPolicy`]) only before its response body starts:
//!   connection failures, timeouts waiting for headers, and retryable statuses (408, 409,
//!   429, 5xx), waiting for `Retry-After` when the server sends it.
//! - Setup failures come back in the outer `Result`; a stream that stalls
//!   ([`Error::IdleTimeout`]) or breaks ([`Error::UnexpectedEof`]) yields that error as its
//!   last item. Nothing is retried or truncated silently. Protocols with a final event
//!   wrap their stream in [`RequireFinal`].
//! - Dropping a stream closes its connection.
//! - [`HttpClient::download`] reads at most its cap of a body, and with
//!   [`Destinations::PublicOnly`] connects only to public addresses ([`NonPublic`]),
//!   checking the addresses it connects to and every redirect hop. A client built
//!   with [`HttpClientBuilder::with_destinations`]`(`[`Destinations::PublicOnly`]`)`
//!   (or [`HttpClient::shared_public_only`]) does the same for every request, and
//!   follows no redirects.
//!
//! # Example
//!
//! ```no_run
//! # async fn demo() -> oxiscope_http::Result<()> {
//! use futures_util::StreamExt;
//! use oxiscope_http::{HttpClient, RequireFinal, SseEvent};
//!
//! let http = HttpClient::new()?;
//! let request = http
//!     .post("https://api.example.com/v1/chat/completions")
//!     .bearer_auth("sk-...")
//!     .header("content-type", "application/json")
//!     .body(r#"{"model":"m","stream":true,"messages":[]}"#);
//! let events = http.sse(request).await?;
//! let mut events = RequireFinal::new(events, |event: &SseEvent| event.data == "[DONE]");
//! while let Some(event) = events.next().await {
//!     let event = event?;
//!     // parse event.data ...
//! #   let _ = event;
//! }
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod address;
mod body;
mod builder;
mod client;
mod download;
mod error;
mod idle;
mod lines;
mod ndjson;
mod require_final;
mod retry;
mod sse;

pub use address::NonPublic;
pub use body::BodyStream;
pub use builder::HttpClientBuilder;
pub use client::HttpClient;
pub use download::{Destinations, Download, DownloadOptions, MAX_REDIRECTS};
pub use error::{
    BoxError, ConnectFailure, DecodeError, Error, Result, StatusError, endpoint_of,
    is_retryable_status,
};
pub use idle::IdleTimeout;
pub use ndjson::{LineStream, NdjsonStream};
pub use require_final::RequireFinal;
pub use retry::{RetryPolicy, parse_retry_after};
pub use sse::{DEFAULT_MAX_EVENT_BYTES, SseDecoder, SseEvent, SseStream};

/// The HTTP library underneath, for building requests (headers, bodies, URLs) without a
/// direct dependency on it.
pub use reqwest;
