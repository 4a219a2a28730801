use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_http::{Error, HttpClient, RequireFinal, RetryPolicy, SseEvent};
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;

use super::{bounded, quick_client};

#[tokio::test]
async fn events_split_across_chunks_arrive_whole() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::sse([
        "event: delta\r\nda",
        "ta: {\"text\":\"h\u{e9}",
        "llo\"}\r",
        "\n\r\n: ping\n\ndata: [DONE]",
    ]));
    let http = quick_client(1);

    let events = bounded(http.sse(http.post(server.url("/v1/stream"))))
        .await
        .unwrap();
    let events: Vec<SseEvent> = bounded(events.map(Result::unwrap).collect()).await;

    assert_eq!(
        events,
        [
            SseEvent::new(r#"{"text":"héllo"}"#).with_event("delta"),
            SseEvent::new("[DONE]")
        ]
    );
}

#[tokio::test]
async fn sse_request_asks_for_an_event_stream() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::sse(["data: x\n\n"]));
    let http = quick_client(1);

    let events = bounded(http.sse(http.get(server.url("/")))).await.unwrap();
    drop(events);

    assert_eq!(
        server.requests()[0].header("accept"),
        Some("text/event-stream")
    );
}

#[tokio::test]
async fn failing_status_comes_back_before_the_stream() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::text(401, "bad key").with_header("x-request-id", "r1"));
    let http = quick_client(3);

    let err = bounded(http.sse(http.post(server.url("/"))))
        .await
        .unwrap_err();

    assert_eq!(err.status().map(|s| s.as_u16()), Some(401));
    assert_eq!(err.request_id(), Some("r1"));
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn connection_cut_mid_stream_is_an_error_item_and_the_partial_event_is_dropped() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::sse(["data: one\n\n", "data: tw"]).with_end(BodyEnd::Abort));
    let http = quick_client(3);

    let events = bounded(http.sse(http.post(server.url("/")))).await.unwrap();
    let items: Vec<_> = bounded(events.collect()).await;

    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0].as_ref().unwrap(), &SseEvent::new("one"));
    assert!(
        matches!(&items[1], Err(Error::UnexpectedEof { source: Some(_) })),
        "{items:?}"
    );
    // Mid-stream failures are never retried.
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn clean_end_before_the_final_event_is_reported_by_require_final() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::sse(["data: one\n\n"]));
    let http = quick_client(1);

    let events = bounded(http.sse(http.post(server.url("/")))).await.unwrap();
    let items: Vec<_> =
        bounded(RequireFinal::new(events, |e: &SseEvent| e.data == "[DONE]").collect()).await;

    assert_eq!(items.len(), 2);
    assert!(
        matches!(items[1], Err(Error::UnexpectedEof { source: None })),
        "{items:?}"
    );
}

#[tokio::test]
async fn stalled_stream_hits_the_idle_timeout() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::sse(["data: one\n\n"]).with_end(BodyEnd::Stall));
    let http = HttpClient::builder()
        .with_retry(RetryPolicy::none())
        .with_idle_timeout(Duration::from_millis(200))
        .build()
        .unwrap();

    let mut events = bounded(http.sse(http.post(server.url("/")))).await.unwrap();

    assert_eq!(
        bounded(events.next()).await.unwrap().unwrap(),
        SseEvent::new("one")
    );
    let err = bounded(events.next()).await.unwrap().unwrap_err();
    assert!(matches!(err, Error::IdleTimeout { after } if after == Duration::from_millis(200)));
    assert!(bounded(events.next()).await.is_none());
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let server = FakeServer::start().await.unwrap();
    let mut response = ScriptedResponse::sse(["data: first\n\n"]);
    for _ in 0..200 {
        response = response.with_chunk_after(Duration::from_millis(20), "data: more\n\n");
    }
    server.push(response);
    let http = quick_client(1);

    let mut events = bounded(http.sse(http.post(server.url("/")))).await.unwrap();
    assert_eq!(
        bounded(events.next()).await.unwrap().unwrap(),
        SseEvent::new("first")
    );
    drop(events);

    // The server notices the client went away long before its 200 chunks are sent.
    bounded(server.wait_for_abandoned_bodies(1)).await;
}
