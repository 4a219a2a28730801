//! The MiniMax chat model against a fake Anthropic-compatible server,
//! through the real HTTP client: what MiniMax streams (thinking with a
//! signature, text, tool calls in fragments, usage), its errors (named
//! `minimax`, `Retry-After` kept, `base_resp` bodies read), cut streams,
//! interruption and the request it sends.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_http::{HttpClient, RetryPolicy};
use oxiscope_message::{
    ContentBlock, FinishedReason, Msg, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock,
    ToolResultState,
};
use oxiscope_model::{
    ChatModel, ChatRequest, ChatResponse, Credential, MiniMaxCredential, ModelError, ToolChoice,
    ToolSchema,
};
use oxiscope_providers::minimax::{
    MiniMaxChatModel, MiniMaxMultiAgentFormatter, MiniMaxParameters,
};
use oxiscope_test_support::anthropic::{AnthropicStream, Usage, error_response, message_response};
use oxiscope_test_support::chat::{conversation, drain, request};
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const MODEL: &str = "MiniMax-M3";

fn client(retries: u32) -> HttpClient {
    let retry = RetryPolicy::default()
        .with_max_attempts(retries)
        .with_base_delay(Duration::from_millis(1))
        .with_max_delay(Duration::from_millis(5));
    HttpClient::builder().with_retry(retry).build().unwrap()
}

fn model(server: &FakeServer) -> MiniMaxChatModel {
    MiniMaxChatModel::with_client(client(3), "mm-test", MODEL).with_base_url(server.base_url())
}

async fn run(server: &FakeServer, msgs: &[Msg]) -> (Vec<ChatResponse>, Option<ModelError>) {
    let stream = model(server)
        .call(request(msgs), CancellationToken::new())
        .await
        .unwrap();
    drain(stream).await
}

async fn call_error(model: &MiniMaxChatModel) -> ModelError {
    let msgs = conversation();
    match model.call(request(&msgs), CancellationToken::new()).await {
        Ok(_) => panic!("the call should fail"),
        Err(e) => e,
    }
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
async fn thinking_text_and_a_split_tool_call_arrive_as_deltas_then_one_complete_final_chunk() {
    let server = FakeServer::start().await.unwrap();
    let reply = AnthropicStream::new(MODEL)
        .message_start(Usage::input(57))
        .ping()
        .thinking(0, &["The user wants ", "the weather."], "c2lnLW1t")
        .text(1, &["Checking", " now."])
        .tool_use_start(2, "call_function_x1", "get_weather")
        .input_json(2, "{\"city\": \"Pa")
        .input_json(2, "ris\"}")
        .block_stop(2)
        .message_delta("tool_use", 41)
        .message_stop();
    server.push(reply.into_response());
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    assert!(chunks[..chunks.len() - 1].iter().all(|c| !c.is_last));
    let deltas: Vec<Vec<String>> = chunks[..chunks.len() - 1]
        .iter()
        .map(texts)
        .filter(|t| !t.is_empty())
        .collect();
    assert_eq!(deltas, vec![vec!["Checking"], vec![" now."]]);
    let last = chunks.last().unwrap();
    assert!(last.is_last);
    assert_eq!(last.finished_reason, FinishedReason::Completed);
    let ContentBlock::Thinking(ThinkingBlock {
        thinking, extra, ..
    }) = &last.content[0]
    else {
        panic!("{:?}", last.content)
    };
    assert_eq!(thinking, "The user wants the weather.");
    assert_eq!(extra.get("signature"), Some(&json!("c2lnLW1t")));
    assert_eq!(texts(last), vec!["Checking now."]);
    let ContentBlock::ToolCall(call) = &last.content[2] else {
        panic!("{:?}", last.content)
    };
    assert_eq!(
        (call.id.as_str(), call.name.as_str(), call.input.as_str()),
        ("call_function_x1", "get_weather", "{\"city\": \"Paris\"}")
    );
    let usage = last.usage.clone().unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (57, 41));
}

#[tokio::test]
async fn events_split_at_awkward_byte_boundaries_decode_the_same() {
    let server = FakeServer::start().await.unwrap();
    let body = AnthropicStream::new(MODEL)
        .message_start(Usage::input(2))
        .text(0, &["\u{4f60}\u{597d} ", "w\u{f6}rld"])
        .message_delta("end_turn", 6)
        .message_stop()
        .body();
    server.push(
        ScriptedResponse::new(200)
            .with_header("content-type", "text/event-stream")
            .with_body_in_chunks(body, 5),
    );
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    assert_eq!(
        texts(chunks.last().unwrap()),
        vec!["\u{4f60}\u{597d} w\u{f6}rld"]
    );
}

#[tokio::test]
async fn a_429_is_retried_and_without_retries_keeps_its_retry_after_and_names_minimax() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        error_response(429, "rate_limit_error", "slow down", "req_1")
            .with_header("retry-after", "0"),
    );
    server.push(AnthropicStream::text_reply(MODEL, &["fine"], 1, 1).into_response());
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    assert_eq!(texts(chunks.last().unwrap()), vec!["fine"]);
    assert_eq!(server.request_count(), 2);

    let server = FakeServer::start().await.unwrap();
    server.push(
        error_response(429, "rate_limit_error", "slow down", "req_2")
            .with_header("retry-after", "7"),
    );
    let http = HttpClient::builder()
        .with_retry(RetryPolicy::none())
        .build()
        .unwrap();
    let model = MiniMaxChatModel::with_client(http, "k", MODEL).with_base_url(server.base_url());
    let err = call_error(&model).await;
    assert_eq!(
        err,
        ModelError::Provider {
            provider: "minimax".into(),
            status: 429,
            code: Some("rate_limit_error".into()),
            message: "slow down".into(),
            request_id: Some("req_2".into()),
            retry_after: Some(Duration::from_secs(7)),
        }
    );
    assert!(err.is_retryable());
}

#[tokio::test]
async fn an_auth_error_in_minimax_base_resp_shape_is_read_and_not_retried() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(
        401,
        &json!({"base_resp": {"status_code": 1004, "status_msg": "login fail: invalid api key"}}),
    ));
    let err = call_error(&model(&server)).await;
    let ModelError::Provider {
        provider,
        status,
        code,
        message,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (
            provider.as_str(),
            *status,
            code.as_deref(),
            message.as_str()
        ),
        ("minimax", 401, Some("1004"), "login fail: invalid api key")
    );
    assert!(!err.is_retryable());
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_stream_cut_mid_way_is_a_typed_error_item_without_a_final_chunk() {
    let server = FakeServer::start().await.unwrap();
    let cut = AnthropicStream::new(MODEL)
        .message_start(Usage::input(3))
        .thinking(0, &["hal"], "sig")
        .text(1, &["half"]);
    server.push(cut.clone().into_response());
    server.push(cut.into_response().with_end(BodyEnd::Abort));
    for _ in 0..2 {
        let (chunks, error) = run(&server, &conversation()).await;
        assert!(!chunks.is_empty());
        assert!(chunks.iter().all(|c| !c.is_last), "no final chunk");
        assert!(
            matches!(error, Some(ModelError::Stream { .. })),
            "{error:?}"
        );
    }
}

#[tokio::test]
async fn an_error_event_mid_stream_names_minimax_and_is_retryable() {
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
        provider, status, ..
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!((provider.as_str(), *status), ("minimax", 529));
    assert!(error.is_retryable());
}

#[tokio::test]
async fn garbage_instead_of_events_is_an_error_item_not_a_panic() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        ScriptedResponse::new(200)
            .with_header("content-type", "text/event-stream")
            .with_body(b"data: {\"type\": \"message_start\"\n\ndata: \xff\xfe\n\n".to_vec()),
    );
    let (chunks, error) = run(&server, &conversation()).await;
    assert!(chunks.is_empty());
    assert!(
        matches!(error, Some(ModelError::Stream { .. })),
        "{error:?}"
    );
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
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn the_request_is_anthropic_messages_with_adaptive_thinking_and_no_budget_or_effort() {
    let server = FakeServer::start().await.unwrap();
    server.push(AnthropicStream::text_reply(MODEL, &["ok"], 1, 1).into_response());
    let call = ToolCallBlock::new("call_1", "get_weather", "{\"city\": \"Paris\"}");
    let result = ToolResultBlock::new("call_1", "get_weather", "sunny", ToolResultState::Success);
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
    let choice = ToolChoice::auto();
    let params = MiniMaxParameters::default()
        .with_max_tokens(2048)
        .with_thinking(true);
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
    assert_eq!(sent.header("x-api-key"), Some("mm-test"));
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
                    {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "sunny"}]}
                ]},
            ],
            "tools": [{
                "name": "get_weather",
                "description": "Weather of a city.",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            }],
            "tool_choice": {"type": "auto"},
            "thinking": {"type": "adaptive"},
            "stream": true,
        })
    );
}

#[tokio::test]
async fn from_credential_takes_the_key_the_endpoint_and_the_cards_output_size() {
    let server = FakeServer::start().await.unwrap();
    server.push(AnthropicStream::text_reply(MODEL, &["ok"], 1, 1).into_response());
    let credential = Credential::from(
        MiniMaxCredential::new("mm-from-credential")
            .with_base_url(format!("{}/", server.base_url())),
    );
    let card = credential
        .list_models()
        .unwrap()
        .into_iter()
        .find(|c| c.name == "MiniMax-M2.7")
        .unwrap();
    let model = MiniMaxChatModel::from_credential(&credential, card.name.clone()).unwrap();
    assert_eq!(model.context_size(), Some(card.context_size.get()));
    let msgs = conversation();
    drain(
        model
            .call(request(&msgs), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await;
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages", "a trailing / is dropped");
    assert_eq!(sent.header("x-api-key"), Some("mm-from-credential"));
    let body = sent.body_json().unwrap();
    assert_eq!(body["max_tokens"], card.output_size.get());
    assert!(body.get("thinking").is_none(), "thinking is off by default");

    let other = Credential::from(oxiscope_model::AnthropicCredential::new("sk"));
    let err = MiniMaxChatModel::from_credential(&other, MODEL).unwrap_err();
    assert_eq!(
        err,
        ModelError::InvalidRequest {
            message: "a MiniMax model needs a minimax_credential, not a anthropic_credential"
                .into()
        }
    );
}

#[tokio::test]
async fn a_whole_reply_and_the_multi_agent_formatter_work_when_set() {
    let server = FakeServer::start().await.unwrap();
    let content = json!([
        {"type": "thinking", "thinking": "hmm", "signature": "sig=="},
        {"type": "text", "text": "Hello, Alice."},
    ]);
    server.push(message_response(MODEL, &content, Usage::input(8), 5));
    let model = model(&server)
        .with_stream(false)
        .with_formatter(Arc::new(MiniMaxMultiAgentFormatter::new()));
    let msgs = vec![
        Msg::user("Alice", "Hi Friday").unwrap(),
        Msg::user("Bob", "Hi all").unwrap(),
    ];
    let (chunks, error) = drain(
        model
            .call(request(&msgs), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(error, None);
    let last = chunks.last().unwrap();
    assert_eq!(texts(last), vec!["Hello, Alice."]);
    assert_eq!(last.usage.as_ref().map(|u| u.output_tokens), Some(5));
    let body = server.requests()[0].body_json().unwrap();
    assert_eq!(body["stream"], false);
    let folded = body["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(
        folded.ends_with("Alice: Hi Friday\nBob: Hi all\n</history>"),
        "{folded}"
    );
}

#[tokio::test]
async fn the_factory_model_follows_the_media_and_endpoint_policy() {
    use oxiscope_message::{DataBlock, DataSource, UrlSource};
    use oxiscope_providers::{Endpoints, MediaPolicy, ModelConfig, RemoteMedia, chat_model_with};

    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    std::fs::write(workspace.join("clip.mp4"), b"MP4").unwrap();
    let secret = tmp.path().join("secret.mp4");
    std::fs::write(&secret, b"hunter2").unwrap();
    std::os::unix::fs::symlink(&secret, workspace.join("link.mp4")).unwrap();
    let video_at = |path: &std::path::Path| {
        let url = url::Url::from_file_path(path).unwrap().to_string();
        let block = DataBlock::new(DataSource::Url(UrlSource::new(&url, "video/mp4").unwrap()));
        vec![Msg::user("user", vec![block.into()]).unwrap()]
    };
    let policy = MediaPolicy {
        file_roots: Some(vec![workspace.clone()]),
        remote: RemoteMedia::PublicOnly,
        ..MediaPolicy::default()
    };
    let server = FakeServer::start().await.unwrap();
    let credential =
        Credential::from(MiniMaxCredential::new("mm").with_base_url(server.base_url()));
    let model = chat_model_with(&credential, &ModelConfig::new(MODEL), &policy).unwrap();
    for refused in [secret.clone(), workspace.join("link.mp4")] {
        let msgs = video_at(&refused);
        let Err(err) = model
            .call_boxed(request(&msgs), CancellationToken::new())
            .await
        else {
            panic!("{refused:?} was read")
        };
        assert!(
            matches!(&err, ModelError::InvalidRequest { message } if message.contains("outside the directories")),
            "{err:?}"
        );
    }
    assert_eq!(server.request_count(), 0, "nothing was sent");
    server.push(AnthropicStream::text_reply(MODEL, &["A clip."], 3, 2).into_response());
    let msgs = video_at(&workspace.join("clip.mp4"));
    let stream = model
        .call_boxed(request(&msgs), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(drain(stream).await.1, None);
    let body = server.requests()[0].body_json().unwrap();
    assert_eq!(
        body["messages"][0]["content"][0],
        json!({"type": "video", "source": {"type": "base64", "media_type": "video/mp4", "data": "TVA0"}})
    );

    let public_only = MediaPolicy::default().with_endpoints(Endpoints::PublicOnly);
    let model = chat_model_with(&credential, &ModelConfig::new(MODEL), &public_only).unwrap();
    let msgs = conversation();
    let err = match model
        .call_boxed(request(&msgs), CancellationToken::new())
        .await
    {
        Ok(stream) => drain(stream).await.1.unwrap(),
        Err(e) => e,
    };
    assert!(
        matches!(&err, ModelError::InvalidRequest { message } if message.contains("restricted to public addresses")),
        "{err:?}"
    );
    assert_eq!(
        server.request_count(),
        1,
        "the loopback endpoint was not called"
    );
}
