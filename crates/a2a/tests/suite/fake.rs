//! The client against a scripted fake A2A server.

use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_a2a::{A2AAgent, A2AAgentState, CardError, Error, TaskState};
use oxiscope_message::{AgentEvent, ContentBlock, Msg, ReplyFinishedReason};
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const CARD: &str = "/.well-known/agent-card.json";

fn card(server: &FakeServer, streaming: bool) -> Value {
    json!({
        "name": "remote",
        "description": "a fake",
        "supportedInterfaces": [
            {"url": server.url("/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": streaming},
        "version": "1"
    })
}

async fn agent(streaming: bool) -> (FakeServer, A2AAgent) {
    let server = FakeServer::start().await.unwrap();
    server.push_for(CARD, ScriptedResponse::json(200, &card(&server, streaming)));
    let agent = A2AAgent::connect(&server.base_url()).await.unwrap();
    (server, agent)
}

fn frame(result: &Value) -> String {
    let envelope = json!({"jsonrpc": "2.0", "id": 1, "result": result});
    ScriptedResponse::sse_frame(None, &envelope.to_string())
}

fn task(state: &str) -> Value {
    json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": state},
        "history": [{"messageId": "u", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]}})
}

fn status(state: &str, text: Option<&str>) -> Value {
    let mut status = json!({"state": state});
    if let Some(t) = text {
        status["message"] = json!({"messageId": format!("m-{t}"), "role": "ROLE_AGENT",
            "parts": [{"text": t}]});
    }
    json!({"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": status}})
}

fn chunk(text: &str, append: bool, last: bool) -> Value {
    json!({"artifactUpdate": {"taskId": "t1", "contextId": "c1",
        "artifact": {"artifactId": "a1", "parts": [{"text": text}]},
        "append": append, "lastChunk": last}})
}

fn sse(results: &[Value]) -> ScriptedResponse {
    ScriptedResponse::sse(results.iter().map(frame).collect::<Vec<_>>())
}

fn user(text: &str) -> Msg {
    Msg::user("user", text).unwrap()
}

async fn collect(agent: &A2AAgent, text: &str) -> Vec<AgentEvent> {
    agent.reply_stream(user(text)).collect().await
}

fn end_of(events: &[AgentEvent]) -> &oxiscope_message::ReplyEndEvent {
    match events.last() {
        Some(AgentEvent::ReplyEnd(end)) => end,
        other => panic!("the last event is not REPLY_END: {other:?}"),
    }
}

fn rebuild(events: &[AgentEvent]) -> Msg {
    let AgentEvent::ReplyStart(start) = &events[0] else {
        panic!("the first event is not REPLY_START");
    };
    let mut msg = Msg::reply(start.name.clone(), start.reply_id.clone());
    for e in events {
        msg.append_event(e).unwrap();
    }
    msg
}

/// The JSON-RPC bodies the server received at `/`.
fn rpc_bodies(server: &FakeServer) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/")
        .map(|r| r.body_json().unwrap())
        .collect()
}

#[tokio::test]
async fn a_streamed_task_becomes_text_blocks_and_the_context_carries_over() {
    let (server, agent) = agent(true).await;
    assert_eq!(agent.name(), "remote");
    server.push_for(
        "/",
        sse(&[
            task("TASK_STATE_SUBMITTED"),
            status("TASK_STATE_WORKING", Some("Working...")),
            chunk("Echo: ", false, false),
            chunk("hi", true, true),
            status("TASK_STATE_COMPLETED", None),
        ]),
    );
    let events = collect(&agent, "hi").await;
    let end = end_of(&events);
    assert_eq!(end.finished_reason, ReplyFinishedReason::Completed);
    assert_eq!(end.error, None);
    assert_eq!(
        Value::Object(end.metadata.clone()),
        json!({"a2a": {"context_id": "c1", "task_id": null, "task_state": null}})
    );
    let msg = rebuild(&events);
    assert_eq!(msg.text("|"), "Working...|Echo: hi");
    let types: Vec<&str> = events.iter().map(|e| e.event_type().as_str()).collect();
    assert_eq!(
        types,
        vec![
            "REPLY_START",
            "TEXT_BLOCK_START",
            "TEXT_BLOCK_DELTA",
            "TEXT_BLOCK_END",
            "TEXT_BLOCK_START",
            "TEXT_BLOCK_DELTA",
            "TEXT_BLOCK_DELTA",
            "TEXT_BLOCK_END",
            "REPLY_END"
        ]
    );
    let request = &server.requests()[1];
    assert_eq!(request.header("a2a-version"), Some("1.0"));
    let body = request.body_json().unwrap();
    assert_eq!(body["method"], "SendStreamingMessage");
    assert_eq!(body["params"]["message"]["role"], "ROLE_USER");
    assert_eq!(body["params"]["message"]["parts"], json!([{"text": "hi"}]));
    assert_eq!(body["params"]["message"].get("contextId"), None);

    // The second reply continues the remote conversation, in a new task.
    server.push_for(
        "/",
        sse(&[json!({"message": {"messageId": "d", "contextId": "c1",
            "role": "ROLE_AGENT", "parts": [{"text": "again"}]}})]),
    );
    let reply = agent.reply(user("more")).await.unwrap();
    assert_eq!(reply.text(""), "again");
    assert_eq!(reply.finished_reason, Some(ReplyFinishedReason::Completed));
    assert_eq!(reply.metadata["a2a"]["context_id"], "c1");
    let second = &rpc_bodies(&server)[1]["params"]["message"];
    assert_eq!(second["contextId"], "c1");
    assert_eq!(second.get("taskId"), None);
    let state = agent.state().await;
    assert_eq!(state.context_id.as_deref(), Some("c1"));
    assert_eq!(state.task_id, None);
}

#[tokio::test]
async fn input_required_completes_the_reply_and_the_next_message_continues_the_task() {
    let (server, agent) = agent(true).await;
    server.push_for(
        "/",
        sse(&[
            task("TASK_STATE_SUBMITTED"),
            status("TASK_STATE_INPUT_REQUIRED", Some("Your name?")),
        ]),
    );
    let reply = agent.reply(user("hi")).await.unwrap();
    assert_eq!(reply.text(""), "Your name?");
    assert_eq!(reply.finished_reason, Some(ReplyFinishedReason::Completed));
    let state = agent.state().await;
    assert_eq!(state.task_id.as_deref(), Some("t1"));
    assert_eq!(state.task_state, Some(TaskState::InputRequired));

    // The state survives a save / load into a new agent.
    let saved = serde_json::to_string(&state).unwrap();
    let loaded: A2AAgentState = serde_json::from_str(&saved).unwrap();
    let resumed = A2AAgent::builder(agent.card().clone())
        .state(loaded)
        .build()
        .unwrap();
    server.push_for(
        "/",
        sse(&[
            chunk("Hello, Bob!", false, true),
            status("TASK_STATE_COMPLETED", None),
        ]),
    );
    let reply = resumed.reply(user("Bob")).await.unwrap();
    assert_eq!(reply.text(""), "Hello, Bob!");
    let second = &rpc_bodies(&server)[1]["params"]["message"];
    assert_eq!(second["taskId"], "t1");
    assert_eq!(second["contextId"], "c1");
    assert_eq!(resumed.state().await.task_id, None);
}

#[tokio::test]
async fn a_failed_task_ends_the_reply_with_an_error_and_keeps_its_message() {
    let (server, agent) = agent(true).await;
    server.push_for(
        "/",
        sse(&[
            task("TASK_STATE_SUBMITTED"),
            status("TASK_STATE_FAILED", Some("It broke.")),
        ]),
    );
    let events = collect(&agent, "fail").await;
    let end = end_of(&events);
    assert_eq!(end.finished_reason, ReplyFinishedReason::Error);
    let info = end.error.clone().unwrap();
    assert!(info.message.contains("It broke."), "{}", info.message);
    assert_eq!(rebuild(&events).text(""), "It broke.");
    assert_eq!(agent.state().await.task_id, None);

    server.push_for(
        "/",
        sse(&[
            task("TASK_STATE_SUBMITTED"),
            status("TASK_STATE_REJECTED", None),
        ]),
    );
    let err = agent.reply(user("again")).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::TaskFailed {
                state: TaskState::Rejected,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_cancelled_task_ends_the_reply_interrupted() {
    let (server, agent) = agent(true).await;
    server.push_for(
        "/",
        sse(&[
            task("TASK_STATE_SUBMITTED"),
            status("TASK_STATE_CANCELED", None),
        ]),
    );
    let reply = agent.reply(user("x")).await.unwrap();
    assert_eq!(
        reply.finished_reason,
        Some(ReplyFinishedReason::Interrupted)
    );
}

#[tokio::test]
async fn a_cut_stream_is_an_error_and_the_next_reply_checks_the_task_first() {
    let (server, agent) = agent(true).await;
    server.push_for(
        "/",
        sse(&[
            task("TASK_STATE_SUBMITTED"),
            status("TASK_STATE_WORKING", None),
        ]),
    );
    let err = agent.reply(user("x")).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::StreamCut {
                state: TaskState::Working,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(agent.state().await.task_state, Some(TaskState::Working));

    // Still running remotely: sending would run it twice.
    server.push_for(
        "/",
        ScriptedResponse::json(
            200,
            &json!({"jsonrpc": "2.0", "id": 2,
            "result": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}}),
        ),
    );
    let err = agent.reply(user("y")).await.unwrap_err();
    assert!(matches!(err, Error::TaskStillRunning { .. }), "{err:?}");
    assert_eq!(rpc_bodies(&server)[1]["method"], "GetTask");

    // Finished meanwhile: the message starts a new task.
    server.push_for(
        "/",
        ScriptedResponse::json(200, &json!({"jsonrpc": "2.0", "id": 3,
            "result": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}})),
    );
    server.push_for(
        "/",
        sse(&[json!({"message": {"messageId": "d", "role": "ROLE_AGENT",
            "parts": [{"text": "ok"}]}})]),
    );
    let reply = agent.reply(user("z")).await.unwrap();
    assert_eq!(reply.text(""), "ok");
    let bodies = rpc_bodies(&server);
    assert_eq!(bodies[2]["method"], "GetTask");
    assert_eq!(bodies[3]["params"]["message"].get("taskId"), None);
    // The refused reply's input was not buffered: only this reply's is sent.
    assert_eq!(
        bodies[3]["params"]["message"]["parts"],
        json!([{"text": "z"}])
    );
}

#[tokio::test]
async fn a_forgotten_task_degrades_into_a_new_task() {
    let (server, agent) = agent(true).await;
    agent
        .set_state(A2AAgentState {
            task_id: Some("gone".into()),
            task_state: Some(TaskState::InputRequired),
            ..A2AAgentState::with_context("c1")
        })
        .await;
    server.push_for(
        "/",
        ScriptedResponse::json(
            200,
            &json!({"jsonrpc": "2.0", "id": 1,
            "error": {"code": -32001, "message": "Task gone not found"}}),
        ),
    );
    server.push_for(
        "/",
        sse(&[
            task("TASK_STATE_SUBMITTED"),
            chunk("new", false, true),
            status("TASK_STATE_COMPLETED", None),
        ]),
    );
    let reply = agent.reply(user("hello")).await.unwrap();
    assert_eq!(reply.text(""), "new");
    let bodies = rpc_bodies(&server);
    assert_eq!(bodies[0]["params"]["message"]["taskId"], "gone");
    assert_eq!(bodies[1]["params"]["message"].get("taskId"), None);
    assert_eq!(bodies[1]["params"]["message"]["contextId"], "c1");
}

#[tokio::test]
async fn a_card_without_streaming_uses_send_message() {
    let (server, agent) = agent(false).await;
    server.push_for(
        "/",
        ScriptedResponse::json(
            200,
            &json!({"jsonrpc": "2.0", "id": 1, "result": {"task": {
            "id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "f", "parts": [
                {"raw": "aGk=", "mediaType": "image/png", "filename": "x.png"},
                {"url": "https://example.com/a.pdf", "mediaType": "application/pdf"}]}]}}}),
        ),
    );
    let reply = agent.reply(user("file")).await.unwrap();
    assert_eq!(rpc_bodies(&server)[0]["method"], "SendMessage");
    assert_eq!(reply.content.len(), 2);
    assert!(
        reply
            .content
            .iter()
            .all(|b| matches!(b, ContentBlock::Data(_)))
    );
}

#[tokio::test]
async fn json_rpc_errors_and_bad_payloads_are_typed_errors() {
    let (server, agent) = agent(true).await;
    server.push_for(
        "/",
        ScriptedResponse::json(
            200,
            &json!({"jsonrpc": "2.0", "id": 1,
            "error": {"code": -32009, "message": "version not supported"}}),
        ),
    );
    let events = collect(&agent, "x").await;
    assert_eq!(end_of(&events).finished_reason, ReplyFinishedReason::Error);
    assert!(matches!(events[0], AgentEvent::ReplyStart(_)));

    server.push_for(
        "/",
        ScriptedResponse::json(
            200,
            &json!({"jsonrpc": "2.0", "id": 1,
            "error": {"code": -32009, "message": "version not supported"}}),
        ),
    );
    let err = agent.reply(user("x")).await.unwrap_err();
    assert!(matches!(err, Error::Rpc { code: -32009, .. }), "{err:?}");

    server.push_for("/", ScriptedResponse::sse(["data: {not json\n\n"]));
    let err = agent.reply(user("x")).await.unwrap_err();
    assert!(matches!(err, Error::Protocol(_)), "{err:?}");

    server.push_for(
        "/",
        sse(&[json!({"message": {"messageId": "d", "role": "ROLE_AGENT",
            "parts": [{"text": "partial"}, {"data": {"k": 1}}]}})]),
    );
    let events = collect(&agent, "x").await;
    let end = end_of(&events);
    assert_eq!(end.finished_reason, ReplyFinishedReason::Error);
    assert!(
        end.error
            .as_ref()
            .unwrap()
            .message
            .contains("structured data part")
    );
    // What came before the bad part is kept, closed.
    assert_eq!(rebuild(&events).text(""), "partial");

    server.push_for("/", sse(&[]));
    let err = agent.reply(user("x")).await.unwrap_err();
    assert!(matches!(err, Error::Protocol(_)), "{err:?}");
}

#[tokio::test]
async fn bad_cards_and_bad_inputs_are_typed_errors() {
    let server = FakeServer::start().await.unwrap();
    server.push_for(
        CARD,
        ScriptedResponse::json(
            200,
            &json!({"name": "x",
        "supportedInterfaces": [{"url": "http://h", "protocolBinding": "GRPC",
        "protocolVersion": "1.0"}]}),
        ),
    );
    let err = A2AAgent::connect(&server.base_url()).await.unwrap_err();
    assert!(
        matches!(err, Error::Card(CardError::NoSupportedInterface { .. })),
        "{err:?}"
    );
    server.push_for(CARD, ScriptedResponse::text(200, "<html>"));
    let err = A2AAgent::connect(&server.base_url()).await.unwrap_err();
    assert!(
        matches!(err, Error::Card(CardError::Invalid { .. })),
        "{err:?}"
    );

    let (_server, agent) = agent(true).await;
    let err = agent.reply(None).await.unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
    let thinking = Msg::assistant(
        "a",
        vec![ContentBlock::Thinking(
            oxiscope_message::ThinkingBlock::new("hmm"),
        )],
    )
    .unwrap();
    assert!(matches!(
        agent.observe(vec![thinking]),
        Err(Error::InvalidInput(_))
    ));
}

#[tokio::test]
async fn observed_messages_are_sent_with_the_next_reply() {
    let (server, agent) = agent(true).await;
    agent.observe(vec![user("context one")]).unwrap();
    agent.compress_context().await;
    server.push_for(
        "/",
        sse(&[json!({"message": {"messageId": "d", "role": "ROLE_AGENT",
            "parts": [{"text": "ok"}]}})]),
    );
    agent.reply(user("question")).await.unwrap();
    assert_eq!(
        rpc_bodies(&server)[0]["params"]["message"]["parts"],
        json!([{"text": "context one"}, {"text": "question"}])
    );
}

#[tokio::test]
async fn interrupting_a_reply_cancels_the_remote_task() {
    let (server, agent) = agent(true).await;
    server.push_for(
        "/",
        sse(&[
            task("TASK_STATE_SUBMITTED"),
            status("TASK_STATE_WORKING", Some("Working...")),
        ])
        .with_end(BodyEnd::Stall),
    );
    server.push_for(
        "/",
        ScriptedResponse::json(
            200,
            &json!({"jsonrpc": "2.0", "id": 2,
            "result": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_CANCELED"}}}),
        ),
    );
    let mut stream = agent.reply_stream(user("slow"));
    let mut events = Vec::new();
    while let Some(e) = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap()
    {
        if matches!(e, AgentEvent::TextBlockEnd(_)) {
            stream.interrupt();
        }
        events.push(e);
    }
    let end = end_of(&events);
    assert_eq!(end.finished_reason, ReplyFinishedReason::Interrupted);
    assert_eq!(rebuild(&events).text(""), "Working...");
    let bodies = rpc_bodies(&server);
    assert_eq!(bodies[1]["method"], "CancelTask");
    assert_eq!(bodies[1]["params"]["id"], "t1");
    assert_eq!(agent.state().await.task_id, None);
}

#[tokio::test]
async fn the_agent_drives_through_the_pipeline_interface() {
    use oxiscope_agent::ReplyInput;
    use oxiscope_agent::pipeline::{CancellationToken, PipelineProtocol};

    let (server, agent) = agent(true).await;
    server.push_for(
        "/",
        sse(&[json!({"message": {"messageId": "d", "contextId": "c7",
            "role": "ROLE_AGENT", "parts": [{"text": "piped"}]}})]),
    );
    let pipe: &dyn PipelineProtocol = &agent;
    let events: Vec<AgentEvent> = pipe
        .reply_stream(ReplyInput::Msgs(vec![user("x")]), CancellationToken::new())
        .collect()
        .await;
    assert_eq!(rebuild(&events).text(""), "piped");
    assert_eq!(
        end_of(&events).finished_reason,
        ReplyFinishedReason::Completed
    );

    let interrupt = oxiscope_message::UserInterruptEvent::new("r".to_owned());
    let none: Vec<AgentEvent> = pipe
        .reply_stream(ReplyInput::Interrupt(interrupt), CancellationToken::new())
        .collect()
        .await;
    assert!(none.is_empty());

    let confirm = oxiscope_message::UserConfirmResultEvent::new("r".to_owned(), Vec::new());
    let rejected: Vec<AgentEvent> = pipe
        .reply_stream(ReplyInput::Confirm(confirm), CancellationToken::new())
        .collect()
        .await;
    assert_eq!(rejected.len(), 2);
    assert_eq!(
        end_of(&rejected).finished_reason,
        ReplyFinishedReason::Error
    );

    let saved = pipe.save_state().await;
    assert_eq!(saved["context_id"], "c7");
    pipe.load_state(json!({"context_id": "other"}))
        .await
        .unwrap();
    assert_eq!(agent.state().await.context_id.as_deref(), Some("other"));
    assert!(pipe.load_state(json!([1])).await.is_err());
    // Only the first reply reached the server.
    assert_eq!(rpc_bodies(&server).len(), 1);
}

#[tokio::test]
async fn auth_required_is_an_ordinary_reply_that_keeps_the_task() {
    let (server, agent) = agent(true).await;
    server.push_for(
        "/",
        sse(&[
            task("TASK_STATE_SUBMITTED"),
            status(
                "TASK_STATE_AUTH_REQUIRED",
                Some("Sign in at https://example.com"),
            ),
        ]),
    );
    let reply = agent.reply(user("x")).await.unwrap();
    assert_eq!(reply.finished_reason, Some(ReplyFinishedReason::Completed));
    assert_eq!(reply.text(""), "Sign in at https://example.com");
    let state = agent.state().await;
    assert_eq!(state.task_id.as_deref(), Some("t1"));
    assert_eq!(state.task_state, Some(TaskState::AuthRequired));
    assert_eq!(
        reply.metadata["a2a"]["task_state"],
        "TASK_STATE_AUTH_REQUIRED"
    );
}
