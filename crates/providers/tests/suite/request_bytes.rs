//! What a model sends is the encoding of its request body, whether the
//! messages come from the message cache or are formatted anew: first call,
//! repeated call, a new message, a message that grew, a changed state, a
//! dropped prefix; for every wire family and vendor, with the chat
//! formatters (kept between calls) and the multi-agent ones (never kept).
//! Media behind a link is read again on every call.

use std::path::PathBuf;
use std::sync::Arc;

use oxiscope_message::{
    Base64Source, ContentBlock, DataBlock, DataSource, MediaBlock, Msg, Role, TextBlock,
    ToolCallBlock, ToolResultBlock, ToolResultState, UrlSource,
};
use oxiscope_model::{ChatRequest, ToolChoice, ToolChoiceMode, ToolSchema};
use oxiscope_providers::anthropic::{
    AnthropicChatFormatter, AnthropicChatModel, AnthropicMultiAgentFormatter, AnthropicParameters,
};
use oxiscope_providers::ollama::{OllamaChatModel, OllamaMultiAgentFormatter};
use oxiscope_providers::openai_chat::{OpenAiChatFormatter, OpenAiChatModel, Vendor};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A PNG of the reference histories (1×1).
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg==";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oxiscope-bytes-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Replaces every linked media source with the inline PNG.
fn inline_links(value: &mut Value) {
    match value {
        Value::Object(map) if map.get("type") == Some(&json!("url")) && map.contains_key("url") => {
            let media_type = map.get("media_type").cloned().unwrap_or(json!("image/png"));
            *value = json!({"type": "base64", "data": PNG, "media_type": media_type});
        }
        Value::Object(map) => map.values_mut().for_each(inline_links),
        Value::Array(items) => items.iter_mut().for_each(inline_links),
        _ => {}
    }
}

fn inline(media_type: &str, data: &str) -> DataBlock {
    DataBlock::new(DataSource::Base64(Base64Source {
        data: data.to_owned(),
        media_type: media_type.to_owned(),
    }))
}

/// Every reference history one after the other, links made inline, and a
/// tool turn returning an image, a PDF and audio.
fn conversation() -> Vec<Msg> {
    let mut histories = oxiscope_test_support::fixtures::load("formatter/histories.json");
    inline_links(&mut histories);
    let mut msgs = Vec::new();
    for (_, history) in histories.as_object().unwrap() {
        let part: Vec<Msg> = serde_json::from_value(history.clone()).unwrap();
        msgs.extend(part);
    }
    let output = vec![
        MediaBlock::Text(TextBlock::new("three files")),
        MediaBlock::Data(inline("image/png", PNG)),
        MediaBlock::Data(inline("application/pdf", "JVBERi0xLjQ=")),
        MediaBlock::Data(inline("audio/wav", "UklGRiQAAABXQVZF")),
    ];
    msgs.push(
        Msg::assistant(
            "Friday",
            vec![
                ContentBlock::Text(TextBlock::new("Fetching the files.")),
                ContentBlock::ToolCall(ToolCallBlock::new("call_f", "fetch", "{\"n\": 3}")),
                ContentBlock::ToolResult(ToolResultBlock::new(
                    "call_f",
                    "fetch",
                    output,
                    ToolResultState::Success,
                )),
            ],
        )
        .unwrap(),
    );
    msgs
}

fn tools() -> Vec<ToolSchema> {
    ["get_weather", "Bash", "fetch"]
        .iter()
        .map(|name| {
            ToolSchema::function(
                *name,
                format!("The {name} tool."),
                json!({"type": "object", "properties": {"q": {"type": "string"}}}),
            )
        })
        .collect()
}

enum Model {
    OpenAi(OpenAiChatModel),
    Anthropic(AnthropicChatModel),
    Ollama(OllamaChatModel),
}

impl Model {
    fn request<'a>(
        msgs: &'a [Msg],
        tools: &'a [ToolSchema],
        choice: &'a ToolChoice,
    ) -> ChatRequest<'a> {
        ChatRequest {
            messages: msgs,
            tools,
            tool_choice: Some(choice),
        }
    }

    /// What a call sends, and the encoding of the request body.
    async fn both(&self, msgs: &[Msg]) -> (String, String) {
        let tools = tools();
        let choice = ToolChoice {
            mode: ToolChoiceMode::Auto,
            tools: None,
        };
        let (bytes, body) = match self {
            Self::OpenAi(m) => (
                m.request_bytes(Self::request(msgs, &tools, &choice))
                    .await
                    .unwrap(),
                m.request_body(Self::request(msgs, &tools, &choice))
                    .await
                    .unwrap(),
            ),
            Self::Anthropic(m) => (
                m.request_bytes(Self::request(msgs, &tools, &choice))
                    .await
                    .unwrap(),
                m.request_body(Self::request(msgs, &tools, &choice))
                    .await
                    .unwrap(),
            ),
            Self::Ollama(m) => (
                m.request_bytes(Self::request(msgs, &tools, &choice))
                    .await
                    .unwrap(),
                m.request_body(Self::request(msgs, &tools, &choice))
                    .await
                    .unwrap(),
            ),
        };
        (String::from_utf8(bytes).unwrap(), body.to_string())
    }

    async fn check(&self, label: &str, msgs: &[Msg]) -> String {
        let (sent, expected) = self.both(msgs).await;
        assert_eq!(sent, expected, "{label}");
        sent
    }
}

fn text_mut(msg: &mut Msg) -> &mut String {
    msg.content
        .iter_mut()
        .find_map(|b| match b {
            ContentBlock::Text(t) => Some(&mut t.text),
            _ => None,
        })
        .unwrap()
}

/// The agent-loop sequence on one model.
async fn run_sequence(label: &str, model: &Model) {
    let mut msgs = conversation();
    let first = model.check(&format!("{label}: first call"), &msgs).await;
    let again = model.check(&format!("{label}: same again"), &msgs).await;
    assert_eq!(first, again);

    msgs.push(Msg::from_text("user", Role::User, "And now?"));
    let grown = model
        .check(&format!("{label}: one more message"), &msgs)
        .await;
    assert!(grown.contains("And now?"), "{label}");

    let last = msgs.len() - 1;
    text_mut(&mut msgs[last]).push_str(" Quickly, \"please\".");
    let edited = model
        .check(&format!("{label}: last message grew"), &msgs)
        .await;
    assert!(edited.contains("Quickly"), "{label}");

    let mut reply = Msg::assistant(
        "Friday",
        vec![ContentBlock::ToolCall(ToolCallBlock::new(
            "call_z", "Bash", "{}",
        ))],
    )
    .unwrap();
    msgs.push(reply.clone());
    model
        .check(&format!("{label}: a pending call"), &msgs)
        .await;
    reply
        .content
        .push(ContentBlock::ToolResult(ToolResultBlock::new(
            "call_z",
            "Bash",
            "done",
            ToolResultState::Success,
        )));
    *msgs.last_mut().unwrap() = reply;
    let answered = model
        .check(&format!("{label}: the call answered"), &msgs)
        .await;
    assert!(answered.contains("done"), "{label}");

    msgs.drain(1..6);
    model
        .check(&format!("{label}: a prefix dropped"), &msgs)
        .await;
}

fn openai(vendor: Vendor, formatter: OpenAiChatFormatter) -> OpenAiChatModel {
    OpenAiChatModel::builder("m")
        .with_vendor(vendor)
        .with_base_url("http://127.0.0.1:9")
        .with_parameter("temperature", 0.5)
        .with_parameter("max_tokens", 100)
        .with_formatter(formatter)
        .build()
        .unwrap()
}

const VENDORS: &[Vendor] = &[
    Vendor::OpenAi,
    Vendor::DeepSeek,
    Vendor::Moonshot,
    Vendor::Xai,
    Vendor::Volcengine,
    Vendor::DashScope,
    Vendor::Vllm,
];

#[tokio::test]
async fn openai_family_bytes_are_the_encoded_body_call_after_call() {
    for &vendor in VENDORS {
        let saved = scratch(&format!("{vendor:?}"));
        let chat = OpenAiChatFormatter::chat(vendor).with_scratch_dir(&saved);
        let label = format!("{vendor:?} chat");
        run_sequence(&label, &Model::OpenAi(openai(vendor, chat))).await;
        let multi = OpenAiChatFormatter::multi_agent(vendor).with_scratch_dir(&saved);
        let label = format!("{vendor:?} multi-agent");
        run_sequence(&label, &Model::OpenAi(openai(vendor, multi))).await;
        let _ = std::fs::remove_dir_all(&saved);
    }
    let streaming_off = OpenAiChatModel::builder("m")
        .with_stream(false)
        .with_message_cache_bytes(0)
        .build()
        .unwrap();
    run_sequence("OpenAI, nothing kept", &Model::OpenAi(streaming_off)).await;
}

#[tokio::test]
async fn anthropic_bytes_are_the_encoded_body_call_after_call() {
    let params = AnthropicParameters::default()
        .with_thinking_budget(2048)
        .with_temperature(1.0);
    let chat = AnthropicChatModel::new("k", "claude")
        .unwrap()
        .with_parameters(params);
    run_sequence("Anthropic chat", &Model::Anthropic(chat.clone())).await;
    let pdf_only = chat.clone().with_chat_formatter(
        AnthropicChatFormatter::new().with_media_types(vec!["application/pdf".to_owned()]),
    );
    run_sequence("Anthropic, PDFs only", &Model::Anthropic(pdf_only)).await;
    let small = chat.clone().with_message_cache_bytes(2048);
    run_sequence("Anthropic, small cache", &Model::Anthropic(small)).await;
    let multi = chat.with_formatter(Arc::new(AnthropicMultiAgentFormatter::new()));
    run_sequence("Anthropic multi-agent", &Model::Anthropic(multi)).await;
}

#[tokio::test]
async fn ollama_bytes_are_the_encoded_body_call_after_call() {
    let chat = OllamaChatModel::new("llama").unwrap();
    run_sequence("Ollama chat", &Model::Ollama(chat.clone())).await;
    let multi = chat.with_formatter(Arc::new(OllamaMultiAgentFormatter::new()));
    run_sequence("Ollama multi-agent", &Model::Ollama(multi)).await;
}

/// A user message showing the image at `url`.
fn linked(url: &str) -> Msg {
    let image = DataBlock::new(DataSource::Url(UrlSource::new(url, "image/png").unwrap()));
    Msg::user(
        "user",
        vec![
            ContentBlock::Text(TextBlock::new("What is this?")),
            ContentBlock::Data(image),
        ],
    )
    .unwrap()
}

#[tokio::test]
async fn media_behind_a_link_is_read_again_on_every_call() {
    let dir = scratch("linked");
    let file = dir.join("img.png");
    std::fs::write(&file, b"first").unwrap();
    let msgs = vec![linked(&format!("file://{}", file.display()))];
    let models = [
        Model::OpenAi(OpenAiChatModel::builder("m").build().unwrap()),
        Model::Anthropic(AnthropicChatModel::new("k", "claude").unwrap()),
        Model::Ollama(OllamaChatModel::new("llama").unwrap()),
    ];
    for (i, model) in models.iter().enumerate() {
        std::fs::write(&file, b"first").unwrap();
        let before = model.check(&format!("model {i}, first"), &msgs).await;
        // Same length, other bytes: a length print alone would not see it.
        std::fs::write(&file, b"other").unwrap();
        let after = model
            .check(&format!("model {i}, file changed"), &msgs)
            .await;
        assert!(before.contains("Zmlyc3Q="), "{before}");
        assert!(after.contains("b3RoZXI="), "{after}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn an_edit_that_keeps_every_length_is_not_seen_while_the_message_is_kept() {
    // The documented limit of the cache's print: a kept message is reused
    // until its shape changes; switching the cache off sends the edit.
    let mut msgs = vec![Msg::from_text("user", Role::User, "colour: red")];
    let kept = Model::Anthropic(AnthropicChatModel::new("k", "claude").unwrap());
    let off = Model::Anthropic(
        AnthropicChatModel::new("k", "claude")
            .unwrap()
            .with_message_cache_bytes(0),
    );
    kept.check("first", &msgs).await;
    off.check("first", &msgs).await;
    *text_mut(&mut msgs[0]) = "colour: tan".to_owned();
    assert!(kept.both(&msgs).await.0.contains("red"));
    assert!(off.check("edited", &msgs).await.contains("tan"));
    // A new length is seen.
    *text_mut(&mut msgs[0]) = "colour: blue".to_owned();
    assert!(kept.check("longer", &msgs).await.contains("blue"));
}

#[tokio::test]
async fn concurrent_calls_on_one_shared_model_each_send_their_own_conversation() {
    let model = Arc::new(
        OpenAiChatModel::builder("m")
            .with_message_cache_bytes(16 * 1024)
            .build()
            .unwrap(),
    );
    let mut tasks = Vec::new();
    for session in 0..6 {
        let model = Arc::clone(&model);
        tasks.push(tokio::spawn(async move {
            let mut msgs = Vec::new();
            for round in 0..15 {
                msgs.push(Msg::from_text(
                    "user",
                    Role::User,
                    format!("session {session} round {round} {}", "x".repeat(round * 40)),
                ));
                let request = ChatRequest {
                    messages: &msgs,
                    tools: &[],
                    tool_choice: None,
                };
                let sent = model.request_bytes(request).await.unwrap();
                let body = model
                    .request_body(ChatRequest {
                        messages: &msgs,
                        tools: &[],
                        tool_choice: None,
                    })
                    .await
                    .unwrap();
                assert_eq!(sent, serde_json::to_vec(&body).unwrap());
                tokio::task::yield_now().await;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}
