//! The Responses API chat and multi-agent formatters reproduce AgentScope
//! 2.0.11's payload for every reference history (whole-value equality),
//! and reasoning items, files and refused media are formatted as the API
//! wants.
//!
//! Normalisation, on the inputs only: the `file://` image of
//! `multimodal_user` points at a file that only existed where the
//! reference was made, so the 1×1 PNG from the history is written to a
//! temporary file and the URL rewritten to it (the expected output holds
//! it inlined as a data URL, unchanged). Remote images are passed on as
//! URLs, never downloaded (the reference stubs no fetch for this family).

use base64::Engine as _;
use oxiscope_message::{
    Base64Source, ContentBlock, DataBlock, DataSource, MediaBlock, Msg, ThinkingBlock,
    ToolCallBlock, ToolResultBlock, ToolResultState, UrlSource,
};
use oxiscope_model::{Formatter, ModelError};
use oxiscope_providers::MediaPolicy;
use oxiscope_providers::openai_response::{
    ENCRYPTED_CONTENT, OpenAiResponseFormatter, OpenAiResponseMultiAgentFormatter,
    REASONING_ITEM_ID,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const LOCAL_IMAGE_URL: &str = "file:///tmp/wire-scratch/img/local.png";

fn read(name: &str) -> Value {
    oxiscope_test_support::fixtures::load(&format!("formatter/{name}.json"))
}

fn rewrite(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(s) if s == from => *s = to.to_owned(),
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, from, to)),
        Value::Object(map) => map.values_mut().for_each(|v| rewrite(v, from, to)),
        _ => {}
    }
}

async fn check(name: &str, formatter: &dyn Formatter) {
    let dir = tempfile::tempdir().unwrap();
    let mut histories = read("histories");
    let png = base64::engine::general_purpose::STANDARD
        .decode(
            histories["multimodal_user"][1]["content"][1]["source"]["data"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    let local = dir.path().join("local.png");
    std::fs::write(&local, png).unwrap();
    rewrite(
        &mut histories,
        LOCAL_IMAGE_URL,
        &format!("file://{}", local.display()),
    );
    let reference = read(name);
    assert_eq!(
        reference["supported_input_media_types"],
        json!(formatter.supported_input_media_types()),
        "{name}: accepted media types"
    );
    let cases = reference["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6, "{name}: six reference histories");
    for case in cases {
        assert_eq!(case.get("remote_fetches_stubbed"), None, "nothing fetched");
        let history = case["history"].as_str().unwrap();
        let msgs: Vec<Msg> = serde_json::from_value(histories[history].clone()).unwrap();
        let output = formatter.format(&msgs).await.unwrap();
        assert_eq!(Value::Array(output), case["output"], "{name} / {history}");
    }
}

#[tokio::test]
async fn the_chat_formatter_matches_the_reference_for_every_history() {
    check("OpenAIResponseFormatter", &OpenAiResponseFormatter::new()).await;
}

#[tokio::test]
async fn the_multi_agent_formatter_matches_the_reference_for_every_history() {
    check(
        "OpenAIResponseMultiAgentFormatter",
        &OpenAiResponseMultiAgentFormatter::new(),
    )
    .await;
}

fn thinking(text: &str, extra: &[(&str, &str)]) -> ContentBlock {
    let mut block = ThinkingBlock::new(text);
    for (k, v) in extra {
        block.extra.insert((*k).to_owned(), (*v).into());
    }
    block.into()
}

#[tokio::test]
async fn reasoning_blocks_go_back_as_reasoning_items_with_their_encrypted_content() {
    let msgs = vec![
        Msg::user("user", "Weather?").unwrap(),
        Msg::assistant(
            "Friday",
            vec![
                thinking(
                    "Need the tool.",
                    &[(REASONING_ITEM_ID, "rs_1"), (ENCRYPTED_CONTENT, "gAAA==")],
                ),
                thinking("", &[(REASONING_ITEM_ID, "rs_2")]),
                // Thinking of another origin (a Claude signature) is dropped.
                thinking("other", &[("signature", "sig")]),
                ToolCallBlock::new("call_1", "get_weather", "{\"city\":").into(),
                ToolResultBlock::new("call_1", "get_weather", "sunny", ToolResultState::Success)
                    .into(),
            ],
        )
        .unwrap(),
    ];
    let output = OpenAiResponseFormatter::new().format(&msgs).await.unwrap();
    assert_eq!(
        Value::Array(output),
        json!([
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Need the tool."}],
                "content": [],
                "encrypted_content": "gAAA==",
            },
            {"type": "reasoning", "id": "rs_2", "summary": [], "content": []},
            // Invalid arguments are sent as they came.
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":"},
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        ])
    );
}

#[tokio::test]
async fn files_go_as_input_file_and_unreadable_media_as_a_note() {
    let pdf = DataBlock::new(DataSource::Base64(Base64Source {
        data: "JVBERi0=".to_owned(),
        media_type: "application/pdf".to_owned(),
    }));
    let mut named = DataBlock::new(DataSource::Url(
        UrlSource::new("https://example.com/a.pdf", "application/pdf").unwrap(),
    ));
    named.name = Some("a.pdf".to_owned());
    let audio = DataBlock::new(DataSource::Base64(Base64Source {
        data: "UklGRg==".to_owned(),
        media_type: "audio/wav".to_owned(),
    }));
    let (pdf_id, audio_id) = (pdf.id.clone(), audio.id.clone());
    let result = ToolResultBlock::new(
        "call_1",
        "fetch",
        vec![
            MediaBlock::Data(pdf.clone()),
            MediaBlock::Data(audio.clone()),
        ],
        ToolResultState::Success,
    );
    let msgs = vec![
        Msg::user("user", vec![pdf.into(), named.into()]).unwrap(),
        Msg::assistant(
            "Friday",
            vec![
                ToolCallBlock::new("call_1", "fetch", "{}").into(),
                result.into(),
            ],
        )
        .unwrap(),
    ];
    let output = OpenAiResponseFormatter::new().format(&msgs).await.unwrap();
    let note = format!(
        "<system-reminder>A(n) audio file (audio/wav) with the identifier [{audio_id}] was \
         omitted: this model cannot read it.</system-reminder>"
    );
    assert_eq!(
        Value::Array(output),
        json!([
            {"role": "user", "content": [
                {"type": "input_file", "filename": format!("{pdf_id}.pdf"), "file_data": "data:application/pdf;base64,JVBERi0="},
                {"type": "input_file", "file_url": "https://example.com/a.pdf"},
            ]},
            {"type": "function_call", "call_id": "call_1", "name": "fetch", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": [
                {"type": "input_file", "filename": format!("{pdf_id}.pdf"), "file_data": "data:application/pdf;base64,JVBERi0="},
                {"type": "input_text", "text": note},
            ]},
        ])
    );
}

#[tokio::test]
async fn a_local_file_outside_the_allowed_roots_is_refused_not_read() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.png");
    std::fs::write(&secret, b"\x89PNG").unwrap();
    let escape = format!(
        "file://{}/../{}/secret.png",
        root.path().display(),
        outside.path().file_name().unwrap().to_str().unwrap()
    );
    let link = root.path().join("link.png");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let urls = [
        format!("file://{}", secret.display()),
        escape,
        format!("file://{}", link.display()),
    ];
    for url in urls {
        let image = DataBlock::new(DataSource::Url(UrlSource::new(&url, "image/png").unwrap()));
        let msgs = vec![Msg::user("user", vec![image.into()]).unwrap()];
        let formatter = OpenAiResponseFormatter::new()
            .with_media_policy(MediaPolicy::default().with_file_roots(vec![root.path().into()]));
        let err = formatter.format(&msgs).await.unwrap_err();
        let ModelError::InvalidRequest { message } = &err else {
            panic!("{err:?}")
        };
        assert!(message.contains("cannot inline media"), "{message}");
    }
}

#[tokio::test]
async fn the_multi_agent_formatter_keeps_later_system_messages_in_the_transcript() {
    let msgs = vec![
        Msg::system("system", "Rules.").unwrap(),
        Msg::user("Alice", "Hi").unwrap(),
        Msg::assistant(
            "Friday",
            vec![
                ToolCallBlock::new("c", "t", "{}").into(),
                ToolResultBlock::new("c", "t", "ok", ToolResultState::Success).into(),
            ],
        )
        .unwrap(),
        Msg::user("Bob", "Next").unwrap(),
    ];
    let output = OpenAiResponseMultiAgentFormatter::new()
        .with_history_prompt("P\n")
        .format(&msgs)
        .await
        .unwrap();
    assert_eq!(
        Value::Array(output),
        json!([
            {"role": "system", "content": "Rules."},
            {"role": "user", "content": [{"type": "input_text", "text": "P\n<history>\nAlice: Hi\n</history>"}]},
            {"type": "function_call", "call_id": "c", "name": "t", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": "ok"},
            {"role": "user", "content": [{"type": "input_text", "text": "<history>\nBob: Next\n</history>"}]},
        ])
    );
}
