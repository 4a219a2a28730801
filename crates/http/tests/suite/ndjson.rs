use futures_util::StreamExt;
use oxiscope_http::{DecodeError, Error};
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{bounded, quick_client};

#[tokio::test]
async fn json_lines_are_parsed_across_chunks_with_blank_lines_and_no_final_newline() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        ScriptedResponse::new(200)
            .with_header("content-type", "application/x-ndjson")
            .with_chunks([
                "{\"message\":{\"content\":\"a\"}}\n\n{\"mess",
                "age\":{}}\r\n{\"done\":true}",
            ]),
    );
    let http = quick_client(1);

    let lines = bounded(http.ndjson::<Value>(http.post(server.url("/api/chat"))))
        .await
        .unwrap();
    let lines: Vec<Value> = bounded(lines.map(Result::unwrap).collect()).await;

    assert_eq!(
        lines,
        [
            json!({"message": {"content": "a"}}),
            json!({"message": {}}),
            json!({"done": true})
        ]
    );
}

#[tokio::test]
async fn raw_lines_are_strings() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(200).with_chunks(["one\ntw", "o\n"]));
    let http = quick_client(1);

    let lines = bounded(http.lines(http.get(server.url("/"))))
        .await
        .unwrap();
    let lines: Vec<String> = bounded(lines.map(Result::unwrap).collect()).await;

    assert_eq!(lines, ["one", "two"]);
}

#[tokio::test]
async fn invalid_line_is_a_decode_error_item() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::new(200).with_body("{\"a\":1}\n{oops\n"));
    let http = quick_client(1);

    let lines = bounded(http.ndjson::<Value>(http.get(server.url("/"))))
        .await
        .unwrap();
    let items: Vec<_> = bounded(lines.collect()).await;

    assert_eq!(items.len(), 2);
    assert!(
        matches!(
            &items[1],
            Err(Error::Decode {
                kind: DecodeError::Json { line: Some(2), .. }
            })
        ),
        "{items:?}"
    );
}

#[tokio::test]
async fn cut_ndjson_stream_ends_with_unexpected_eof() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        ScriptedResponse::new(200)
            .with_chunks(["{\"a\":1}\n{\"b\""])
            .with_end(BodyEnd::Abort),
    );
    let http = quick_client(1);

    let lines = bounded(http.ndjson::<Value>(http.get(server.url("/"))))
        .await
        .unwrap();
    let items: Vec<_> = bounded(lines.collect()).await;

    assert_eq!(items.len(), 2);
    assert_eq!(items[0].as_ref().unwrap(), &json!({"a": 1}));
    assert!(
        matches!(&items[1], Err(Error::UnexpectedEof { .. })),
        "{items:?}"
    );
}
