//! DashScope through its OpenAI-compatible mode, as AgentScope 2.0's
//! `DashScopeChatModel` calls it (`compatible-mode/v1/chat/completions`):
//! the card's `thinking_enable` goes out as `enable_thinking` (always, off
//! by default), `voice` asks for audio, `parallel_tool_calls` only when off;
//! `reasoning_content` streamed or whole comes back as thinking; tool calls
//! split in DashScope's way (later fragments with an empty id), usage, a
//! rate limit with its `Retry-After`, a cut stream and interruption.

use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_http::{HttpClient, RetryPolicy};
use oxiscope_message::{ContentBlock, FinishedReason, Msg, ThinkingBlock};
use oxiscope_model::{
    ChatModel, ChatRequest, ChatResponse, Credential, DashScopeCredential, ModelError, ToolSchema,
};
use oxiscope_providers::openai_chat::OpenAiChatModel;
use oxiscope_providers::{ModelConfig, chat_model};
use oxiscope_test_support::chat::{conversation, drain, request};
use oxiscope_test_support::{FakeServer, OpenAiScript, ScriptedResponse, openai_rate_limited};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const MODEL: &str = "qwen3.6-plus";

fn credential(server: &FakeServer) -> Credential {
    Credential::from(
        DashScopeCredential::new("sk-dash").with_base_url(server.url("/compatible-mode/v1")),
    )
}

fn model(server: &FakeServer, params: Value) -> OpenAiChatModel {
    let Value::Object(params) = params else {
        panic!("parameters are an object")
    };
    let retry = RetryPolicy::default()
        .with_max_attempts(3)
        .with_base_delay(Duration::from_millis(1))
        .with_max_delay(Duration::from_millis(5));
    OpenAiChatModel::from_credential(&credential(server), MODEL)
        .unwrap()
        .with_http_client(HttpClient::builder().with_retry(retry).build().unwrap())
        .with_parameters(params)
        .build()
        .unwrap()
}

async fn run(model: &OpenAiChatModel, msgs: &[Msg]) -> (Vec<ChatResponse>, Option<ModelError>) {
    let stream = model
        .call(request(msgs), CancellationToken::new())
        .await
        .unwrap();
    drain(stream).await
}

fn thinking_and_text(chunk: &ChatResponse) -> (String, String) {
    let mut thinking = String::new();
    let mut text = String::new();
    for block in &chunk.content {
        match block {
            ContentBlock::Thinking(ThinkingBlock { thinking: t, .. }) => thinking.push_str(t),
            ContentBlock::Text(t) => text.push_str(&t.text),
            _ => {}
        }
    }
    (thinking, text)
}

#[tokio::test]
async fn the_factory_sends_enable_thinking_and_the_other_card_parameters_to_compatible_mode() {
    let server = FakeServer::start().await.unwrap();
    let credential = credential(&server);
    let cases = [
        (json!({}), json!({"enable_thinking": false})),
        (
            json!({"thinking_enable": true, "thinking_budget": 2048, "max_tokens": 512,
                   "temperature": 0.7, "top_p": 0.9, "top_k": 20, "parallel_tool_calls": true}),
            json!({"enable_thinking": true, "thinking_budget": 2048, "max_tokens": 512,
                   "temperature": 0.7, "top_p": 0.9, "top_k": 20}),
        ),
        (
            json!({"voice": "Cherry"}),
            json!({"enable_thinking": false, "audio": {"voice": "Cherry", "format": "pcm16"},
                   "modalities": ["text", "audio"]}),
        ),
    ];
    for (params, expected) in cases {
        server.push(
            OpenAiScript::new()
                .model(MODEL)
                .text("ok")
                .finish("stop")
                .response(),
        );
        let Value::Object(params) = params else {
            panic!()
        };
        let config = ModelConfig::new(MODEL)
            .with_model_class("dashscope_chat")
            .with_parameters(params);
        let model = chat_model(&credential, &config).unwrap();
        let msgs = conversation();
        let stream = model
            .call_boxed(request(&msgs), CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(drain(stream).await.1, None);
        let sent = server.requests().pop().unwrap();
        assert_eq!(sent.path, "/compatible-mode/v1/chat/completions");
        assert_eq!(sent.header("authorization"), Some("Bearer sk-dash"));
        let mut body = sent.body_json().unwrap();
        let body = body.as_object_mut().unwrap();
        for key in ["model", "messages", "stream", "stream_options"] {
            assert!(body.remove(key).is_some(), "{key}");
        }
        assert_eq!(Value::Object(body.clone()), expected);
    }
}

#[tokio::test]
async fn parallel_tool_calls_off_is_sent_only_with_tools() {
    let server = FakeServer::start().await.unwrap();
    let model = model(&server, json!({"parallel_tool_calls": false}));
    let msgs = conversation();
    let tools = [ToolSchema::function("f", "", json!({"type": "object"}))];
    let with_tools = model
        .request_body(ChatRequest {
            messages: &msgs,
            tools: &tools,
            tool_choice: None,
        })
        .await
        .unwrap();
    assert_eq!(with_tools["parallel_tool_calls"], false);
    let without = model.request_body(request(&msgs)).await.unwrap();
    assert!(without.get("parallel_tool_calls").is_none(), "{without}");
}

#[tokio::test]
async fn streamed_reasoning_content_text_a_split_tool_call_and_usage_make_one_final_chunk() {
    let server = FakeServer::start().await.unwrap();
    // DashScope's stream: reasoning first, `content` null meanwhile; later
    // tool-call fragments repeat the index with an empty id; usage in a
    // chunk without choices.
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-ds", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let script = OpenAiScript::new()
        .raw(chunk(json!({"role": "assistant", "content": null, "reasoning_content": "Need "}), Value::Null))
        .raw(chunk(json!({"content": null, "reasoning_content": "the weather."}), Value::Null))
        .raw(chunk(json!({"content": "Let me check.", "reasoning_content": null}), Value::Null))
        .raw(chunk(json!({"tool_calls": [{"index": 0, "id": "call_ds1", "type": "function",
                                          "function": {"name": "get_weather", "arguments": ""}}]}), Value::Null))
        .raw(chunk(json!({"tool_calls": [{"index": 0, "id": "", "type": "function",
                                          "function": {"arguments": "{\"city\": \"Hang"}}]}), Value::Null))
        .raw(chunk(json!({"tool_calls": [{"index": 0, "id": "", "type": "function",
                                          "function": {"arguments": "zhou\"}"}}]}), Value::Null))
        .raw(chunk(json!({"content": ""}), json!("tool_calls")))
        .raw(json!({"id": "chatcmpl-ds", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
                    "choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42,
                    "completion_tokens_details": {"reasoning_tokens": 5}}}).to_string());
    server.push(script.response());
    let model = model(&server, json!({"thinking_enable": true}));
    let (chunks, error) = run(&model, &conversation()).await;
    assert_eq!(error, None);
    assert!(chunks[..chunks.len() - 1].iter().all(|c| !c.is_last));
    let last = chunks.last().unwrap();
    assert!(last.is_last);
    assert_eq!(last.finished_reason, FinishedReason::Completed);
    assert_eq!(
        thinking_and_text(last),
        ("Need the weather.".to_owned(), "Let me check.".to_owned())
    );
    assert!(
        matches!(&last.content[0], ContentBlock::Thinking(_)),
        "thinking first"
    );
    let calls: Vec<_> = last
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolCall(c) => Some((c.id.to_string(), c.name.clone(), c.input.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![(
            "call_ds1".to_owned(),
            "get_weather".to_owned(),
            "{\"city\": \"Hangzhou\"}".to_owned()
        )]
    );
    let usage = last.usage.clone().unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (30, 12));
    assert_eq!(
        server.requests()[0].body_json().unwrap()["enable_thinking"],
        true
    );
}

#[tokio::test]
async fn a_whole_reply_keeps_its_reasoning_content() {
    let server = FakeServer::start().await.unwrap();
    let script = OpenAiScript::new()
        .model(MODEL)
        .reasoning("Short question.")
        .text("Hello!")
        .finish("stop")
        .usage(9, 4, 0);
    server.push(script.completion());
    let model = OpenAiChatModel::from_credential(&credential(&server), MODEL)
        .unwrap()
        .with_stream(false)
        .build()
        .unwrap();
    let (chunks, error) = run(&model, &conversation()).await;
    assert_eq!(error, None);
    let last = chunks.last().unwrap();
    assert_eq!(
        thinking_and_text(last),
        ("Short question.".to_owned(), "Hello!".to_owned())
    );
    assert_eq!(last.usage.as_ref().map(|u| u.output_tokens), Some(4));
    let body = server.requests()[0].body_json().unwrap();
    assert_eq!(
        (body["stream"].clone(), body["enable_thinking"].clone()),
        (Value::Null, json!(false))
    );
}

#[tokio::test]
async fn thinking_in_the_history_is_not_sent_back() {
    let server = FakeServer::start().await.unwrap();
    let model = model(&server, json!({"thinking_enable": true}));
    let answer = Msg::assistant(
        "Friday",
        vec![
            ThinkingBlock::new("private reasoning").into(),
            oxiscope_message::TextBlock::new("Hi.").into(),
        ],
    )
    .unwrap();
    let msgs = vec![Msg::user("user", "Hi").unwrap(), answer];
    let body = model.request_body(request(&msgs)).await.unwrap();
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [{"type": "text", "text": "Hi."}]})
    );
}

#[tokio::test]
async fn a_rate_limit_keeps_its_retry_after_a_cut_stream_is_an_error_and_cancel_interrupts() {
    let server = FakeServer::start().await.unwrap();
    let http = HttpClient::builder()
        .with_retry(RetryPolicy::none())
        .build()
        .unwrap();
    let model = OpenAiChatModel::from_credential(&credential(&server), MODEL)
        .unwrap()
        .with_http_client(http)
        .build()
        .unwrap();
    server.push(openai_rate_limited(4));
    let msgs = conversation();
    let Err(err) = model.call(request(&msgs), CancellationToken::new()).await else {
        panic!("a 429 without retries fails")
    };
    let ModelError::Provider {
        provider,
        status,
        retry_after,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (provider.as_str(), *status, *retry_after),
        ("dashscope", 429, Some(Duration::from_secs(4)))
    );

    let script = OpenAiScript::new()
        .model(MODEL)
        .reasoning("thinking")
        .text("par")
        .text("tial")
        .finish("stop");
    server.push(script.response_cut_after(2));
    let (chunks, error) = run(&model, &msgs).await;
    assert!(!chunks.is_empty() && chunks.iter().all(|c| !c.is_last));
    assert!(
        matches!(error, Some(ModelError::Stream { .. })),
        "{error:?}"
    );

    server.push(
        ScriptedResponse::sse(script.events().into_iter().take(2).collect::<Vec<_>>())
            .with_end(oxiscope_test_support::BodyEnd::Stall),
    );
    let cancel = CancellationToken::new();
    let mut stream = model.call(request(&msgs), cancel.clone()).await.unwrap();
    let _first = stream.next().await.unwrap().unwrap();
    cancel.cancel();
    let mut last = None;
    while let Some(item) = stream.next().await {
        last = Some(item.unwrap());
    }
    let last = last.unwrap();
    assert!(last.is_last);
    assert_eq!(last.finished_reason, FinishedReason::Interrupted);
}

#[tokio::test]
async fn a_factory_model_does_not_retry_its_caller_owns_the_retry_policy() {
    let server = FakeServer::start().await.unwrap();
    server.push(openai_rate_limited(4));
    server.push(
        OpenAiScript::new()
            .model(MODEL)
            .text("too late")
            .finish("stop")
            .response(),
    );
    let config = ModelConfig::new(MODEL).with_model_class("dashscope_chat");
    let model = chat_model(&credential(&server), &config).unwrap();
    let msgs = conversation();
    let err = model
        .call_boxed(request(&msgs), CancellationToken::new())
        .await
        .err()
        .expect("the rate limit comes back at once");
    let ModelError::Provider {
        status,
        retry_after,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    // Status and `Retry-After` reach the caller, which decides.
    assert_eq!((*status, *retry_after), (429, Some(Duration::from_secs(4))));
    assert_eq!(server.requests().len(), 1, "no retry below the caller");
}
