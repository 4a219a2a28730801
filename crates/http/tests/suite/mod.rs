mod download;
mod ndjson;
mod public_client;
mod public_download;
mod retry;
mod send;
mod sse;
mod transport;

/// Streams and the client can move to other tasks, as providers need.
#[test]
fn client_and_streams_are_send_and_static() {
    fn assert_send<T: Send + 'static>() {}
    fn assert_sync<T: Sync>() {}
    assert_send::<oxiscope_http::HttpClient>();
    assert_sync::<oxiscope_http::HttpClient>();
    assert_send::<oxiscope_http::SseStream<oxiscope_http::BodyStream>>();
    assert_send::<oxiscope_http::NdjsonStream<oxiscope_http::BodyStream>>();
    assert_send::<oxiscope_http::LineStream<oxiscope_http::BodyStream>>();
    assert_send::<oxiscope_http::Error>();
    assert_sync::<oxiscope_http::Error>();
}

use std::future::Future;
use std::time::Duration;

use oxiscope_http::{HttpClient, RetryPolicy};

/// A client whose retries wait a millisecond, so tests run fast.
fn quick_client(max_attempts: u32) -> HttpClient {
    HttpClient::builder()
        .with_retry(
            RetryPolicy::default()
                .with_max_attempts(max_attempts)
                .with_base_delay(Duration::from_millis(1))
                .with_max_delay(Duration::from_millis(5)),
        )
        .build()
        .unwrap()
}

/// Fails the test instead of hanging when `future` does not finish in a long time.
async fn bounded<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), future)
        .await
        .expect("test hung")
}
