//! The Anthropic chat model against a fake Messages server, through the
//! real HTTP client: streaming, usage, tool calls, errors, cancellation and
//! the request it sends.

use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_http::{HttpClient, RetryPolicy};
use oxiscope_message::{
    ContentBlock, FinishedReason, Msg, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock,
    ToolResultState,
};
use oxiscope_model::{
    AnthropicCredential, ChatModel, ChatRequest, ChatResponse, Credential, ModelError, ToolChoice,
    ToolSchema,
};
use oxiscope_providers::anthropic::{AnthropicChatModel, AnthropicParameters, ThinkingMode};
use oxiscope_test_support::anthropic::{AnthropicStream, Usage, error_response, message_response};
use oxiscope_test_support::chat::{conversation, drain, request};
use oxiscope_test_support::{BodyEnd, FakeServer};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const MODEL: &str = "claude-test";

fn client() -> HttpClient {
    let retry = RetryPolicy::default()
        .with_max_attempts(3)
        .with_base_delay(Duration::from_millis(1))
        .with_max_delay(Duration::from_millis(5));
    HttpClient::builder().with_retry(retry).build().unwrap()
}

fn model(server: &FakeServer) -> AnthropicChatModel {
    AnthropicChatModel::with_client(client(), "sk-ant-test", MODEL).with_base_url(server.base_url())
}

/// The error of a call that must fail before streaming.
async fn call_error(model: &AnthropicChatModel, msgs: &[Msg]) -> ModelError {
    match model.call(request(msgs), CancellationToken::new()).await {
        Ok(_) => panic!("the call should fail"),
        Err(e) => e,
    }
}

async fn body_with(
    model: &AnthropicChatModel,
    tools: &[ToolSchema],
    choice: ToolChoice,
) -> serde_json::Value {
    let msgs = conversation();
    let request = ChatRequest {
        messages: &msgs,
        tools,
        tool_choice: Some(&choice),
    };
    model.request_body(request).await.unwrap()
}

async fn run(server: &FakeServer, msgs: &[Msg]) -> (Vec<ChatResponse>, Option<ModelError>) {
    let stream = model(server)
        .call(request(msgs), CancellationToken::new())
        .await
        .unwrap();
    drain(stream).await
}

fn texts(chunk: &ChatResponse) -> Vec<String> {
    chunk
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(TextBlock { text, .. }) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn streamed_text_arrives_as_deltas_then_one_complete_final_chunk_past_pings_and_new_events() {
    let server = FakeServer::start().await.unwrap();
    let reply = AnthropicStream::new(MODEL)
        .message_start(Usage::input(12))
        .ping()
        .text(0, &["Hel", "lo", " there"])
        .event("future_event", &json!({"type": "future_event", "x": 1}))
        .message_delta("end_turn", 3)
        .message_stop();
    server.push(reply.into_response());
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    let deltas: Vec<Vec<String>> = chunks[..chunks.len() - 1].iter().map(texts).collect();
    assert_eq!(deltas, vec![vec!["Hel"], vec!["lo"], vec![" there"]]);
    let last = chunks.last().unwrap();
    assert!(last.is_last);
    assert!(chunks[..chunks.len() - 1].iter().all(|c| !c.is_last));
    assert_eq!(last.finished_reason, FinishedReason::Completed);
    assert_eq!(texts(last), vec!["Hello there"]);
}

#[tokio::test]
async fn events_split_at_awkward_byte_boundaries_decode_the_same() {
    let server = FakeServer::start().await.unwrap();
    let body = AnthropicStream::new(MODEL)
        .message_start(Usage::input(2))
        .text(0, &["h\u{e9}llo ", "w\u{f6}rld"])
        .tool_use_start(1, "toolu_x", "Read")
        .input_json(1, "{\"a\": 1}")
        .message_delta("tool_use", 6)
        .message_stop()
        .body();
    let response = oxiscope_test_support::ScriptedResponse::new(200)
        .with_header("content-type", "text/event-stream")
        .with_body_in_chunks(body, 7);
    server.push(response);
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    let last = chunks.last().unwrap();
    assert_eq!(texts(last), vec!["h\u{e9}llo w\u{f6}rld"]);
    let ContentBlock::ToolCall(call) = &last.content[1] else {
        panic!("{:?}", last.content)
    };
    assert_eq!(call.input, "{\"a\": 1}");
    assert_eq!(last.usage.as_ref().map(|u| u.output_tokens), Some(6));
}

#[tokio::test]
async fn thinking_keeps_its_signature() {
    let server = FakeServer::start().await.unwrap();
    let reply = AnthropicStream::new(MODEL)
        .message_start(Usage::input(5))
        .thinking(0, &["Let me ", "think."], "sig-abc==")
        .text(1, &["Done."])
        .message_delta("end_turn", 9)
        .message_stop();
    server.push(reply.into_response());
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    let last = chunks.last().unwrap();
    let ContentBlock::Thinking(ThinkingBlock {
        thinking, extra, ..
    }) = &last.content[0]
    else {
        panic!("thinking first: {:?}", last.content)
    };
    assert_eq!(thinking, "Let me think.");
    assert_eq!(extra.get("signature"), Some(&json!("sig-abc==")));
    assert_eq!(texts(last), vec!["Done."]);
}

#[tokio::test]
async fn parallel_tool_use_blocks_with_interleaved_fragments_accumulate_by_block_index() {
    let server = FakeServer::start().await.unwrap();
    let reply = AnthropicStream::new(MODEL)
        .message_start(Usage::input(20))
        .text(0, &["Checking both."])
        .tool_use_start(1, "toolu_a", "Read")
        .tool_use_start(2, "toolu_b", "Glob")
        .input_json(1, "{\"file_path\":")
        .input_json(2, "{\"pattern\":")
        .input_json(1, " \"src/lib.rs\"}")
        .input_json(2, " \"*.rs\"}")
        .block_stop(1)
        .block_stop(2)
        .message_delta("tool_use", 30)
        .message_stop();
    server.push(reply.into_response());
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    let calls: Vec<(String, String, String)> = chunks
        .last()
        .unwrap()
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolCall(ToolCallBlock {
                id, name, input, ..
            }) => Some((id.to_string(), name.clone(), input.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            (
                "toolu_a".into(),
                "Read".into(),
                "{\"file_path\": \"src/lib.rs\"}".into()
            ),
            (
                "toolu_b".into(),
                "Glob".into(),
                "{\"pattern\": \"*.rs\"}".into()
            ),
        ]
    );
}

#[tokio::test]
async fn usage_combines_message_start_and_message_delta_with_cache_tokens() {
    let server = FakeServer::start().await.unwrap();
    let reply = AnthropicStream::new(MODEL)
        .message_start(Usage::input(40).with_cache(1000, 200))
        .text(0, &["ok"])
        .message_delta("end_turn", 17)
        .message_stop();
    server.push(reply.into_response());
    let (chunks, _) = run(&server, &conversation()).await;
    let usage = chunks.last().unwrap().usage.clone().unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_input_tokens,
            usage.cache_creation_input_tokens
        ),
        (40, 17, 1000, 200)
    );
}

#[tokio::test]
async fn a_429_is_retried_and_the_retry_succeeds() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        error_response(429, "rate_limit_error", "slow down", "req_429")
            .with_header("retry-after-ms", "1"),
    );
    server.push(AnthropicStream::text_reply(MODEL, &["fine"], 1, 1).into_response());
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    assert_eq!(texts(chunks.last().unwrap()), vec!["fine"]);
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_429_without_retries_keeps_the_delay_the_server_asked_for() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        error_response(429, "rate_limit_error", "slow down", "req_429")
            .with_header("retry-after", "7"),
    );
    let http = HttpClient::builder()
        .with_retry(RetryPolicy::none())
        .build()
        .unwrap();
    let model = AnthropicChatModel::with_client(http, "k", MODEL).with_base_url(server.base_url());
    let msgs = conversation();
    let err = call_error(&model, &msgs).await;
    let ModelError::Provider {
        status,
        retry_after,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((*status, *retry_after), (429, Some(Duration::from_secs(7))));
    assert!(err.is_retryable());
}

#[tokio::test]
async fn a_400_is_a_typed_provider_error_with_code_message_and_request_id() {
    let server = FakeServer::start().await.unwrap();
    server.push(error_response(
        400,
        "invalid_request_error",
        "max_tokens: field required",
        "req_011",
    ));
    let msgs = conversation();
    let err = call_error(&model(&server), &msgs).await;
    assert_eq!(
        err,
        ModelError::Provider {
            provider: "anthropic".into(),
            status: 400,
            code: Some("invalid_request_error".into()),
            message: "max_tokens: field required".into(),
            request_id: Some("req_011".into()),
            retry_after: None,
        }
    );
    assert_eq!(server.request_count(), 1, "a 400 is not retried");
}

#[tokio::test]
async fn a_stream_that_ends_before_message_stop_yields_an_error_item() {
    let server = FakeServer::start().await.unwrap();
    let cut = AnthropicStream::new(MODEL)
        .message_start(Usage::input(3))
        .text(0, &["half"]);
    server.push(cut.clone().into_response());
    server.push(cut.into_response().with_end(BodyEnd::Abort));
    for _ in 0..2 {
        let (chunks, error) = run(&server, &conversation()).await;
        assert_eq!(texts(&chunks[0]), vec!["half"]);
        assert!(chunks.iter().all(|c| !c.is_last), "no final chunk");
        assert!(
            matches!(error, Some(ModelError::Stream { .. })),
            "{error:?}"
        );
    }
}

#[tokio::test]
async fn a_malformed_event_yields_an_error_item() {
    let server = FakeServer::start().await.unwrap();
    let reply = AnthropicStream::new(MODEL)
        .message_start(Usage::input(3))
        .raw(
            "content_block_delta",
            "{\"type\": \"content_block_delta\", \"index\": ",
        )
        .message_stop();
    server.push(reply.into_response());
    let (chunks, error) = run(&server, &conversation()).await;
    assert!(chunks.is_empty());
    let Some(ModelError::Stream { message }) = error else {
        panic!("{error:?}")
    };
    assert!(message.contains("content_block_delta"), "{message}");
}

#[tokio::test]
async fn fragments_for_a_block_that_is_not_a_tool_call_are_an_error_item() {
    let server = FakeServer::start().await.unwrap();
    let reply = AnthropicStream::new(MODEL)
        .message_start(Usage::input(3))
        .input_json(4, "{}")
        .message_stop();
    server.push(reply.into_response());
    let (_, error) = run(&server, &conversation()).await;
    assert!(
        matches!(error, Some(ModelError::Stream { .. })),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_overloaded_error_event_yields_a_retryable_provider_error_item() {
    let server = FakeServer::start().await.unwrap();
    let reply = AnthropicStream::new(MODEL)
        .message_start(Usage::input(3))
        .text(0, &["par"])
        .error("overloaded_error", "Overloaded");
    server.push(reply.into_response());
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(chunks.len(), 1);
    let error = error.unwrap();
    let ModelError::Provider {
        status,
        code,
        message,
        ..
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(
        (*status, code.as_deref(), message.as_str()),
        (529, Some("overloaded_error"), "Overloaded")
    );
    assert!(error.is_retryable());
}

#[tokio::test]
async fn cancelling_ends_the_stream_with_what_arrived_marked_interrupted() {
    let server = FakeServer::start().await.unwrap();
    let stalled = AnthropicStream::new(MODEL)
        .message_start(Usage::input(3))
        .block_start(0, &json!({"type": "text", "text": ""}))
        .block_delta(0, &json!({"type": "text_delta", "text": "partial"}))
        .into_response()
        .with_end(BodyEnd::Stall);
    server.push(stalled);
    let cancel = CancellationToken::new();
    let msgs = conversation();
    let mut stream = model(&server)
        .call(request(&msgs), cancel.clone())
        .await
        .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(texts(&first), vec!["partial"]);
    cancel.cancel();
    let last = stream.next().await.unwrap().unwrap();
    assert!(last.is_last);
    assert_eq!(last.finished_reason, FinishedReason::Interrupted);
    assert_eq!(texts(&last), vec!["partial"]);
    assert_eq!(last.usage.map(|u| u.input_tokens), Some(3));
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn the_request_carries_system_messages_tools_choice_max_tokens_and_thinking() {
    let server = FakeServer::start().await.unwrap();
    server.push(AnthropicStream::text_reply(MODEL, &["ok"], 1, 1).into_response());
    let call = ToolCallBlock::new("toolu_1", "get_weather", "{\"city\": \"Paris\"}");
    let result = ToolResultBlock::new("toolu_1", "get_weather", "sunny", ToolResultState::Success);
    let msgs = vec![
        Msg::system("system", "You are Friday.").unwrap(),
        Msg::user("user", "Weather?").unwrap(),
        Msg::assistant("Friday", vec![call.into(), result.into()]).unwrap(),
    ];
    let tools = [ToolSchema::function(
        "get_weather",
        "Weather of a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    )];
    let choice = ToolChoice::required();
    let params = AnthropicParameters::default()
        .with_max_tokens(2048)
        .with_thinking_budget(1500)
        .with_reasoning_effort("high");
    let model = model(&server).with_parameters(params);
    let request = ChatRequest {
        messages: &msgs,
        tools: &tools,
        tool_choice: Some(&choice),
    };
    let (_, error) = drain(model.call(request, CancellationToken::new()).await.unwrap()).await;
    assert_eq!(error, None);
    let sent = &server.requests()[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        sent.body_json().unwrap(),
        json!({
            "model": MODEL,
            "max_tokens": 2048,
            "system": [{"type": "text", "text": "You are Friday."}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}]}
                ]},
            ],
            "tools": [{
                "name": "get_weather",
                "description": "Weather of a city.",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            }],
            "tool_choice": {"type": "any"},
            "thinking": {"type": "enabled", "budget_tokens": 1500},
            "output_config": {"effort": "high"},
            "stream": true,
        })
    );
}

#[tokio::test]
async fn tool_choice_none_and_a_named_tool_and_adaptive_thinking_are_spelled_as_the_api_wants() {
    let tools = [
        ToolSchema::function("a", "", json!({"type": "object"})),
        ToolSchema::function("b", "", json!({"type": "object"})),
    ];
    let model = AnthropicChatModel::with_client(client(), "k", MODEL)
        .with_parameters(AnthropicParameters::default().with_thinking_mode(ThinkingMode::Adaptive));
    let none = body_with(&model, &tools, ToolChoice::none()).await;
    assert_eq!(none["tool_choice"], json!({"type": "none"}));
    assert_eq!(
        none["tools"].as_array().unwrap().len(),
        2,
        "tools stay for the history"
    );
    assert_eq!(none["thinking"], json!({"type": "adaptive"}));
    assert_eq!(
        none["max_tokens"], 4096,
        "the default without parameters or card"
    );
    let named = body_with(&model, &tools, ToolChoice::tool("b")).await;
    assert_eq!(named["tool_choice"], json!({"type": "tool", "name": "b"}));
    let mut restricted = ToolChoice::auto();
    restricted.tools = Some(vec!["a".into()]);
    let restricted = body_with(&model, &tools, restricted).await;
    assert_eq!(restricted["tools"][0]["name"], "a");
    assert_eq!(restricted["tools"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_whole_reply_is_parsed_when_streaming_is_off() {
    let server = FakeServer::start().await.unwrap();
    let content = json!([
        {"type": "thinking", "thinking": "hmm", "signature": "sig=="},
        {"type": "text", "text": "Calling."},
        {"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {"file_path": "a.rs"}},
    ]);
    server.push(message_response(
        MODEL,
        &content,
        Usage::input(8).with_cache(2, 0),
        5,
    ));
    let model = model(&server).with_stream(false);
    let msgs = conversation();
    let (chunks, error) = drain(
        model
            .call(request(&msgs), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(error, None);
    let last = chunks.last().unwrap();
    assert_eq!(last.content.len(), 3);
    let ContentBlock::ToolCall(call) = &last.content[2] else {
        panic!("{:?}", last.content)
    };
    assert_eq!(
        (call.id.as_str(), call.input.as_str()),
        ("toolu_9", "{\"file_path\":\"a.rs\"}")
    );
    let usage = last.usage.clone().unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_input_tokens
        ),
        (8, 5, 2)
    );
    assert_eq!(server.requests()[0].body_json().unwrap()["stream"], false);
}

#[tokio::test]
async fn from_credential_takes_the_key_the_base_url_and_the_cards_output_size() {
    let server = FakeServer::start().await.unwrap();
    server.push(AnthropicStream::text_reply(MODEL, &["ok"], 1, 1).into_response());
    let credential = Credential::from(
        AnthropicCredential::new("sk-from-credential").with_base_url(server.base_url()),
    );
    let card = credential
        .list_models()
        .unwrap()
        .into_iter()
        .find(|c| c.model_class == "anthropic_chat")
        .unwrap();
    let model = AnthropicChatModel::from_credential(&credential, card.name.clone()).unwrap();
    let msgs = conversation();
    drain(
        model
            .call(request(&msgs), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await;
    let sent = &server.requests()[0];
    assert_eq!(sent.header("x-api-key"), Some("sk-from-credential"));
    assert_eq!(
        sent.body_json().unwrap()["max_tokens"],
        card.output_size.get()
    );

    let other = Credential::from(oxiscope_model::OllamaCredential::new());
    assert!(matches!(
        AnthropicChatModel::from_credential(&other, "x"),
        Err(ModelError::InvalidRequest { .. })
    ));
}
