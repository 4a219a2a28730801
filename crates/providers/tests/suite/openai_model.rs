//! `OpenAiChatModel` against a fake OpenAI server, through the real HTTP
//! client: streaming, tool calls, usage, reasoning, retries, broken streams,
//! error statuses, the outbound request and cancellation.

use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_http::{HttpClient, RetryPolicy};
use oxiscope_message::{ContentBlock, FinishedReason, Msg};
use oxiscope_model::{
    ChatModel, ChatRequest, ChatResponse, ChatStream, Credential, DeepSeekCredential, ModelError,
    ToolChoice, ToolSchema,
};
use oxiscope_providers::openai_chat::{
    OpenAiChatFormatter, OpenAiChatModel, OpenAiChatModelBuilder, Vendor,
};
use oxiscope_test_support::{
    FakeServer, OPENAI_REQUEST_ID, OpenAiScript, openai_invalid_api_key, openai_rate_limited,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn http() -> HttpClient {
    let retry = RetryPolicy::default()
        .with_base_delay(Duration::from_millis(10))
        .with_max_delay(Duration::from_millis(50));
    HttpClient::builder().with_retry(retry).build().unwrap()
}

fn builder(server: &FakeServer) -> OpenAiChatModelBuilder {
    OpenAiChatModel::builder("gpt-4.1-mini")
        .with_base_url(server.url("/v1"))
        .with_api_key("sk-test")
        .with_http_client(http())
}

fn conversation() -> Vec<Msg> {
    vec![
        Msg::system("system", "You are terse.").unwrap(),
        Msg::user("user", "Weather in Paris and Rome?").unwrap(),
    ]
}

fn weather_tool() -> ToolSchema {
    ToolSchema::function(
        "get_weather",
        "Current weather of a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )
}

async fn start(model: &OpenAiChatModel, msgs: &[Msg]) -> Result<ChatStream, ModelError> {
    let request = ChatRequest {
        messages: msgs,
        tools: &[],
        tool_choice: None,
    };
    model.call(request, CancellationToken::new()).await
}

async fn collect(stream: ChatStream) -> Vec<Result<ChatResponse, ModelError>> {
    stream.collect().await
}

/// The chunks of a stream that must succeed, the last one split off.
async fn complete(stream: ChatStream) -> (Vec<ChatResponse>, ChatResponse) {
    let mut chunks: Vec<ChatResponse> = collect(stream)
        .await
        .into_iter()
        .map(|c| c.unwrap())
        .collect();
    let last = chunks.pop().unwrap();
    assert!(last.is_last);
    assert!(chunks.iter().all(|c| !c.is_last));
    (chunks, last)
}

fn text_of(block: &ContentBlock) -> &str {
    match block {
        ContentBlock::Text(t) => &t.text,
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test]
async fn streamed_text_arrives_as_deltas_then_one_complete_last_chunk() {
    let server = FakeServer::start().await.unwrap();
    let script = OpenAiScript::new()
        .text("Sunny ")
        .text("in Paris, ")
        .text("rainy in Rome.")
        .finish("stop");
    // Cut the body every 7 bytes: events and UTF-8 split across reads.
    server.push(script.response().with_body_in_chunks(script.body(), 7));
    let model = builder(&server).build().unwrap();

    let (deltas, last) = complete(start(&model, &conversation()).await.unwrap()).await;

    let pieces: Vec<&str> = deltas.iter().map(|c| text_of(&c.content[0])).collect();
    assert_eq!(pieces, ["Sunny ", "in Paris, ", "rainy in Rome."]);
    assert_eq!(last.content.len(), 1);
    assert_eq!(text_of(&last.content[0]), "Sunny in Paris, rainy in Rome.");
    assert_eq!(last.finished_reason, FinishedReason::Completed);
    assert_eq!(last.usage, None);
}

#[tokio::test]
async fn interleaved_parallel_tool_call_fragments_build_two_calls() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        OpenAiScript::new()
            .tool_call(0, "call_paris", "get_weather")
            .tool_call(1, "call_rome", "get_weather")
            .tool_args(0, "{\"city\": ")
            .tool_args(1, "{\"city\"")
            .tool_args(1, ": \"Rome\"}")
            .tool_args(0, "\"Paris\"}")
            .finish("tool_calls")
            .response(),
    );
    let model = builder(&server).build().unwrap();

    let (_, last) = complete(start(&model, &conversation()).await.unwrap()).await;

    let calls: Vec<(String, String, String)> = last
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::ToolCall(c) => (c.id.to_string(), c.name.clone(), c.input.clone()),
            other => panic!("not a tool call: {other:?}"),
        })
        .collect();
    assert_eq!(
        calls,
        [
            (
                "call_paris".to_owned(),
                "get_weather".to_owned(),
                "{\"city\": \"Paris\"}".to_owned()
            ),
            (
                "call_rome".to_owned(),
                "get_weather".to_owned(),
                "{\"city\": \"Rome\"}".to_owned()
            ),
        ]
    );
}

#[tokio::test]
async fn usage_sent_only_in_the_last_chunk_lands_on_the_final_response() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        OpenAiScript::new()
            .text("ok")
            .finish("stop")
            .usage(120, 3, 64)
            .response(),
    );
    let model = builder(&server).build().unwrap();

    let (deltas, last) = complete(start(&model, &conversation()).await.unwrap()).await;

    assert!(deltas.iter().all(|c| c.usage.is_none()));
    let usage = last.usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_input_tokens
        ),
        (120, 3, 64)
    );
}

#[tokio::test]
async fn reasoning_content_becomes_a_thinking_block_before_the_text() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        OpenAiScript::new()
            .model("deepseek-reasoner")
            .reasoning("The user wants ")
            .reasoning("two cities.")
            .text("Both sunny.")
            .finish("stop")
            .response(),
    );
    let model = builder(&server)
        .with_vendor(Vendor::DeepSeek)
        .build()
        .unwrap();

    let (_, last) = complete(start(&model, &conversation()).await.unwrap()).await;

    let ContentBlock::Thinking(thinking) = &last.content[0] else {
        panic!("expected thinking first: {:?}", last.content);
    };
    assert_eq!(thinking.thinking, "The user wants two cities.");
    assert_eq!(text_of(&last.content[1]), "Both sunny.");
}

#[tokio::test]
async fn a_rate_limited_call_is_retried_and_then_succeeds() {
    let server = FakeServer::start().await.unwrap();
    server.push(openai_rate_limited(0));
    server.push(
        OpenAiScript::new()
            .text("after retry")
            .finish("stop")
            .response(),
    );
    let model = builder(&server).build().unwrap();

    let (_, last) = complete(start(&model, &conversation()).await.unwrap()).await;

    assert_eq!(text_of(&last.content[0]), "after retry");
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_stream_cut_before_done_ends_with_a_stream_error() {
    let server = FakeServer::start().await.unwrap();
    let script = OpenAiScript::new()
        .text("partial ")
        .text("answer")
        .finish("stop");
    // The role chunk and the first text chunk, then the connection drops.
    server.push(script.response_cut_after(2));
    let model = builder(&server).build().unwrap();

    let items = collect(start(&model, &conversation()).await.unwrap()).await;

    assert_eq!(text_of(&items[0].as_ref().unwrap().content[0]), "partial ");
    assert!(
        matches!(items.last(), Some(Err(ModelError::Stream { .. }))),
        "{items:?}"
    );
    assert!(
        items
            .iter()
            .all(|i| i.as_ref().map_or(true, |c| !c.is_last))
    );
}

#[tokio::test]
async fn a_clean_end_without_done_or_finish_reason_is_an_error() {
    let server = FakeServer::start().await.unwrap();
    server.push(OpenAiScript::new().text("half").without_done().response());
    let model = builder(&server).build().unwrap();

    let items = collect(start(&model, &conversation()).await.unwrap()).await;

    let Some(Err(ModelError::Stream { message })) = items.last() else {
        panic!("expected a stream error: {items:?}");
    };
    assert!(message.contains("[DONE]"), "{message}");
}

#[tokio::test]
async fn a_finish_reason_without_done_still_completes() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        OpenAiScript::new()
            .text("fine")
            .finish("stop")
            .without_done()
            .response(),
    );
    let model = builder(&server).build().unwrap();

    let (_, last) = complete(start(&model, &conversation()).await.unwrap()).await;

    assert_eq!(text_of(&last.content[0]), "fine");
}

#[tokio::test]
async fn a_malformed_chunk_ends_with_a_stream_error() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        OpenAiScript::new()
            .text("ok so far")
            .raw("{\"choices\": [{\"delta\": {\"content\": 42")
            .text("never seen")
            .finish("stop")
            .response(),
    );
    let model = builder(&server).build().unwrap();

    let items = collect(start(&model, &conversation()).await.unwrap()).await;

    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(text_of(&items[0].as_ref().unwrap().content[0]), "ok so far");
    let Err(ModelError::Stream { message }) = &items[1] else {
        panic!("expected a stream error: {items:?}");
    };
    assert!(message.contains("malformed chunk"), "{message}");
}

#[tokio::test]
async fn an_error_chunk_inside_a_200_stream_is_an_error_item() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        OpenAiScript::new()
            .raw(r#"{"error": {"message": "The server had an error", "type": "server_error"}}"#)
            .response(),
    );
    let model = builder(&server).build().unwrap();

    let items = collect(start(&model, &conversation()).await.unwrap()).await;

    let Some(Err(ModelError::Stream { message })) = items.last() else {
        panic!("expected a stream error: {items:?}");
    };
    assert!(message.contains("The server had an error"), "{message}");
}

#[tokio::test]
async fn a_wrong_api_key_is_a_typed_provider_error() {
    let server = FakeServer::start().await.unwrap();
    server.push(openai_invalid_api_key());
    let model = builder(&server).build().unwrap();

    let err = start(&model, &conversation()).await.err().unwrap();

    let ModelError::Provider {
        provider,
        status,
        code,
        message,
        request_id,
        retry_after,
    } = &err
    else {
        panic!("expected a provider error: {err:?}");
    };
    assert_eq!(provider, "openai");
    assert_eq!(*status, 401);
    assert_eq!(code.as_deref(), Some("invalid_api_key"));
    assert!(
        message.starts_with("Incorrect API key provided"),
        "{message}"
    );
    assert_eq!(request_id.as_deref(), Some(OPENAI_REQUEST_ID));
    assert_eq!(*retry_after, None);
    assert!(!err.is_retryable());
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn exhausted_retries_report_the_rate_limit_with_its_delay() {
    let server = FakeServer::start().await.unwrap();
    for _ in 0..2 {
        server.push(openai_rate_limited(0));
    }
    let model = builder(&server)
        .with_http_client(http().with_retry_policy(RetryPolicy::none().with_max_attempts(2)))
        .build()
        .unwrap();

    let err = start(&model, &conversation()).await.err().unwrap();

    let ModelError::Provider {
        status,
        code,
        retry_after,
        ..
    } = &err
    else {
        panic!("expected a provider error: {err:?}");
    };
    assert_eq!(*status, 429);
    assert_eq!(code.as_deref(), Some("rate_limit_exceeded"));
    assert_eq!(*retry_after, Some(Duration::ZERO));
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn the_outbound_request_carries_model_messages_tools_and_stream_options() {
    let server = FakeServer::start().await.unwrap();
    server.push(OpenAiScript::new().text("ok").finish("stop").response());
    let model = builder(&server)
        .with_organization("org-42")
        .with_parameter("temperature", 0.2)
        .with_parameter("max_tokens", 256)
        .with_parameter("stream", false)
        .build()
        .unwrap();
    let tools = [weather_tool()];
    let choice = ToolChoice::tool("get_weather");
    let request = ChatRequest {
        messages: &conversation(),
        tools: &tools,
        tool_choice: Some(&choice),
    };

    let stream = model.call(request, CancellationToken::new()).await.unwrap();
    complete(stream).await;

    let requests = server.requests();
    let sent = &requests[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent.header("openai-organization"), Some("org-42"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    let expected = json!({
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "name": "system",
             "content": [{"type": "text", "text": "You are terse."}]},
            {"role": "user", "name": "user",
             "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
        ],
        "temperature": 0.2,
        "max_tokens": 256,
        "stream": true,
        "stream_options": {"include_usage": true},
        "tools": [{"type": "function", "function": {
            "name": "get_weather",
            "description": "Current weather of a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]},
        }}],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
    });
    let body = sent.body_json().unwrap();
    assert_eq!(body, expected);
    // Key order as documented: model and messages first.
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(&keys[..2], ["model", "messages"]);
}

#[tokio::test]
async fn tool_choice_modes_use_the_api_spellings() {
    let server = FakeServer::start().await.unwrap();
    let model = builder(&server).build().unwrap();
    let tools = [weather_tool()];
    let cases = [
        (ToolChoice::auto(), json!("auto")),
        (ToolChoice::none(), json!("none")),
        (ToolChoice::required(), json!("required")),
    ];
    for (choice, _) in &cases {
        server.push(OpenAiScript::new().text("ok").finish("stop").response());
        let request = ChatRequest {
            messages: &conversation(),
            tools: &tools,
            tool_choice: Some(choice),
        };
        complete(model.call(request, CancellationToken::new()).await.unwrap()).await;
    }
    let sent: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body_json().unwrap()["tool_choice"].clone())
        .collect();
    let expected: Vec<Value> = cases.into_iter().map(|(_, v)| v).collect();
    assert_eq!(sent, expected);
}

#[tokio::test]
async fn a_non_streaming_call_decodes_the_whole_response() {
    let server = FakeServer::start().await.unwrap();
    let script = OpenAiScript::new()
        .reasoning("Check both.")
        .text("Calling.")
        .tool_call(0, "call_1", "get_weather")
        .tool_args(0, "{\"city\": \"Paris\"}")
        .finish("tool_calls")
        .usage(50, 9, 0);
    server.push(script.completion());
    let model = builder(&server).with_stream(false).build().unwrap();

    let (_, last) = complete(start(&model, &conversation()).await.unwrap()).await;

    let body = server.requests()[0].body_json().unwrap();
    assert_eq!(body.get("stream"), None);
    assert_eq!(body.get("stream_options"), None);
    assert_eq!(last.content.len(), 3);
    assert!(matches!(&last.content[0], ContentBlock::Thinking(t) if t.thinking == "Check both."));
    assert_eq!(text_of(&last.content[1]), "Calling.");
    let ContentBlock::ToolCall(call) = &last.content[2] else {
        panic!("expected a tool call: {:?}", last.content);
    };
    assert_eq!(
        (call.id.as_str(), call.input.as_str()),
        ("call_1", "{\"city\": \"Paris\"}")
    );
    assert_eq!(last.usage.map(|u| u.output_tokens), Some(9));
}

#[tokio::test]
async fn cancelling_mid_stream_yields_the_final_chunk_marked_interrupted() {
    let server = FakeServer::start().await.unwrap();
    // The role chunk and the first words come at once; the rest would take
    // far longer than the test.
    let script = OpenAiScript::new()
        .text("Partial ")
        .text("answer")
        .text(" never sent")
        .finish("stop");
    server.push(script.response_paced(3, Duration::from_secs(600)));
    let model = builder(&server).build().unwrap();
    let cancel = CancellationToken::new();
    let msgs = conversation();
    let request = ChatRequest {
        messages: &msgs,
        tools: &[],
        tool_choice: None,
    };
    let mut stream = model.call(request, cancel.clone()).await.unwrap();

    let first = stream.next().await.unwrap().unwrap();
    let second = stream.next().await.unwrap().unwrap();
    assert_eq!(
        (text_of(&first.content[0]), text_of(&second.content[0])),
        ("Partial ", "answer")
    );
    cancel.cancel();
    let last = stream.next().await.unwrap().unwrap();

    assert!(last.is_last);
    assert_eq!(last.finished_reason, FinishedReason::Interrupted);
    assert_eq!(text_of(&last.content[0]), "Partial answer");
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn credentials_choose_the_vendor_and_its_endpoint() {
    let deepseek = Credential::from(DeepSeekCredential::new("sk-ds"));
    let model = OpenAiChatModel::from_credential(&deepseek, "deepseek-chat")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(model.vendor(), Vendor::DeepSeek);
    assert_eq!(model.base_url(), "https://api.deepseek.com");

    let anthropic = Credential::from(oxiscope_model::AnthropicCredential::new("sk-ant"));
    let err = OpenAiChatModel::from_credential(&anthropic, "claude").unwrap_err();
    assert!(matches!(err, ModelError::InvalidRequest { .. }), "{err:?}");

    let err = OpenAiChatModel::builder("m")
        .with_vendor(Vendor::Vllm)
        .build()
        .unwrap_err();
    assert!(matches!(err, ModelError::InvalidRequest { .. }), "{err:?}");
}

#[tokio::test]
async fn the_credential_key_reaches_the_server() {
    let server = FakeServer::start().await.unwrap();
    server.push(OpenAiScript::new().text("ok").finish("stop").response());
    let credential =
        Credential::from(DeepSeekCredential::new("sk-ds").with_base_url(server.url("/")));
    let model = OpenAiChatModel::from_credential(&credential, "deepseek-chat")
        .unwrap()
        .with_http_client(http())
        .build()
        .unwrap();

    complete(start(&model, &conversation()).await.unwrap()).await;

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/chat/completions");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-ds"));
    // DeepSeek's formatter: plain string content, no names.
    assert_eq!(
        sent.body_json().unwrap()["messages"][1],
        json!({"role": "user", "content": "Weather in Paris and Rome?"})
    );
}

#[tokio::test]
async fn a_tool_choice_with_a_tool_list_offers_only_those_tools() {
    let server = FakeServer::start().await.unwrap();
    server.push(OpenAiScript::new().text("ok").finish("stop").response());
    let model = builder(&server).build().unwrap();
    let other = ToolSchema::function("get_time", "Current time.", json!({"type": "object"}));
    let tools = [weather_tool(), other];
    let mut choice = ToolChoice::required();
    choice.tools = Some(vec!["get_time".to_owned()]);
    let request = ChatRequest {
        messages: &conversation(),
        tools: &tools,
        tool_choice: Some(&choice),
    };

    complete(model.call(request, CancellationToken::new()).await.unwrap()).await;

    let body = server.requests()[0].body_json().unwrap();
    let names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get_time"]);
    assert_eq!(body["tool_choice"], "required");
}

#[tokio::test]
async fn the_multi_agent_formatter_can_replace_the_chat_one() {
    let server = FakeServer::start().await.unwrap();
    server.push(OpenAiScript::new().text("ok").finish("stop").response());
    let model = builder(&server)
        .with_formatter(OpenAiChatFormatter::multi_agent(Vendor::OpenAi))
        .build()
        .unwrap();

    complete(start(&model, &conversation()).await.unwrap()).await;

    let body = server.requests()[0].body_json().unwrap();
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": [{"type": "text", "text":
                "# Conversation History\nThe content between <history></history> tags contains \
                 your conversation history\n<history>\nuser: Weather in Paris and Rome?\n</history>"}]},
        ])
    );
}
