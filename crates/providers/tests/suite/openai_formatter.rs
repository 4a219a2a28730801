//! The OpenAI-family formatter beyond the reference histories: media parts
//! per type, failures to inline media, unsupported media, and the decoder on
//! awkwardly cut bodies.

use futures_util::StreamExt;
use futures_util::stream;
use oxiscope_message::{
    Base64Source, ContentBlock, DataBlock, DataSource, MediaBlock, Msg, Role, ToolCallBlock,
    ToolResultBlock, ToolResultState, UrlSource,
};
use oxiscope_model::{Formatter, ModelDelta, ModelError};
use oxiscope_providers::openai_chat::{OpenAiChatFormatter, Vendor, decode_sse_stream};
use oxiscope_test_support::{FakeServer, OpenAiScript, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn inline(media_type: &str, data: &str) -> DataBlock {
    let mut block = DataBlock::new(DataSource::Base64(Base64Source {
        data: data.to_owned(),
        media_type: media_type.to_owned(),
    }));
    block.id = "blk01".into();
    block
}

fn url(media_type: &str, url: &str) -> DataBlock {
    let mut block = DataBlock::new(DataSource::Url(UrlSource::new(url, media_type).unwrap()));
    block.id = "blk02".into();
    block
}

fn user_with(blocks: Vec<DataBlock>) -> Msg {
    let mut msg = Msg::from_text("user", Role::User, "look");
    msg.content
        .extend(blocks.into_iter().map(ContentBlock::Data));
    msg
}

async fn format(formatter: &OpenAiChatFormatter, msg: Msg) -> Result<Vec<Value>, ModelError> {
    formatter.format(&[msg]).await
}

#[tokio::test]
async fn audio_pdf_and_video_become_their_own_part_types() {
    let openai = OpenAiChatFormatter::chat(Vendor::OpenAi);
    let msg = user_with(vec![
        inline("audio/wav", "UklGRg=="),
        inline("application/pdf", "JVBERi0="),
        inline("video/mp4", "AAAA"),
    ]);

    let out = format(&openai, msg).await.unwrap();

    // OpenAI takes no video: it is left out of a user message.
    assert_eq!(
        out[0]["content"],
        json!([
            {"type": "text", "text": "look"},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "file", "file": {
                "filename": "blk01.pdf",
                "file_data": "data:application/pdf;base64,JVBERi0=",
            }},
        ])
    );

    let volcengine = OpenAiChatFormatter::chat(Vendor::Volcengine);
    let out = format(
        &volcengine,
        user_with(vec![url("video/mp4", "https://v.example/a.mp4")]),
    )
    .await
    .unwrap();
    assert_eq!(
        out[0]["content"][1],
        json!({"type": "video_url", "video_url": {"url": "https://v.example/a.mp4"}})
    );
}

#[tokio::test]
async fn a_missing_local_file_is_an_invalid_request_not_a_panic() {
    let formatter = OpenAiChatFormatter::chat(Vendor::OpenAi);
    let msg = user_with(vec![url("image/png", "file:///nonexistent/oxiscope/x.png")]);

    let err = format(&formatter, msg).await.unwrap_err();

    assert!(matches!(&err, ModelError::InvalidRequest { message } if message.contains("x.png")));
}

#[tokio::test]
async fn a_failed_or_oversized_download_is_an_invalid_request() {
    let server = FakeServer::start().await.unwrap();
    server.push_for("/gone.png", ScriptedResponse::text(404, "no such image"));
    server.push_for(
        "/big.png",
        ScriptedResponse::new(200)
            .with_header("content-type", "image/png")
            .with_body(vec![0_u8; 4096]),
    );
    let formatter = OpenAiChatFormatter::chat(Vendor::Moonshot)
        .with_media_limits(1024, std::time::Duration::from_secs(10));

    for path in ["/gone.png", "/big.png"] {
        let msg = user_with(vec![url("image/png", &server.url(path))]);
        let err = format(&formatter, msg).await.unwrap_err();
        assert!(
            matches!(&err, ModelError::InvalidRequest { message } if message.contains(path)),
            "{err:?}"
        );
    }
}

#[tokio::test]
async fn broken_base64_from_a_tool_is_an_invalid_request() {
    let formatter = OpenAiChatFormatter::chat(Vendor::DeepSeek)
        .with_scratch_dir(std::env::temp_dir().join("oxiscope-test-broken-b64"));
    let mut msg = Msg::from_text("Friday", Role::Assistant, "");
    msg.content = vec![
        ContentBlock::ToolCall(ToolCallBlock::new("c1", "shot", "{}")),
        ContentBlock::ToolResult(ToolResultBlock::new(
            "c1",
            "shot",
            vec![MediaBlock::Data(inline("image/png", "%%% not base64"))],
            ToolResultState::Success,
        )),
    ];

    let err = format(&formatter, msg).await.unwrap_err();

    assert!(matches!(&err, ModelError::InvalidRequest { message } if message.contains("blk01")));
}

#[tokio::test]
async fn a_url_the_vendor_cannot_take_is_named_in_the_tool_result() {
    let formatter = OpenAiChatFormatter::chat(Vendor::DeepSeek);
    let mut msg = Msg::from_text("Friday", Role::Assistant, "");
    msg.content = vec![
        ContentBlock::ToolCall(ToolCallBlock::new("c1", "fetch", "{}")),
        ContentBlock::ToolResult(ToolResultBlock::new(
            "c1",
            "fetch",
            vec![MediaBlock::Data(url(
                "image/png",
                "https://img.example/a.png",
            ))],
            ToolResultState::Success,
        )),
    ];

    let out = format(&formatter, msg).await.unwrap();

    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(
        out[1]["content"],
        "<system-reminder>A(n) image file is returned and can be found at: \
         https://img.example/a.png.</system-reminder>"
    );
}

#[tokio::test]
async fn the_decoder_gives_the_same_deltas_however_the_body_is_cut() {
    let script = OpenAiScript::new()
        .reasoning("héllo ")
        .text("wörld ✓")
        .tool_call(0, "call_1", "f")
        .tool_args(0, "{\"a\": 1}")
        .finish("tool_calls")
        .usage(3, 4, 1);
    let body = script.body().into_bytes();
    let mut reference: Option<Vec<ModelDelta>> = None;
    for size in [1, 2, 3, 7, 64, body.len()] {
        let pieces: Vec<Result<Vec<u8>, oxiscope_http::Error>> =
            body.chunks(size).map(|c| Ok(c.to_vec())).collect();
        let deltas: Vec<ModelDelta> = decode_sse_stream(stream::iter(pieces))
            .map(|d| d.unwrap())
            .collect()
            .await;
        match &reference {
            None => reference = Some(deltas),
            Some(r) => assert_eq!(&deltas, r, "cut every {size} bytes"),
        }
    }
    let reference = reference.unwrap();
    assert_eq!(reference.len(), 5);
    assert_eq!(reference[0], ModelDelta::Thinking("héllo ".to_owned()));
    assert_eq!(reference[1], ModelDelta::Text("wörld ✓".to_owned()));
}
