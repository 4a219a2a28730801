//! The Responses API model against a fake `/v1/responses` server replaying
//! the documented event stream, through the real HTTP client: text,
//! reasoning (summaries and encrypted content that go back in the next
//! request), tool calls split over events, usage, errors, cut streams and
//! cancellation, and the request it sends.

use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_http::{HttpClient, RetryPolicy};
use oxiscope_message::{ContentBlock, FinishedReason, Msg, TextBlock, ThinkingBlock};
use oxiscope_model::{
    ChatModel, ChatRequest, ChatResponse, Credential, ModelError, OpenAiCredential, ToolChoice,
    ToolSchema,
};
use oxiscope_providers::openai_response::{
    ENCRYPTED_CONTENT, OpenAiResponseModel, OpenAiResponseMultiAgentFormatter,
    OpenAiResponseParameters, REASONING_ITEM_ID,
};
use oxiscope_providers::{Endpoints, MediaPolicy, ModelConfig, chat_model_with};
use oxiscope_test_support::chat::{conversation, drain, request};
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const MODEL: &str = "o4-mini";

/// A recorded-style Responses API event stream.
#[derive(Debug, Clone, Default)]
pub(crate) struct Events {
    body: String,
    seq: u64,
}

impl Events {
    pub(crate) fn new() -> Self {
        Self::default().event(json!({
            "type": "response.created",
            "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []},
        }))
    }

    pub(crate) fn event(mut self, mut data: Value) -> Self {
        data["sequence_number"] = self.seq.into();
        self.seq += 1;
        let kind = data["type"].as_str().unwrap_or_default().to_owned();
        self.body
            .push_str(&ScriptedResponse::sse_frame(Some(&kind), &data.to_string()));
        self
    }

    pub(crate) fn text(self, index: u64, item: &str, parts: &[&str]) -> Self {
        let mut this = self
            .event(json!({"type": "response.output_item.added", "output_index": index,
                "item": {"id": item, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}))
            .event(json!({"type": "response.content_part.added", "item_id": item, "output_index": index,
                "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}));
        for part in parts {
            this = this.event(
                json!({"type": "response.output_text.delta", "item_id": item,
                "output_index": index, "content_index": 0, "delta": part}),
            );
        }
        let whole = parts.concat();
        this.event(
            json!({"type": "response.output_text.done", "item_id": item, "output_index": index,
                "content_index": 0, "text": whole}),
        )
        .event(
            json!({"type": "response.output_item.done", "output_index": index,
                "item": {"id": item, "type": "message", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": whole, "annotations": []}]}}),
        )
    }

    pub(crate) fn reasoning(self, index: u64, item: &str, parts: &[&str], encrypted: &str) -> Self {
        let mut this = self.event(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"id": item, "type": "reasoning", "summary": []}}),
        );
        if !parts.is_empty() {
            this = this.event(json!({"type": "response.reasoning_summary_part.added", "item_id": item,
                "output_index": index, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}));
        }
        for part in parts {
            this = this.event(
                json!({"type": "response.reasoning_summary_text.delta", "item_id": item,
                "output_index": index, "summary_index": 0, "delta": part}),
            );
        }
        let summary: Vec<Value> = if parts.is_empty() {
            Vec::new()
        } else {
            vec![json!({"type": "summary_text", "text": parts.concat()})]
        };
        this.event(json!({"type": "response.output_item.done", "output_index": index,
            "item": {"id": item, "type": "reasoning", "summary": summary, "encrypted_content": encrypted}}))
    }

    pub(crate) fn call_added(self, index: u64, item: &str, call_id: &str, name: &str) -> Self {
        self.event(json!({"type": "response.output_item.added", "output_index": index,
            "item": {"id": item, "type": "function_call", "status": "in_progress", "call_id": call_id,
                "name": name, "arguments": ""}}))
    }

    pub(crate) fn args(self, index: u64, item: &str, delta: &str) -> Self {
        self.event(
            json!({"type": "response.function_call_arguments.delta", "item_id": item,
            "output_index": index, "delta": delta}),
        )
    }

    pub(crate) fn call_done(
        self,
        index: u64,
        item: &str,
        call_id: &str,
        name: &str,
        args: &str,
    ) -> Self {
        self.event(json!({"type": "response.function_call_arguments.done", "item_id": item,
                "output_index": index, "arguments": args}))
            .event(json!({"type": "response.output_item.done", "output_index": index,
                "item": {"id": item, "type": "function_call", "status": "completed", "call_id": call_id,
                    "name": name, "arguments": args}}))
    }

    pub(crate) fn completed(self, input: u64, cached: u64, output: u64) -> Self {
        self.event(json!({"type": "response.completed", "response": {
            "id": "resp_1", "object": "response", "status": "completed",
            "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
                "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": input + output}}}))
    }

    pub(crate) fn body(&self) -> String {
        self.body.clone()
    }

    pub(crate) fn into_response(self) -> ScriptedResponse {
        ScriptedResponse::new(200)
            .with_header("content-type", "text/event-stream")
            .with_body(self.body)
    }
}

fn client(attempts: u32) -> HttpClient {
    let retry = RetryPolicy::default()
        .with_max_attempts(attempts)
        .with_base_delay(Duration::from_millis(1))
        .with_max_delay(Duration::from_millis(5));
    HttpClient::builder().with_retry(retry).build().unwrap()
}

fn model(server: &FakeServer) -> OpenAiResponseModel {
    OpenAiResponseModel::with_client(client(3), "sk-test", MODEL).with_base_url(server.url("/v1/"))
}

async fn run(model: &OpenAiResponseModel, msgs: &[Msg]) -> (Vec<ChatResponse>, Option<ModelError>) {
    let stream = model
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

fn calls(chunk: &ChatResponse) -> Vec<(String, String, String)> {
    chunk
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolCall(c) => Some((c.id.to_string(), c.name.clone(), c.input.clone())),
            _ => None,
        })
        .collect()
}

fn thinkings(chunk: &ChatResponse) -> Vec<&ThinkingBlock> {
    chunk
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Thinking(t) => Some(t),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn streamed_text_arrives_as_deltas_then_one_complete_final_chunk_with_usage() {
    let server = FakeServer::start().await.unwrap();
    let reply = Events::new()
        .event(json!({"type": "response.in_progress", "response": {"id": "resp_1"}}))
        .text(0, "msg_1", &["Hel", "lo", " there"])
        .event(json!({"type": "response.future_event", "x": 1}))
        .completed(40, 32, 7);
    server.push(reply.into_response());
    let (chunks, error) = run(&model(&server), &conversation()).await;
    assert_eq!(error, None);
    let (last, deltas) = chunks.split_last().unwrap();
    let deltas: Vec<Vec<String>> = deltas.iter().map(texts).collect();
    assert_eq!(deltas, vec![vec!["Hel"], vec!["lo"], vec![" there"]]);
    assert!(last.is_last);
    assert_eq!(last.finished_reason, FinishedReason::Completed);
    assert_eq!(texts(last), vec!["Hello there"]);
    let usage = last.usage.clone().unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.cache_input_tokens,
            usage.output_tokens
        ),
        (40, 32, 7)
    );
    let sent = &server.requests()[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/responses")
    );
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
}

#[tokio::test]
async fn reasoning_and_a_tool_call_split_over_events_round_trip_into_the_next_request() {
    let server = FakeServer::start().await.unwrap();
    let reply = Events::new()
        .reasoning(0, "rs_1", &["Need ", "the weather."], "gAAAAenc==")
        .call_added(1, "fc_1", "call_1", "get_weather")
        .args(1, "fc_1", "{\"ci")
        .args(1, "fc_1", "ty\": \"Pa")
        .args(1, "fc_1", "ris\"}")
        .call_done(1, "fc_1", "call_1", "get_weather", "{\"city\": \"Paris\"}")
        .completed(10, 0, 20);
    server.push(reply.into_response());
    server.push(
        Events::new()
            .text(0, "msg_2", &["Sunny."])
            .completed(30, 0, 2)
            .into_response(),
    );
    let model = model(&server)
        .with_parameters(OpenAiResponseParameters::default().with_reasoning_effort("low"));
    let mut msgs = conversation();
    let (chunks, error) = run(&model, &msgs).await;
    assert_eq!(error, None);
    let last = chunks.last().unwrap();
    let thinking = thinkings(last);
    assert_eq!(thinking.len(), 1);
    assert_eq!(thinking[0].thinking, "Need the weather.");
    assert_eq!(
        thinking[0].extra.get(REASONING_ITEM_ID),
        Some(&json!("rs_1"))
    );
    assert_eq!(
        thinking[0].extra.get(ENCRYPTED_CONTENT),
        Some(&json!("gAAAAenc=="))
    );
    assert_eq!(
        calls(last),
        vec![(
            "call_1".into(),
            "get_weather".into(),
            "{\"city\": \"Paris\"}".into()
        )]
    );
    // The reply goes into the conversation, with the tool's result.
    let mut content = last.content.clone();
    content.push(
        oxiscope_message::ToolResultBlock::new(
            "call_1",
            "get_weather",
            "sunny",
            oxiscope_message::ToolResultState::Success,
        )
        .into(),
    );
    msgs.push(Msg::assistant("Friday", content).unwrap());
    let (chunks, error) = run(&model, &msgs).await;
    assert_eq!(error, None);
    assert_eq!(texts(chunks.last().unwrap()), vec!["Sunny."]);
    let first = server.requests()[0].body_json().unwrap();
    assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(first["store"], json!(false));
    assert_eq!(
        first["reasoning"],
        json!({"effort": "low", "summary": "auto"})
    );
    let second = server.requests()[1].body_json().unwrap();
    assert_eq!(
        second["input"],
        json!([
            {"role": "system", "content": [{"type": "input_text", "text": "You are Friday."}]},
            {"role": "user", "content": [{"type": "input_text", "text": "Hi!"}]},
            {"type": "reasoning", "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Need the weather."}],
                "content": [], "encrypted_content": "gAAAAenc=="},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather",
                "arguments": "{\"city\": \"Paris\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        ])
    );
}

#[tokio::test]
async fn reasoning_without_a_summary_still_opens_a_thinking_block_for_its_content() {
    let server = FakeServer::start().await.unwrap();
    let reply = Events::new()
        .reasoning(0, "rs_a", &[], "enc-a")
        .call_added(1, "fc_1", "call_1", "Read")
        .args(1, "fc_1", "{}")
        .call_done(1, "fc_1", "call_1", "Read", "{}")
        .reasoning(2, "rs_b", &[], "enc-b")
        .text(3, "msg_1", &["ok"])
        .completed(1, 0, 1);
    server.push(reply.into_response());
    let (chunks, error) = run(&model(&server), &conversation()).await;
    assert_eq!(error, None);
    let last = chunks.last().unwrap();
    let kinds: Vec<&str> = last.content.iter().map(|b| b.kind().as_str()).collect();
    assert_eq!(kinds, ["thinking", "tool_call", "thinking", "text"]);
    let ids: Vec<(&Value, &Value)> = thinkings(last)
        .iter()
        .map(|t| (&t.extra[REASONING_ITEM_ID], &t.extra[ENCRYPTED_CONTENT]))
        .collect();
    assert_eq!(
        ids,
        vec![
            (&json!("rs_a"), &json!("enc-a")),
            (&json!("rs_b"), &json!("enc-b"))
        ]
    );
    // Each reasoning block appeared as a delta chunk, so an agent's reply
    // holds it and can take the encrypted content from the final chunk.
    let streamed = chunks[..chunks.len() - 1]
        .iter()
        .filter(|c| matches!(c.content[0], ContentBlock::Thinking(_)))
        .count();
    assert_eq!(streamed, 2);
}

#[tokio::test]
async fn parallel_calls_with_interleaved_fragments_accumulate_by_item() {
    let server = FakeServer::start().await.unwrap();
    let reply = Events::new()
        .call_added(0, "fc_a", "call_a", "Read")
        .call_added(1, "fc_b", "call_b", "Glob")
        .args(0, "fc_a", "{\"file_path\":")
        .args(1, "fc_b", "{\"pattern\":")
        .args(0, "fc_a", " \"a.rs\"}")
        .args(1, "fc_b", " \"*.rs\"")
        .call_done(0, "fc_a", "call_a", "Read", "{\"file_path\": \"a.rs\"}")
        .completed(1, 0, 1);
    server.push(reply.into_response());
    let (chunks, error) = run(&model(&server), &conversation()).await;
    assert_eq!(error, None);
    assert_eq!(
        calls(chunks.last().unwrap()),
        vec![
            (
                "call_a".into(),
                "Read".into(),
                "{\"file_path\": \"a.rs\"}".into()
            ),
            // Invalid JSON from the model is kept verbatim.
            (
                "call_b".into(),
                "Glob".into(),
                "{\"pattern\": \"*.rs\"".into()
            ),
        ]
    );
}

#[tokio::test]
async fn events_split_at_awkward_byte_boundaries_decode_the_same() {
    let server = FakeServer::start().await.unwrap();
    let body = Events::new()
        .text(0, "msg_1", &["h\u{e9}llo ", "w\u{f6}rld"])
        .call_added(1, "fc_1", "call_1", "Read")
        .args(1, "fc_1", "{\"a\": 1}")
        .completed(2, 0, 6)
        .body();
    server.push(
        ScriptedResponse::new(200)
            .with_header("content-type", "text/event-stream")
            .with_body_in_chunks(body, 7),
    );
    let (chunks, error) = run(&model(&server), &conversation()).await;
    assert_eq!(error, None);
    let last = chunks.last().unwrap();
    assert_eq!(texts(last), vec!["h\u{e9}llo w\u{f6}rld"]);
    assert_eq!(calls(last)[0].2, "{\"a\": 1}");
}

#[tokio::test]
async fn a_server_that_sends_only_whole_items_is_read_from_output_item_done() {
    let server = FakeServer::start().await.unwrap();
    let reply = Events::new()
        .event(json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"id": "msg_1", "type": "message", "content": [{"type": "output_text", "text": "Whole."}]}}))
        .event(json!({"type": "response.output_item.done", "output_index": 1,
            "item": {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "Read", "arguments": "{}"}}))
        .event(json!({"type": "response.incomplete", "response": {"status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"}, "usage": {"input_tokens": 3, "output_tokens": 9}}}));
    server.push(reply.into_response());
    let (chunks, error) = run(&model(&server), &conversation()).await;
    assert_eq!(error, None);
    let last = chunks.last().unwrap();
    assert_eq!(texts(last), vec!["Whole."]);
    assert_eq!(
        calls(last),
        vec![("call_1".into(), "Read".into(), "{}".into())]
    );
    assert_eq!(last.usage.as_ref().map(|u| u.output_tokens), Some(9));
}

fn error_body(status: u16, code: &str, message: &str) -> ScriptedResponse {
    ScriptedResponse::json(
        status,
        &json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": code}}),
    )
    .with_header("x-request-id", "req_42")
}

#[tokio::test]
async fn a_429_is_retried_and_without_retries_keeps_the_delay_the_server_asked_for() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        error_body(429, "rate_limit_exceeded", "slow down").with_header("retry-after-ms", "1"),
    );
    server.push(
        Events::new()
            .text(0, "m", &["fine"])
            .completed(1, 0, 1)
            .into_response(),
    );
    let (chunks, error) = run(&model(&server), &conversation()).await;
    assert_eq!(error, None);
    assert_eq!(texts(chunks.last().unwrap()), vec!["fine"]);
    assert_eq!(server.request_count(), 2);

    server
        .push(error_body(429, "rate_limit_exceeded", "slow down").with_header("retry-after", "7"));
    let once =
        OpenAiResponseModel::with_client(client(1), "k", MODEL).with_base_url(server.url("/v1"));
    let msgs = conversation();
    let Err(err) = once.call(request(&msgs), CancellationToken::new()).await else {
        panic!("the call should fail")
    };
    assert_eq!(
        err,
        ModelError::Provider {
            provider: "openai".into(),
            status: 429,
            code: Some("rate_limit_exceeded".into()),
            message: "slow down".into(),
            request_id: Some("req_42".into()),
            retry_after: Some(Duration::from_secs(7)),
        }
    );
    assert!(err.is_retryable());
}

#[tokio::test]
async fn a_400_and_a_401_are_typed_and_not_retried() {
    let server = FakeServer::start().await.unwrap();
    server.push(error_body(
        400,
        "invalid_value",
        "Encrypted content is not supported with this model.",
    ));
    server.push(ScriptedResponse::text(401, ""));
    let model = model(&server);
    let msgs = conversation();
    for (status, code, message) in [
        (
            400,
            Some("invalid_value"),
            "Encrypted content is not supported with this model.",
        ),
        (401, None, "HTTP 401 with an empty body"),
    ] {
        let Err(err) = model.call(request(&msgs), CancellationToken::new()).await else {
            panic!("the call should fail")
        };
        let ModelError::Provider {
            status: s,
            code: c,
            message: m,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!((*s, c.as_deref(), m.as_str()), (status, code, message));
        assert!(!err.is_retryable());
    }
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_stream_cut_before_response_completed_is_an_error_item_without_a_final_chunk() {
    let server = FakeServer::start().await.unwrap();
    let cut =
        Events::new()
            .call_added(0, "fc_1", "call_1", "Bash")
            .args(0, "fc_1", "{\"command\": \"l");
    server.push(cut.clone().into_response());
    server.push(cut.into_response().with_end(BodyEnd::Abort));
    for _ in 0..2 {
        let (chunks, error) = run(&model(&server), &conversation()).await;
        assert!(!chunks.is_empty());
        assert!(chunks.iter().all(|c| !c.is_last), "no final chunk");
        assert!(
            matches!(error, Some(ModelError::Stream { .. })),
            "{error:?}"
        );
    }
}

#[tokio::test]
async fn failed_responses_and_error_events_are_provider_errors_with_a_status_for_retries() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        Events::new()
            .text(0, "m", &["par"])
            .event(
                json!({"type": "response.failed", "response": {"status": "failed",
                "error": {"code": "server_error", "message": "The model failed."}}}),
            )
            .into_response(),
    );
    server.push(
        Events::new()
            .event(json!({"type": "error", "code": "rate_limit_exceeded", "message": "Too many.", "param": null}))
            .into_response(),
    );
    server.push(
        Events::new()
            .event(json!({"type": "response.output_text.delta", "item_id": "m"}))
            .into_response(),
    );
    let (chunks, error) = run(&model(&server), &conversation()).await;
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
        (500, Some("server_error"), "The model failed.")
    );
    assert!(error.is_retryable());
    let (_, error) = run(&model(&server), &conversation()).await;
    let Some(ModelError::Provider { status: 429, .. }) = error else {
        panic!("{error:?}")
    };
    let (_, error) = run(&model(&server), &conversation()).await;
    let Some(ModelError::Stream { message }) = error else {
        panic!("{error:?}")
    };
    assert!(message.contains("delta"), "{message}");
}

#[tokio::test]
async fn cancelling_ends_the_stream_with_what_arrived_marked_interrupted() {
    let server = FakeServer::start().await.unwrap();
    let stalled = Events::new()
        .event(
            json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0,
            "content_index": 0, "delta": "partial"}),
        )
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
async fn the_request_carries_tools_choice_limits_and_no_reasoning_for_a_plain_model() {
    let tools = [
        ToolSchema::function("a", "Tool a.", json!({"type": "object"})),
        ToolSchema::function("b", "", json!({"type": "object"})),
    ];
    let msgs = conversation();
    let model = OpenAiResponseModel::with_client(client(1), "k", "gpt-4.1").with_parameters(
        OpenAiResponseParameters::default()
            .with_max_tokens(512)
            .with_temperature(0.5),
    );
    let body = async |choice: ToolChoice| {
        let request = ChatRequest {
            messages: &msgs,
            tools: &tools,
            tool_choice: Some(&choice),
        };
        model.request_body(request).await.unwrap()
    };
    let mut restricted = ToolChoice::required();
    restricted.tools = Some(vec!["b".into()]);
    let sent = body(restricted).await;
    assert_eq!(
        sent,
        json!({
            "model": "gpt-4.1",
            "input": [
                {"role": "system", "content": [{"type": "input_text", "text": "You are Friday."}]},
                {"role": "user", "content": [{"type": "input_text", "text": "Hi!"}]},
            ],
            "tools": [
                {"type": "function", "name": "a", "description": "Tool a.", "parameters": {"type": "object"}},
                {"type": "function", "name": "b", "description": "", "parameters": {"type": "object"}},
            ],
            "tool_choice": {"type": "allowed_tools", "mode": "required",
                "tools": [{"type": "function", "name": "b"}]},
            "max_output_tokens": 512,
            "temperature": 0.5,
            "store": false,
            "stream": true,
        })
    );
    assert_eq!(
        body(ToolChoice::tool("a")).await["tool_choice"],
        json!({"type": "function", "name": "a"})
    );
    assert_eq!(body(ToolChoice::none()).await["tool_choice"], json!("none"));
}

#[tokio::test]
async fn reasoning_items_kept_with_only_an_id_are_sent_only_when_responses_are_stored() {
    let mut thinking = ThinkingBlock::new("");
    thinking
        .extra
        .insert(REASONING_ITEM_ID.into(), "rs_old".into());
    let mut msgs = conversation();
    msgs.push(
        Msg::assistant(
            "Friday",
            vec![thinking.into(), TextBlock::new("Hi.").into()],
        )
        .unwrap(),
    );
    let stateless =
        OpenAiResponseModel::with_client(client(1), "k", MODEL).with_instructions("Be brief.");
    let body = stateless.request_body(request(&msgs)).await.unwrap();
    assert_eq!(body["instructions"], "Be brief.");
    assert!(
        body["input"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["type"] != "reasoning"),
        "{body}"
    );
    assert_eq!(body.get("include"), None);
    let stored = stateless.with_store(true).with_encrypted_reasoning(true);
    let body = stored.request_body(request(&msgs)).await.unwrap();
    assert_eq!(
        body["input"][2],
        json!({"type": "reasoning", "id": "rs_old", "summary": [], "content": []})
    );
    assert_eq!(body["store"], true);
    assert_eq!(
        body.get("include"),
        None,
        "stored responses need no encrypted copy"
    );
}

#[tokio::test]
async fn a_whole_reply_is_parsed_when_streaming_is_off() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(200, &json!({
        "id": "resp_9", "object": "response", "status": "completed",
        "output": [
            {"id": "rs_9", "type": "reasoning", "summary": [{"type": "summary_text", "text": "hmm"}],
                "encrypted_content": "enc9"},
            {"id": "msg_9", "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Calling.", "annotations": []}]},
            {"id": "fc_9", "type": "function_call", "call_id": "call_9", "name": "Read",
                "arguments": "{\"file_path\":\"a.rs\"}"},
        ],
        "usage": {"input_tokens": 8, "input_tokens_details": {"cached_tokens": 2}, "output_tokens": 5},
    })));
    let model = model(&server).with_stream(false);
    let (chunks, error) = run(&model, &conversation()).await;
    assert_eq!(error, None);
    let last = chunks.last().unwrap();
    assert_eq!(thinkings(last)[0].thinking, "hmm");
    assert_eq!(thinkings(last)[0].extra[ENCRYPTED_CONTENT], "enc9");
    assert_eq!(texts(last), vec!["Calling."]);
    assert_eq!(
        calls(last),
        vec![(
            "call_9".into(),
            "Read".into(),
            "{\"file_path\":\"a.rs\"}".into()
        )]
    );
    assert_eq!(
        last.usage
            .as_ref()
            .map(|u| (u.input_tokens, u.cache_input_tokens)),
        Some((8, 2))
    );
    assert_eq!(server.requests()[0].body_json().unwrap()["stream"], false);
}

#[tokio::test]
async fn the_factory_model_uses_the_credential_and_the_multi_agent_formatter_works_on_it() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        Events::new()
            .text(0, "m", &["ok"])
            .completed(1, 0, 1)
            .into_response(),
    );
    let mut credential = OpenAiCredential::new("sk-cred").with_base_url(server.url("/v1"));
    credential.organization = Some("org-1".into());
    let credential = Credential::from(credential);
    let model = OpenAiResponseModel::from_credential_on(client(1), &credential, MODEL)
        .unwrap()
        .with_formatter(OpenAiResponseMultiAgentFormatter::new());
    let (chunks, error) = run(&model, &conversation()).await;
    assert_eq!(error, None);
    assert_eq!(texts(chunks.last().unwrap()), vec!["ok"]);
    let sent = &server.requests()[0];
    assert_eq!(sent.header("authorization"), Some("Bearer sk-cred"));
    assert_eq!(sent.header("openai-organization"), Some("org-1"));
    assert_eq!(
        sent.body_json().unwrap()["input"][0],
        json!({"role": "system", "content": "You are Friday."})
    );

    // A public-only service refuses the loopback endpoint before sending.
    let config = ModelConfig::new(MODEL).with_model_class("openai_response");
    let policy = MediaPolicy::default().with_endpoints(Endpoints::PublicOnly);
    let guarded = chat_model_with(&credential, &config, &policy).unwrap();
    let msgs = conversation();
    let result = guarded
        .call_boxed(request(&msgs), CancellationToken::new())
        .await;
    let Err(ModelError::InvalidRequest { message }) = result else {
        panic!("expected a refused endpoint")
    };
    assert!(message.contains("public"), "{message}");
    assert_eq!(
        server.request_count(),
        1,
        "nothing sent to the refused endpoint"
    );
}
