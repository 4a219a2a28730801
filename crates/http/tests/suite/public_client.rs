//! A client for public addresses only: every request it sends (not only downloads)
//! is refused before anything is sent when it names or resolves to an internal
//! address.

use oxiscope_http::{Destinations, Error, HttpClient, NonPublic};
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;

use super::bounded;

fn refusal(err: &Error) -> Option<(String, NonPublic)> {
    match err {
        Error::RefusedAddress {
            address, reason, ..
        } => Some((address.to_string(), *reason)),
        _ => None,
    }
}

#[tokio::test]
async fn an_ip_literal_metadata_url_is_refused_before_any_connection() {
    let http = HttpClient::shared_public_only().unwrap();
    assert_eq!(http.destinations(), Destinations::PublicOnly);

    let err = bounded(http.send(http.post("http://169.254.169.254/v1").body("{}")))
        .await
        .unwrap_err();

    assert_eq!(
        refusal(&err),
        Some(("169.254.169.254".to_owned(), NonPublic::LinkLocal))
    );
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn loopback_servers_by_address_or_name_get_no_request() {
    let server = FakeServer::start().await.unwrap();
    let port = server.addr().port();
    let http = HttpClient::builder()
        .with_destinations(Destinations::PublicOnly)
        .build()
        .unwrap();

    for url in [
        server.url("/v1/chat/completions"),
        format!("http://localhost:{port}/v1/chat/completions"),
    ] {
        let err = bounded(http.sse(http.post(url.as_str()).body("{}")))
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&err).map(|r| r.1),
            Some(NonPublic::Loopback),
            "{url}"
        );
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn the_default_client_still_reaches_loopback() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(200).with_body("ok"));
    let http = HttpClient::shared().unwrap();
    assert_eq!(http.destinations(), Destinations::Any);

    let response = bounded(http.send(http.get(server.url("/")))).await.unwrap();

    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(server.request_count(), 1);
}
