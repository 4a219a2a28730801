//! The Ollama chat model against a fake `/api/chat` server, through the
//! real HTTP client.

use futures_util::StreamExt;
use oxiscope_http::{HttpClient, RetryPolicy};
use oxiscope_message::{ContentBlock, FinishedReason, Msg, ToolCallBlock};
use oxiscope_model::{
    ChatModel, ChatRequest, ChatResponse, Credential, ModelError, OllamaCredential, ToolChoice,
    ToolSchema,
};
use oxiscope_providers::ollama::{OllamaChatModel, OllamaParameters};
use oxiscope_test_support::chat::{conversation, drain, request};
use oxiscope_test_support::ollama::{OllamaStream, error_response};
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const MODEL: &str = "qwen3:8b";

fn model(server: &FakeServer) -> OllamaChatModel {
    let http = HttpClient::builder()
        .with_retry(RetryPolicy::none())
        .build()
        .unwrap();
    OllamaChatModel::with_client(http, MODEL).with_host(server.base_url())
}

async fn run(model: &OllamaChatModel, msgs: &[Msg]) -> (Vec<ChatResponse>, Option<ModelError>) {
    match model.call(request(msgs), CancellationToken::new()).await {
        Ok(stream) => drain(stream).await,
        Err(e) => panic!("the call should start: {e}"),
    }
}

#[tokio::test]
async fn streamed_thinking_and_text_accumulate_with_the_final_counts() {
    let server = FakeServer::start().await.unwrap();
    let reply = OllamaStream::new(MODEL)
        .thinking("Greet ")
        .thinking("back.")
        .content("Hel")
        .content("lo!")
        .done(26, 4);
    server.push(reply.into_response());
    let (chunks, error) = run(&model(&server), &conversation()).await;
    assert_eq!(error, None);
    assert_eq!(chunks.len(), 5, "four deltas and the final chunk");
    let last = chunks.last().unwrap();
    assert!(last.is_last);
    assert_eq!(last.finished_reason, FinishedReason::Completed);
    let (ContentBlock::Thinking(thinking), ContentBlock::Text(text)) =
        (&last.content[0], &last.content[1])
    else {
        panic!("{:?}", last.content)
    };
    assert_eq!(
        (thinking.thinking.as_str(), text.text.as_str()),
        ("Greet back.", "Hello!")
    );
    let usage = last.usage.clone().unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (26, 4));
}

#[tokio::test]
async fn lines_split_at_awkward_byte_boundaries_decode_the_same() {
    let server = FakeServer::start().await.unwrap();
    let body = OllamaStream::new(MODEL)
        .content("gr\u{fc}\u{df} ")
        .content("dich")
        .done(3, 2)
        .body();
    server.push(
        ScriptedResponse::new(200)
            .with_header("content-type", "application/x-ndjson")
            .with_body_in_chunks(body, 5),
    );
    let (chunks, error) = run(&model(&server), &conversation()).await;
    assert_eq!(error, None);
    let ContentBlock::Text(text) = &chunks.last().unwrap().content[0] else {
        panic!("{chunks:?}")
    };
    assert_eq!(text.text, "gr\u{fc}\u{df} dich");
}

#[tokio::test]
async fn cancelling_ends_the_stream_with_what_arrived_marked_interrupted() {
    let server = FakeServer::start().await.unwrap();
    let stalled = OllamaStream::new(MODEL)
        .content("partial")
        .into_response()
        .with_end(BodyEnd::Stall);
    server.push(stalled);
    let cancel = CancellationToken::new();
    let msgs = conversation();
    let mut stream = model(&server)
        .call(request(&msgs), cancel.clone())
        .await
        .unwrap();
    assert!(!stream.next().await.unwrap().unwrap().is_last);
    cancel.cancel();
    let last = stream.next().await.unwrap().unwrap();
    assert!(last.is_last);
    assert_eq!(last.finished_reason, FinishedReason::Interrupted);
    assert_eq!(last.content.len(), 1);
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn whole_tool_calls_become_calls_with_json_text_arguments() {
    let server = FakeServer::start().await.unwrap();
    let reply = OllamaStream::new(MODEL)
        .tool_calls(&[
            ("get_weather", json!({"city": "Paris"})),
            ("get_time", json!({"zone": "CET"})),
        ])
        .done(10, 8);
    server.push(reply.into_response());
    let (chunks, error) = run(&model(&server), &conversation()).await;
    assert_eq!(error, None);
    let calls: Vec<(String, String)> = chunks
        .last()
        .unwrap()
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolCall(ToolCallBlock {
                name, input, id, ..
            }) => {
                assert!(!id.is_empty(), "every call gets an id");
                Some((name.clone(), input.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("get_weather".into(), "{\"city\":\"Paris\"}".into()),
            ("get_time".into(), "{\"zone\":\"CET\"}".into()),
        ]
    );
}

#[tokio::test]
async fn a_stream_that_ends_before_done_yields_an_error_item() {
    let server = FakeServer::start().await.unwrap();
    let cut = OllamaStream::new(MODEL).content("half");
    server.push(cut.clone().into_response());
    server.push(cut.into_response().with_end(BodyEnd::Abort));
    for _ in 0..2 {
        let (chunks, error) = run(&model(&server), &conversation()).await;
        assert_eq!(chunks.len(), 1);
        assert!(!chunks[0].is_last);
        assert!(
            matches!(error, Some(ModelError::Stream { .. })),
            "{error:?}"
        );
    }
}

#[tokio::test]
async fn an_error_line_and_a_malformed_line_yield_error_items() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        OllamaStream::new(MODEL)
            .content("a")
            .error("out of memory")
            .into_response(),
    );
    server.push(
        OllamaStream::new(MODEL)
            .raw("{\"message\": ")
            .into_response(),
    );
    server.push(OllamaStream::new(MODEL).raw("[1, 2]").into_response());
    let (_, error) = run(&model(&server), &conversation()).await;
    let Some(ModelError::Provider { message, .. }) = error else {
        panic!("{error:?}")
    };
    assert_eq!(message, "out of memory");
    for _ in 0..2 {
        let (chunks, error) = run(&model(&server), &conversation()).await;
        assert!(chunks.is_empty());
        assert!(
            matches!(error, Some(ModelError::Stream { .. })),
            "{error:?}"
        );
    }
}

#[tokio::test]
async fn an_unknown_model_is_a_typed_provider_error() {
    let server = FakeServer::start().await.unwrap();
    server.push(error_response(
        404,
        "model \"qwen3:8b\" not found, try pulling it first",
    ));
    let msgs = conversation();
    let Err(err) = model(&server)
        .call(request(&msgs), CancellationToken::new())
        .await
    else {
        panic!("the call should fail")
    };
    assert_eq!(
        err,
        ModelError::Provider {
            provider: "ollama".into(),
            status: 404,
            code: None,
            message: "model \"qwen3:8b\" not found, try pulling it first".into(),
            request_id: None,
            retry_after: None,
        }
    );
}

#[tokio::test]
async fn the_request_carries_messages_tools_think_and_options() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        OllamaStream::new(MODEL)
            .content("ok")
            .done(1, 1)
            .into_response(),
    );
    let params = OllamaParameters::default()
        .with_thinking(true)
        .with_temperature(0.5)
        .with_max_tokens(256)
        .with_option("num_ctx", 8192);
    let tools = [
        ToolSchema::function("a", "Tool a.", json!({"type": "object"})),
        ToolSchema::function("b", "Tool b.", json!({"type": "object"})),
    ];
    let choice = ToolChoice::tool("b");
    let msgs = conversation();
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
        ("POST", "/api/chat")
    );
    assert_eq!(
        sent.body_json().unwrap(),
        json!({
            "model": MODEL,
            "messages": [
                {"role": "system", "content": "You are Friday."},
                {"role": "user", "content": "Hi!"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "b", "description": "Tool b.", "parameters": {"type": "object"}
            }}],
            "think": true,
            "options": {"num_ctx": 8192, "num_predict": 256, "temperature": 0.5},
            "stream": true,
        })
    );
}

#[tokio::test]
async fn a_whole_reply_is_parsed_when_streaming_is_off() {
    let server = FakeServer::start().await.unwrap();
    let body = json!({
        "model": MODEL,
        "message": {"role": "assistant", "content": "Hi there", "thinking": "short"},
        "done": true,
        "prompt_eval_count": 12,
        "eval_count": 3,
    });
    server.push(ScriptedResponse::json(200, &body));
    let model = model(&server).with_stream(false);
    let (chunks, error) = run(&model, &conversation()).await;
    assert_eq!(error, None);
    let last = chunks.last().unwrap();
    assert_eq!(last.content.len(), 2);
    assert_eq!(last.usage.as_ref().map(|u| u.output_tokens), Some(3));
    assert_eq!(server.requests()[0].body_json().unwrap()["stream"], false);
}

#[tokio::test]
async fn from_credential_uses_the_host_and_rejects_other_credentials() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        OllamaStream::new(MODEL)
            .content("ok")
            .done(1, 1)
            .into_response(),
    );
    let credential = Credential::from(OllamaCredential::new().with_host(server.base_url()));
    let model = OllamaChatModel::from_credential(&credential, MODEL).unwrap();
    let (_, error) = run(&model, &conversation()).await;
    assert_eq!(error, None);
    assert_eq!(server.request_count(), 1);
    let other = Credential::from(oxiscope_model::AnthropicCredential::new("k"));
    assert!(matches!(
        OllamaChatModel::from_credential(&other, MODEL),
        Err(ModelError::InvalidRequest { .. })
    ));
}
