use oxiscope_message::UrlSource;
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;

use super::*;

fn loader(remote: RemoteMedia) -> MediaLoader {
    MediaLoader {
        http: None,
        policy: MediaPolicy::default().with_remote(remote),
    }
}

/// The message of an [`ModelError::InvalidRequest`], or a panic.
fn message(result: Result<Bytes, ModelError>) -> String {
    match result {
        Err(ModelError::InvalidRequest { message }) => message,
        other => panic!("not an invalid request: {other:?}"),
    }
}

#[tokio::test]
async fn allow_downloads_from_any_address() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(200).with_body("png"));
    let bytes = loader(RemoteMedia::Allow)
        .fetch(&server.url("/a.png"))
        .await
        .unwrap();
    assert_eq!(&bytes[..], b"png");
}

#[tokio::test]
async fn public_only_refuses_loopback_and_metadata_addresses_naming_them() {
    let server = FakeServer::start().await.unwrap();
    let port = server.addr().port();
    let public_only = loader(RemoteMedia::PublicOnly);
    for (url, class) in [
        (server.url("/a.png"), "a loopback address"),
        (
            format!("http://localhost:{port}/a.png"),
            "a loopback address",
        ),
        (format!("http://[::1]:{port}/a.png"), "a loopback address"),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "link-local",
        ),
        (
            "http://10.1.2.3/a.png".to_owned(),
            "a private network address",
        ),
    ] {
        let message = message(public_only.fetch(&url).await);
        assert!(
            message.starts_with(&format!("cannot inline media from {url}: "))
                && message.contains(class),
            "{url}: {message}"
        );
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn deny_downloads_nothing() {
    let server = FakeServer::start().await.unwrap();
    let url = server.url("/a.png");
    let message = message(loader(RemoteMedia::Deny).fetch(&url).await);
    assert_eq!(
        message,
        format!(
            "cannot inline media from {url}: media URLs are not downloaded here; send the media inline"
        )
    );
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn other_schemes_are_refused_and_data_urls_are_inline() {
    let message = message(loader(RemoteMedia::Allow).fetch("ftp://host/a.png").await);
    assert!(message.contains("unsupported scheme `ftp`"), "{message}");
    let source =
        DataSource::Url(UrlSource::new("data:image/png;base64,iVBO", "image/png").unwrap());
    assert_eq!(
        loader(RemoteMedia::Deny).base64(&source).await.unwrap(),
        "iVBO"
    );
}

#[test]
fn check_url_refuses_what_a_fetch_would_refuse_without_fetching() {
    let dir = tempfile::tempdir().unwrap();
    let inside = dir.path().join("cat.png");
    std::fs::write(&inside, b"png").unwrap();
    let outside = tempfile::NamedTempFile::new().unwrap();
    let policy = MediaPolicy::default()
        .with_file_roots(vec![dir.path().to_path_buf()])
        .with_remote(RemoteMedia::Deny)
        .with_limits(2, std::time::Duration::from_secs(1));
    let url = |p: &std::path::Path| format!("file://{}", p.display());
    assert_eq!(policy.check_url("data:image/png;base64,AAAA"), Ok(()));
    assert!(
        policy
            .check_url(&url(&inside))
            .unwrap_err()
            .contains("larger than 2")
    );
    let roomy = policy.with_limits(10, std::time::Duration::from_secs(1));
    assert_eq!(roomy.check_url(&url(&inside)), Ok(()));
    for refused in [
        url(outside.path()),
        url(&dir.path().join("missing.png")),
        url(dir.path()),
        "https://example.com/a.png".to_owned(),
        "s3://bucket/a.png".to_owned(),
        "not a url".to_owned(),
    ] {
        assert!(roomy.check_url(&refused).is_err(), "{refused}");
    }
    let downloads = roomy.with_remote(RemoteMedia::PublicOnly);
    assert_eq!(downloads.check_url("https://example.com/a.png"), Ok(()));
}
