//! Anthropic formatter cases beyond the reference histories: media Claude
//! cannot read, broken tool arguments, failed downloads, PDFs, parallel
//! results, and redacted thinking coming back from a stream.

use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_http::HttpClient;
use oxiscope_message::{
    Base64Source, ContentBlock, DataBlock, DataSource, MediaBlock, Msg, RichContent, ToolCallBlock,
    ToolResultBlock, ToolResultState, UrlSource,
};
use oxiscope_model::{ChatModel, ChatRequest, Formatter, ModelError};
use oxiscope_providers::anthropic::{AnthropicChatFormatter, AnthropicChatModel};
use oxiscope_test_support::anthropic::{AnthropicStream, Usage};
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn b64(data: &str, media_type: &str) -> DataBlock {
    let mut block = DataBlock::new(DataSource::Base64(Base64Source {
        data: data.into(),
        media_type: media_type.into(),
    }));
    block.id = format!("blk_{}", media_type.replace('/', "_")).into();
    block
}

fn url_block(url: &str) -> DataBlock {
    DataBlock::new(DataSource::Url(UrlSource::new(url, "image/png").unwrap()))
}

async fn format(msgs: &[Msg]) -> Result<Vec<Value>, ModelError> {
    AnthropicChatFormatter::new().format(msgs).await
}

#[tokio::test]
async fn media_claude_cannot_read_becomes_a_note_and_pdfs_become_documents() {
    let msg = Msg::user(
        "user",
        vec![
            b64("QUJD", "audio/wav").into(),
            b64("JVBERi0=", "application/pdf").into(),
        ],
    )
    .unwrap();
    let out = format(&[msg]).await.unwrap();
    let content = &out[0]["content"];
    assert_eq!(content[0]["type"], "text");
    let note = content[0]["text"].as_str().unwrap();
    assert!(
        note.contains("[blk_audio_wav]") && note.contains("audio/wav"),
        "{note}"
    );
    assert_eq!(
        content[1],
        json!({"type": "document", "source": {
            "type": "base64", "media_type": "application/pdf", "data": "JVBERi0="
        }})
    );
}

#[tokio::test]
async fn broken_tool_arguments_go_out_as_an_empty_object() {
    let call = ToolCallBlock::new("toolu_1", "Read", "{\"file_path\": ");
    let msg = Msg::assistant("Friday", vec![call.into()]).unwrap();
    let out = format(&[msg]).await.unwrap();
    assert_eq!(out[0]["content"][0]["input"], json!({}));
}

#[tokio::test]
async fn empty_text_never_goes_out_because_claude_refuses_it() {
    let blocks: Vec<ContentBlock> = vec![
        oxiscope_message::TextBlock::new("").into(),
        ToolCallBlock::new("a", "Bash", "{}").into(),
        ToolCallBlock::new("b", "Bash", "{}").into(),
        ToolCallBlock::new("c", "Read", "{}").into(),
        ToolResultBlock::new("a", "Bash", "", ToolResultState::Success).into(),
        ToolResultBlock::new(
            "b",
            "Bash",
            RichContent::Blocks(vec![]),
            ToolResultState::Success,
        )
        .into(),
        ToolResultBlock::new(
            "c",
            "Read",
            RichContent::Blocks(vec![
                MediaBlock::Text(oxiscope_message::TextBlock::new("")),
                MediaBlock::Text(oxiscope_message::TextBlock::new("kept")),
            ]),
            ToolResultState::Success,
        )
        .into(),
        oxiscope_message::HintBlock::new("", None).into(),
        oxiscope_message::TextBlock::new("").into(),
    ];
    let msgs = [
        Msg::system("system", "").unwrap(),
        Msg::user("user", "").unwrap(),
        Msg::user("user", "go").unwrap(),
        Msg::assistant("Friday", blocks).unwrap(),
    ];
    let out = format(&msgs).await.unwrap();
    let text = serde_json::to_string(&out).unwrap();
    assert!(!text.contains(r#""text":"""#), "{text}");
    assert_eq!(
        out,
        vec![
            json!({"role": "user", "content": [{"type": "text", "text": "go"}]}),
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "Bash", "input": {}},
                {"type": "tool_use", "id": "b", "name": "Bash", "input": {}},
                {"type": "tool_use", "id": "c", "name": "Read", "input": {}},
            ]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a"},
                {"type": "tool_result", "tool_use_id": "b"},
                {"type": "tool_result", "tool_use_id": "c",
                 "content": [{"type": "text", "text": "kept"}]},
            ]}),
        ]
    );
}

#[tokio::test]
async fn parallel_results_share_one_user_message() {
    let blocks: Vec<ContentBlock> = vec![
        ToolCallBlock::new("a", "Read", "{}").into(),
        ToolCallBlock::new("b", "Glob", "{}").into(),
        ToolResultBlock::new("a", "Read", "one", ToolResultState::Success).into(),
        ToolResultBlock::new("b", "Glob", "two", ToolResultState::Error).into(),
    ];
    let out = format(&[Msg::assistant("Friday", blocks).unwrap()])
        .await
        .unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0]["content"].as_array().unwrap().len(), 2);
    assert_eq!(
        out[1],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "one"}]},
            {"type": "tool_result", "tool_use_id": "b", "content": [{"type": "text", "text": "two"}]},
        ]})
    );
}

#[tokio::test]
async fn a_failed_or_oversized_download_is_an_invalid_request() {
    let server = FakeServer::start().await.unwrap();
    server.push_for("/missing.png", ScriptedResponse::text(404, "no such image"));
    server.push_for(
        "/huge.png",
        ScriptedResponse::new(200).with_body(vec![0_u8; 4096]),
    );
    let formatter = AnthropicChatFormatter::new()
        .with_http_client(HttpClient::new().unwrap())
        .with_media_limits(1024, Duration::from_secs(5));
    for path in ["/missing.png", "/huge.png"] {
        let msg = Msg::user("user", vec![url_block(&server.url(path)).into()]).unwrap();
        let err = formatter.format(&[msg]).await.unwrap_err();
        assert!(
            matches!(err, ModelError::InvalidRequest { .. }),
            "{path}: {err:?}"
        );
    }
    let missing = Msg::user(
        "user",
        vec![url_block("file:///nonexistent/oxiscope/x.png").into()],
    )
    .unwrap();
    assert!(matches!(
        formatter.format(&[missing]).await,
        Err(ModelError::InvalidRequest { .. })
    ));
}

#[tokio::test]
async fn a_hint_with_an_image_is_its_own_user_message() {
    let hint = oxiscope_message::HintBlock::new(
        RichContent::Blocks(vec![
            MediaBlock::Text(oxiscope_message::TextBlock::new("look:")),
            MediaBlock::Data(b64("iVBO", "image/png")),
        ]),
        None,
    );
    let blocks: Vec<ContentBlock> = vec![
        oxiscope_message::TextBlock::new("before").into(),
        hint.into(),
        oxiscope_message::TextBlock::new("after").into(),
    ];
    let out = format(&[Msg::assistant("Friday", blocks).unwrap()])
        .await
        .unwrap();
    let roles: Vec<&str> = out.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["assistant", "user", "assistant"]);
    assert_eq!(out[1]["content"][1]["source"]["data"], "iVBO");
}

#[tokio::test]
async fn redacted_thinking_from_a_stream_goes_back_as_redacted_thinking() {
    let server = FakeServer::start().await.unwrap();
    let reply = AnthropicStream::new("claude-test")
        .message_start(Usage::input(3))
        .redacted_thinking(0, "EncryptedBlob==")
        .text(1, &["Answer."])
        .message_delta("end_turn", 4)
        .message_stop();
    server.push(reply.into_response());
    let model = AnthropicChatModel::with_client(HttpClient::new().unwrap(), "k", "claude-test")
        .with_base_url(server.base_url());
    let msgs = [Msg::user("user", "Hi").unwrap()];
    let request = ChatRequest {
        messages: &msgs,
        tools: &[],
        tool_choice: None,
    };
    let mut stream = model.call(request, CancellationToken::new()).await.unwrap();
    let mut last = None;
    while let Some(chunk) = stream.next().await {
        last = Some(chunk.unwrap());
    }
    let reply = Msg::assistant("Friday", last.unwrap().content).unwrap();
    let out = format(&[reply]).await.unwrap();
    assert_eq!(
        out[0]["content"],
        json!([
            {"type": "redacted_thinking", "data": "EncryptedBlob=="},
            {"type": "text", "text": "Answer."},
        ])
    );
}
