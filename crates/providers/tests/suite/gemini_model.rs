//! The Gemini chat model against a fake Gemini API, through the real HTTP
//! client: the documented `streamGenerateContent?alt=sse` format (each event
//! a whole `GenerateContentResponse`, no closing event), thinking, function
//! calls and their signatures, usage, errors, cut streams, cancellation and
//! the request it sends.

use std::path::PathBuf;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_http::{HttpClient, RetryPolicy};
use oxiscope_message::{
    Base64Source, ContentBlock, DataBlock, DataSource, FinishedReason, Msg, TextBlock,
    ThinkingBlock, ToolCallBlock, ToolResultBlock, ToolResultState, UrlSource,
};
use oxiscope_model::{
    ChatModel, ChatRequest, ChatResponse, Credential, FunctionSchema, GeminiCredential, ModelError,
    ToolChoice, ToolSchema,
};
use oxiscope_providers::gemini::{
    CALL_SIGNATURE_PREFIX, GeminiChatModel, GeminiMultiAgentFormatter, GeminiParameters,
};
use oxiscope_providers::{MediaPolicy, ModelConfig, chat_model_with};
use oxiscope_test_support::chat::{conversation, drain, request};
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const MODEL: &str = "gemini-test";
const STREAM_PATH: &str = "/models/gemini-test:streamGenerateContent";

/// The SSE body of `responses`, one event each, as the API frames them.
fn sse_body(responses: &[Value]) -> String {
    responses
        .iter()
        .map(|r| format!("data: {r}\r\n\r\n"))
        .collect()
}

fn sse(responses: &[Value]) -> ScriptedResponse {
    ScriptedResponse::new(200)
        .with_header("content-type", "text/event-stream")
        .with_body(sse_body(responses))
}

/// A response carrying `parts`.
fn parts(parts: Value) -> Value {
    let mut response = json!({"candidates": [{"content": {"role": "model"}, "index": 0}],
        "modelVersion": MODEL});
    response["candidates"][0]["content"]["parts"] = parts;
    response
}

/// The last response: `parts`, a finish reason and usage.
fn last(parts: Value, reason: &str, prompt: u64, total: u64) -> Value {
    let mut response = json!({
        "candidates": [{"content": {"role": "model"}, "finishReason": reason, "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": total - prompt,
            "totalTokenCount": total},
        "modelVersion": MODEL,
    });
    response["candidates"][0]["content"]["parts"] = parts;
    response
}

fn error_response(status: u16, code: &str, message: &str) -> ScriptedResponse {
    ScriptedResponse::json(
        status,
        &json!({"error": {"code": status, "message": message, "status": code}}),
    )
}

fn client() -> HttpClient {
    let retry = RetryPolicy::default()
        .with_max_attempts(3)
        .with_base_delay(Duration::from_millis(1))
        .with_max_delay(Duration::from_millis(5));
    HttpClient::builder().with_retry(retry).build().unwrap()
}

fn model(server: &FakeServer) -> GeminiChatModel {
    GeminiChatModel::with_client(client(), "g-key", MODEL).with_base_url(server.base_url())
}

async fn run(server: &FakeServer, msgs: &[Msg]) -> (Vec<ChatResponse>, Option<ModelError>) {
    let stream = model(server)
        .call(request(msgs), CancellationToken::new())
        .await
        .unwrap();
    drain(stream).await
}

async fn call_error(model: &GeminiChatModel, msgs: &[Msg]) -> ModelError {
    match model.call(request(msgs), CancellationToken::new()).await {
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

fn calls(chunk: &ChatResponse) -> Vec<&ToolCallBlock> {
    chunk
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn streamed_thinking_and_text_arrive_as_deltas_then_one_complete_final_chunk() {
    let server = FakeServer::start().await.unwrap();
    server.push(sse(&[
        parts(json!([{"text": "Hmm, ", "thought": true}])),
        parts(json!([{"text": "a greeting.", "thought": true}])),
        parts(json!([{"text": "Hel"}])),
        parts(json!([{"text": "lo"}, {"text": " there"}])),
        last(json!([{"text": "!"}]), "STOP", 12, 20),
    ]));
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    let (last, deltas) = chunks.split_last().unwrap();
    assert!(deltas.iter().all(|c| !c.is_last));
    assert_eq!(deltas.len(), 6);
    assert!(last.is_last);
    assert_eq!(last.finished_reason, FinishedReason::Completed);
    let ContentBlock::Thinking(ThinkingBlock { thinking, .. }) = &last.content[0] else {
        panic!("{:?}", last.content)
    };
    assert_eq!(thinking, "Hmm, a greeting.");
    assert_eq!(texts(last), vec!["Hello there!"]);
    let usage = last.usage.clone().unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (12, 8));

    let sent = &server.requests()[0];
    assert_eq!(
        sent.path,
        format!("/{}", STREAM_PATH.trim_start_matches('/'))
    );
    assert_eq!(sent.query.as_deref(), Some("alt=sse"));
    assert_eq!(sent.header("x-goog-api-key"), Some("g-key"));
    assert_eq!(
        sent.body_json().unwrap(),
        json!({
            "contents": [{"role": "user", "parts": [{"text": "Hi!"}]}],
            "systemInstruction": {"parts": [{"text": "You are Friday."}]},
            "generationConfig": {"thinkingConfig": {"includeThoughts": false}},
        })
    );
}

#[tokio::test]
async fn function_calls_split_across_network_chunks_keep_their_signature_for_the_next_turn() {
    let server = FakeServer::start().await.unwrap();
    let body = sse_body(&[
        parts(json!([{"text": "Checking both. \u{e9}\u{f6}"}])),
        last(
            json!([
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                 "thoughtSignature": "c2lnbmVkLWNhbGw="},
                {"functionCall": {"name": "Glob", "args": {"pattern": "*.rs"}}},
            ]),
            "STOP",
            30,
            50,
        ),
    ]);
    server.push(
        ScriptedResponse::new(200)
            .with_header("content-type", "text/event-stream")
            .with_body_in_chunks(body, 7),
    );
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    let reply = chunks.last().unwrap();
    assert_eq!(texts(reply), vec!["Checking both. \u{e9}\u{f6}"]);
    let found: Vec<(&str, &str)> = calls(reply)
        .iter()
        .map(|c| (c.name.as_str(), c.input.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![
            ("get_weather", "{\"city\":\"Paris\"}"),
            ("Glob", "{\"pattern\":\"*.rs\"}")
        ]
    );
    let first_id = calls(reply)[0].id.clone();
    let second_id = calls(reply)[1].id.clone();
    assert!(first_id.starts_with("call_") && first_id != second_id);
    let signature = reply.content.iter().find_map(|b| match b {
        ContentBlock::Thinking(t) => t.extra.get(&format!("{CALL_SIGNATURE_PREFIX}{first_id}")),
        _ => None,
    });
    assert_eq!(signature, Some(&json!("c2lnbmVkLWNhbGw=")));

    // The next turn sends the calls back, the signature on its call.
    let mut answer = Msg::assistant("Friday", "").unwrap();
    answer.content = reply.content.clone();
    for (id, name) in [(&first_id, "get_weather"), (&second_id, "Glob")] {
        answer
            .content
            .push(ToolResultBlock::new(id.clone(), name, "done", ToolResultState::Success).into());
    }
    let mut msgs = conversation();
    msgs.push(answer);
    let body = model(&server).request_body(request(&msgs)).await.unwrap();
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [
            {"text": "Checking both. \u{e9}\u{f6}"},
            {"function_call": {"id": first_id, "name": "get_weather", "args": {"city": "Paris"}},
             "thought_signature": "c2lnbmVkLWNhbGw="},
            {"function_call": {"id": second_id, "name": "Glob", "args": {"pattern": "*.rs"}}},
        ]})
    );
    assert_eq!(
        body["contents"][2]["parts"][0]["function_response"]["response"],
        json!({"output": "done"})
    );
}

#[tokio::test]
async fn usage_counts_thoughts_as_output_and_cached_tokens_as_cache_reads() {
    let server = FakeServer::start().await.unwrap();
    server.push(sse(&[json!({
        "candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "MAX_TOKENS"}],
        "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 5,
            "thoughtsTokenCount": 12, "cachedContentTokenCount": 32, "totalTokenCount": 57},
    })]));
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    let usage = chunks.last().unwrap().usage.clone().unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_input_tokens
        ),
        (40, 17, 32)
    );
    assert_eq!(
        usage.metadata.unwrap().get("reasoning_tokens"),
        Some(&json!(12))
    );
}

#[tokio::test]
async fn a_429_is_retried_and_without_retries_keeps_the_delay_from_header_or_retry_info() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        error_response(429, "RESOURCE_EXHAUSTED", "slow down").with_header("retry-after", "0"),
    );
    server.push(sse(&[last(json!([{"text": "fine"}]), "STOP", 1, 2)]));
    let (chunks, error) = run(&server, &conversation()).await;
    assert_eq!(error, None);
    assert_eq!(texts(chunks.last().unwrap()), vec!["fine"]);
    assert_eq!(server.request_count(), 2);

    let http = HttpClient::builder()
        .with_retry(RetryPolicy::none())
        .build()
        .unwrap();
    let no_retry = GeminiChatModel::with_client(http, "k", MODEL).with_base_url(server.base_url());
    server.push(
        error_response(429, "RESOURCE_EXHAUSTED", "slow down").with_header("retry-after", "7"),
    );
    server.push(ScriptedResponse::json(
        429,
        &json!({"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]}}),
    ));
    let msgs = conversation();
    for expected in [7, 37] {
        let err = call_error(&no_retry, &msgs).await;
        let ModelError::Provider {
            status,
            retry_after,
            ref code,
            ..
        } = err
        else {
            panic!("{err:?}")
        };
        assert_eq!(
            (status, retry_after, code.as_deref()),
            (
                429,
                Some(Duration::from_secs(expected)),
                Some("RESOURCE_EXHAUSTED")
            )
        );
        assert!(err.is_retryable());
    }
}

#[tokio::test]
async fn a_400_is_a_typed_provider_error_and_not_retried() {
    let server = FakeServer::start().await.unwrap();
    server.push(error_response(
        400,
        "INVALID_ARGUMENT",
        "Invalid JSON payload",
    ));
    let msgs = conversation();
    let err = call_error(&model(&server), &msgs).await;
    assert_eq!(
        err,
        ModelError::Provider {
            provider: "gemini".into(),
            status: 400,
            code: Some("INVALID_ARGUMENT".into()),
            message: "Invalid JSON payload".into(),
            request_id: None,
            retry_after: None,
        }
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_stream_cut_before_its_finish_reason_yields_an_error_item_and_no_final_chunk() {
    let server = FakeServer::start().await.unwrap();
    let cut = [parts(json!([{"text": "half"}]))];
    server.push(sse(&cut));
    server.push(sse(&cut).with_end(BodyEnd::Abort));
    // Cut inside an event: its JSON is incomplete.
    let mut torn = sse_body(&[
        parts(json!([{"text": "half"}])),
        last(json!([]), "STOP", 1, 1),
    ]);
    torn.truncate(torn.len() - 20);
    server.push(
        ScriptedResponse::new(200)
            .with_header("content-type", "text/event-stream")
            .with_body(torn)
            .with_end(BodyEnd::Abort),
    );
    for _ in 0..3 {
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
async fn a_reply_stopped_for_safety_or_an_error_event_ends_with_a_provider_error() {
    let server = FakeServer::start().await.unwrap();
    server.push(sse(&[
        parts(json!([{"text": "Sure, "}])),
        last(json!([]), "SAFETY", 3, 4),
    ]));
    server.push(sse(&[
        parts(json!([{"text": "Sure, "}])),
        json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}),
    ]));
    let (_, error) = run(&server, &conversation()).await;
    let Some(err @ ModelError::Provider { .. }) = error else {
        panic!("{error:?}")
    };
    assert!(!err.is_retryable());
    assert!(err.to_string().contains("SAFETY"), "{err}");
    let (_, error) = run(&server, &conversation()).await;
    let Some(err @ ModelError::Provider { status: 503, .. }) = error else {
        panic!("{error:?}")
    };
    assert!(err.is_retryable());
}

#[tokio::test]
async fn cancelling_ends_the_stream_with_what_arrived_marked_interrupted() {
    let server = FakeServer::start().await.unwrap();
    server.push(sse(&[parts(json!([{"text": "partial"}]))]).with_end(BodyEnd::Stall));
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
async fn the_request_carries_sanitised_tools_the_choice_and_generation_config() {
    let server = FakeServer::start().await.unwrap();
    let tools = vec![
        ToolSchema {
            kind: "function".into(),
            function: FunctionSchema {
                name: "read".into(),
                description: "Reads a file".into(),
                parameters: json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "path": {"type": "string"},
                        "limit": {"type": ["integer", "null"], "exclusiveMinimum": 0},
                    },
                    "required": ["path"],
                }),
            },
        },
        ToolSchema {
            kind: "function".into(),
            function: FunctionSchema {
                name: "now".into(),
                description: "The time".into(),
                parameters: json!({"type": "object", "properties": {}}),
            },
        },
        ToolSchema {
            kind: "function".into(),
            function: FunctionSchema {
                name: "hidden".into(),
                description: "Not offered".into(),
                parameters: json!({"type": "object"}),
            },
        },
    ];
    let mut choice = ToolChoice::tool("read");
    choice.tools = Some(vec!["read".into(), "now".into()]);
    let msgs = conversation();
    let params = GeminiParameters::default()
        .with_thinking_budget(2048)
        .with_max_tokens(500)
        .with_temperature(0.3);
    let model = model(&server).with_parameters(params);
    let body = model
        .request_body(ChatRequest {
            messages: &msgs,
            tools: &tools,
            tool_choice: Some(&choice),
        })
        .await
        .unwrap();
    assert_eq!(
        body["tools"],
        json!([{"functionDeclarations": [
            {"name": "read", "description": "Reads a file", "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "limit": {"type": "integer", "nullable": true},
                },
                "required": ["path"],
            }},
            {"name": "now", "description": "The time"},
        ]}])
    );
    assert_eq!(
        body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read"]}})
    );
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens": 500, "temperature": 0.3,
            "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 2048}})
    );
    for (mode, expected) in [
        (ToolChoice::auto(), "AUTO"),
        (ToolChoice::none(), "NONE"),
        (ToolChoice::required(), "ANY"),
    ] {
        let body = model
            .request_body(ChatRequest {
                messages: &msgs,
                tools: &tools,
                tool_choice: Some(&mode),
            })
            .await
            .unwrap();
        assert_eq!(
            body["toolConfig"]["functionCallingConfig"],
            json!({"mode": expected})
        );
        assert_eq!(
            body["tools"][0]["functionDeclarations"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
    }
}

#[tokio::test]
async fn a_whole_reply_is_parsed_when_streaming_is_off() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(
        200,
        &last(
            json!([
                {"text": "Planning.", "thought": true, "thoughtSignature": "dA=="},
                {"text": "Calling."},
                {"functionCall": {"id": "fc_1", "name": "Read", "args": {"path": "a"}}},
            ]),
            "STOP",
            5,
            9,
        ),
    ));
    let model = model(&server).with_stream(false);
    let stream = model
        .call(request(&conversation()), CancellationToken::new())
        .await
        .unwrap();
    let (chunks, error) = drain(stream).await;
    assert_eq!(error, None);
    let reply = chunks.last().unwrap();
    let ContentBlock::Thinking(t) = &reply.content[0] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(t.thinking, "Planning.");
    assert_eq!(t.extra.get("thought_signature"), Some(&json!("dA==")));
    assert_eq!(texts(reply), vec!["Calling."]);
    assert_eq!(calls(reply)[0].id, "fc_1");
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/models/gemini-test:generateContent");
    assert_eq!(sent.query, None);
}

#[tokio::test]
async fn a_model_name_that_is_not_one_path_segment_is_refused_before_sending() {
    let server = FakeServer::start().await.unwrap();
    for name in ["../../v1/files", "a/b", "x?key=1", "", "..", "gemini 2"] {
        let model =
            GeminiChatModel::with_client(client(), "k", name).with_base_url(server.base_url());
        let err = call_error(&model, &conversation()).await;
        assert!(
            matches!(err, ModelError::InvalidRequest { .. }),
            "{name}: {err:?}"
        );
    }
    assert_eq!(server.request_count(), 0);
    let prefixed = GeminiChatModel::with_client(client(), "k", "models/gemini-2.5-flash");
    assert_eq!(prefixed.model_name(), "gemini-2.5-flash");
}

#[tokio::test]
async fn media_outside_the_policy_fails_the_call_before_anything_is_sent() {
    let server = FakeServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let allowed = dir.path().join("ok.png");
    std::fs::write(&allowed, b"\x89PNG").unwrap();
    let policy = MediaPolicy {
        file_roots: Some(vec![PathBuf::from(dir.path())]),
        ..MediaPolicy::default()
    };
    let model = model(&server).with_media_policy(policy);
    let image = |url: String| -> Msg {
        let mut msg = Msg::user("user", "look").unwrap();
        msg.content.push(
            DataBlock::new(DataSource::Url(UrlSource::new(&url, "image/png").unwrap())).into(),
        );
        msg
    };
    let inside = [image(format!("file://{}", allowed.display()))];
    let body = model.request_body(request(&inside)).await.unwrap();
    assert_eq!(
        body["contents"][0]["parts"][1],
        json!({"inline_data": {"data": "iVBORw==", "mime_type": "image/png"}})
    );
    for url in [
        "file:///etc/passwd".to_owned(),
        format!("file://{}/../../etc/passwd", dir.path().display()),
    ] {
        let err = call_error(&model, &[image(url.clone())]).await;
        assert!(
            matches!(err, ModelError::InvalidRequest { .. }),
            "{url}: {err:?}"
        );
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn the_multi_agent_formatter_folds_speakers_and_the_system_goes_to_the_instruction() {
    let server = FakeServer::start().await.unwrap();
    let model =
        model(&server).with_formatter(std::sync::Arc::new(GeminiMultiAgentFormatter::new()));
    let mut msgs = conversation();
    msgs.push(Msg::assistant("Jarvis", "Hello.").unwrap());
    let mut picture = Msg::user("Alice", "See:").unwrap();
    picture.content.push(
        DataBlock::new(DataSource::Base64(Base64Source {
            data: "QUJD".into(),
            media_type: "image/png".into(),
        }))
        .into(),
    );
    msgs.push(picture);
    let body = model.request_body(request(&msgs)).await.unwrap();
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "You are Friday."}]})
    );
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [
            {"text": "# Conversation History\nThe content between <history></history> tags contains your conversation history\n<history>\nuser: Hi!\nJarvis: Hello.\nAlice: See:"},
            {"inline_data": {"data": "QUJD", "mime_type": "image/png"}},
            {"text": "</history>"},
        ]}])
    );
}

#[tokio::test]
async fn the_factory_builds_a_gemini_model_from_a_gemini_credential() {
    let credential = Credential::from(GeminiCredential::new("key"));
    let config = ModelConfig::new("gemini-2.5-flash").with_parameter("thinking_enable", true);
    let model = chat_model_with(&credential, &config, &MediaPolicy::default()).unwrap();
    assert_eq!(model.model_name(), "gemini-2.5-flash");
    assert_eq!(model.context_size(), Some(1_048_576));
}
