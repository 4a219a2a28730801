use std::time::Duration;

use oxiscope_http::Error;
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;

use super::{bounded, quick_client};

const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

#[tokio::test]
async fn small_image_is_downloaded_with_its_content_type() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        ScriptedResponse::new(200)
            .with_header("content-type", "image/png")
            .with_body(PNG_MAGIC),
    );
    let http = quick_client(1);
    let url = server.url("/cat.png");

    let download = bounded(http.get_bytes(url.as_str(), 1024, Duration::from_secs(10)))
        .await
        .unwrap();

    assert_eq!(&download.bytes[..], PNG_MAGIC);
    assert_eq!(download.content_type.as_deref(), Some("image/png"));
    assert_eq!(download.url.as_str(), url);
}

#[tokio::test]
async fn declared_size_over_the_cap_is_refused() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(200).with_body(vec![0u8; 2048]));
    let http = quick_client(1);

    let err = bounded(http.get_bytes(server.url("/big"), 1024, Duration::from_secs(10)))
        .await
        .unwrap_err();

    assert!(
        matches!(err, Error::BodyTooLarge { limit: 1024 }),
        "{err:?}"
    );
}

#[tokio::test]
async fn streamed_size_over_the_cap_is_refused() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(200).with_chunks(vec![vec![0u8; 600], vec![0u8; 600]]));
    let http = quick_client(1);

    let err = bounded(http.get_bytes(server.url("/big"), 1024, Duration::from_secs(10)))
        .await
        .unwrap_err();

    assert!(
        matches!(err, Error::BodyTooLarge { limit: 1024 }),
        "{err:?}"
    );
}

#[tokio::test]
async fn slow_download_times_out() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(200).with_chunk_after(Duration::from_secs(60), "late"));
    let http = quick_client(1);

    let err = bounded(http.get_bytes(server.url("/slow"), 1024, Duration::from_millis(100)))
        .await
        .unwrap_err();

    assert!(matches!(err, Error::Timeout { after, .. } if after == Duration::from_millis(100)));
}

#[tokio::test]
async fn missing_image_is_a_status_error() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(404));
    let http = quick_client(3);

    let err = bounded(http.get_bytes(server.url("/gone"), 1024, Duration::from_secs(10)))
        .await
        .unwrap_err();

    assert_eq!(err.status().map(|s| s.as_u16()), Some(404));
    assert_eq!(server.request_count(), 1);
}
