//! Helpers of the TTS tests: a fast-retrying client, draining a stream,
//! and base64.

use std::time::Duration;

use base64::Engine as _;
use futures_util::StreamExt;
use oxiscope_http::{HttpClient, RetryPolicy};
use oxiscope_model::{ModelError, TtsEvent, TtsStream};

/// A client that retries quickly.
pub(super) fn http() -> HttpClient {
    let retry = RetryPolicy::default()
        .with_base_delay(Duration::from_millis(5))
        .with_max_delay(Duration::from_millis(20));
    HttpClient::builder().with_retry(retry).build().unwrap()
}

/// A client whose backoff is far longer than `Retry-After: 1`, so a quick
/// retry proves the header was honoured.
pub(super) fn http_honouring_retry_after() -> HttpClient {
    let retry = RetryPolicy::default()
        .with_base_delay(Duration::from_secs(30))
        .with_max_delay(Duration::from_secs(5));
    HttpClient::builder().with_retry(retry).build().unwrap()
}

pub(super) fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Every item of `stream`.
pub(super) async fn drain(stream: TtsStream) -> Vec<Result<TtsEvent, ModelError>> {
    stream.collect().await
}

/// The audio bytes of `items`, joined, and the last item.
pub(super) fn audio_and_last(
    items: &[Result<TtsEvent, ModelError>],
) -> (Vec<u8>, Option<&Result<TtsEvent, ModelError>>) {
    let mut audio = Vec::new();
    for item in items {
        if let Ok(TtsEvent::Audio(chunk)) = item {
            audio.extend_from_slice(&chunk.data);
        }
    }
    (audio, items.last())
}

/// Asserts that `items` end with exactly one error and carry no `Done`.
pub(super) fn assert_ends_in_error(items: &[Result<TtsEvent, ModelError>]) -> &ModelError {
    let dones = items
        .iter()
        .filter(|i| matches!(i, Ok(TtsEvent::Done { .. })))
        .count();
    assert_eq!(dones, 0, "{items:?}");
    let errors = items.iter().filter(|i| i.is_err()).count();
    assert_eq!(errors, 1, "{items:?}");
    match items.last() {
        Some(Err(e)) => e,
        other => panic!("the last item is not an error: {other:?}"),
    }
}
