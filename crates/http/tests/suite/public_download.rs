//! Downloads restricted to public addresses: every way of reaching a loopback or
//! internal address is refused before anything is sent, redirects included.

use std::net::SocketAddr;
use std::time::Duration;

use oxiscope_http::{Destinations, DownloadOptions, Error, NonPublic};
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;

use super::{bounded, quick_client};

fn public_only() -> DownloadOptions {
    DownloadOptions::new(1024, Duration::from_secs(10)).with_destinations(Destinations::PublicOnly)
}

/// The URL, address and class of a refusal, failing the test on any other outcome.
fn refused(result: oxiscope_http::Result<oxiscope_http::Download>) -> (String, String, NonPublic) {
    match result {
        Err(Error::RefusedAddress {
            url,
            address,
            reason,
        }) => (url, address.to_string(), reason),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn redirect_to(location: &str) -> ScriptedResponse {
    ScriptedResponse::new(302).with_header("location", location)
}

#[tokio::test]
async fn loopback_urls_are_refused_without_a_request() {
    let server = FakeServer::start().await.unwrap();
    let port = server.addr().port();
    let http = quick_client(3);

    for url in [
        server.url("/a.png"),
        format!("http://localhost:{port}/a.png"),
        format!("http://[::1]:{port}/a.png"),
        format!("http://[::ffff:127.0.0.1]:{port}/a.png"),
    ] {
        let result = bounded(http.download(url.as_str(), &public_only())).await;
        let (refused_url, address, reason) = refused(result);
        let normalised = oxiscope_http::reqwest::Url::parse(&url)
            .unwrap()
            .to_string();
        assert_eq!((refused_url, reason), (normalised, NonPublic::Loopback));
        assert!(
            ["127.0.0.1", "::1", "::ffff:127.0.0.1"].contains(&address.as_str()),
            "{url}: {address}"
        );
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn metadata_and_private_addresses_are_refused_with_a_message_naming_them() {
    let http = quick_client(3);
    let cases = [
        (
            "http://169.254.169.254/latest/meta-data/",
            NonPublic::LinkLocal,
        ),
        (
            "http://[fd00:ec2::254]/latest/meta-data/",
            NonPublic::UniqueLocal,
        ),
        ("http://10.0.0.7/a.png", NonPublic::Private),
        (
            "http://100.100.100.200/latest/meta-data/",
            NonPublic::SharedNat,
        ),
        ("http://0.0.0.0/", NonPublic::Unspecified),
    ];
    for (url, class) in cases {
        let err = bounded(http.download(url, &public_only()))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::RefusedAddress { reason, .. } if *reason == class),
            "{url}: {err:?}"
        );
        assert!(!err.is_retryable());
    }
    let err = bounded(http.download("http://169.254.169.254/x", &public_only()))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "http://169.254.169.254/x resolves to a link-local address (cloud metadata services \
         live there) (169.254.169.254), which is not fetched"
    );
}

#[tokio::test]
async fn an_allowed_address_is_downloaded_and_its_redirects_followed() {
    let server = FakeServer::start().await.unwrap();
    server.push_for("/first", redirect_to("/second"));
    server.push_for(
        "/second",
        ScriptedResponse::new(200)
            .with_header("content-type", "image/png")
            .with_body("png"),
    );
    let options = public_only().also_allowing(server.addr());

    let download = bounded(quick_client(1).download(server.url("/first"), &options))
        .await
        .unwrap();

    assert_eq!(&download.bytes[..], b"png");
    assert_eq!(download.url.as_str(), server.url("/second"));
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_redirect_to_a_loopback_address_is_refused_at_that_hop() {
    let allowed = FakeServer::start().await.unwrap();
    let internal = FakeServer::start().await.unwrap();
    internal.push(ScriptedResponse::new(200).with_body("secret"));
    let port = internal.addr().port();
    let options = public_only().also_allowing(allowed.addr());
    let http = quick_client(3);

    for target in [
        internal.url("/admin"),
        format!("http://localhost:{port}/admin"),
        format!("http://[::1]:{port}/admin"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
    ] {
        allowed.push_for("/img", redirect_to(&target));
        let err = bounded(http.download(allowed.url("/img"), &options))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::RefusedAddress { url, .. } if url.contains("/admin") || url.contains("meta-data")),
            "{target}: {err:?}"
        );
    }
    assert_eq!(internal.request_count(), 0);
}

#[tokio::test]
async fn more_than_five_redirects_are_not_followed() {
    let server = FakeServer::start().await.unwrap();
    for _ in 0..10 {
        server.push_for("/loop", redirect_to("/loop"));
    }
    let options = public_only().also_allowing(server.addr());

    let err = bounded(quick_client(1).download(server.url("/loop"), &options))
        .await
        .unwrap_err();

    assert!(matches!(err, Error::InvalidRequest { .. }), "{err:?}");
    assert!(err.to_string().contains("more than 5"), "{err}");
    assert_eq!(server.request_count(), 6);
}

#[tokio::test]
async fn a_chunked_body_over_the_cap_is_refused_without_content_length() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(200).with_chunks(vec![vec![0_u8; 600]; 4]));
    let options = public_only().also_allowing(server.addr());

    let err = bounded(quick_client(1).download(server.url("/big"), &options))
        .await
        .unwrap_err();

    assert!(
        matches!(err, Error::BodyTooLarge { limit: 1024 }),
        "{err:?}"
    );
}

#[tokio::test]
async fn any_destination_downloads_from_loopback() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(200).with_body("ok"));
    let options = DownloadOptions::new(1024, Duration::from_secs(10));

    let download = bounded(quick_client(1).download(server.url("/a"), &options))
        .await
        .unwrap();

    assert_eq!(&download.bytes[..], b"ok");
}

#[tokio::test]
async fn an_allowed_exception_does_not_cover_another_port() {
    let server = FakeServer::start().await.unwrap();
    let other: SocketAddr = SocketAddr::new(server.addr().ip(), server.addr().port() ^ 1);
    let options = public_only().also_allowing(other);

    let (_, _, reason) =
        refused(bounded(quick_client(1).download(server.url("/a"), &options)).await);

    assert_eq!(reason, NonPublic::Loopback);
    assert_eq!(server.request_count(), 0);
}
