//! The client against a real A2A server: `tests/server/a2a_echo_server.py`
//! on the official `a2a-sdk` Python package. The interpreter comes from
//! `OXISCOPE_TEST_A2A_PYTHON` (a virtualenv with the SDK, see `.ci/run`);
//! without it the tests skip loudly (and fail under `CI=true`).

use std::process::Stdio;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_a2a::{A2AAgent, Error, TaskState};
use oxiscope_message::{AgentEvent, ContentBlock, Msg, ReplyFinishedReason};
use pretty_assertions::assert_eq;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/server/a2a_echo_server.py"
);

/// A running server; killed when dropped.
struct RealServer {
    _child: Child,
    base_url: String,
}

async fn start(args: &[&str]) -> Option<RealServer> {
    let Some(python) = std::env::var_os("OXISCOPE_TEST_A2A_PYTHON") else {
        oxiscope_test_support::skip(
            "OXISCOPE_TEST_A2A_PYTHON is not set (a Python with a2a-sdk[http-server] and uvicorn)",
        );
        return None;
    };
    let mut child = Command::new(python)
        .arg(SCRIPT)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start the A2A test server");
    let stdout = child.stdout.take().expect("the server's stdout");
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("the A2A test server did not start within 60 s")
        .expect("read the server's stdout")
        .expect("the A2A test server exited before printing its port");
    let port = line
        .strip_prefix("PORT ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let base_url = format!("http://127.0.0.1:{port}");
    // uvicorn starts listening right after the port is printed.
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap()))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Some(RealServer {
        _child: child,
        base_url,
    })
}

fn user(text: &str) -> Msg {
    Msg::user("user", text).unwrap()
}

fn texts(msg: &Msg) -> Vec<String> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn real_server_streams_an_echo_and_keeps_the_conversation() {
    let Some(server) = start(&[]).await else {
        return;
    };
    let agent = A2AAgent::connect(&server.base_url).await.unwrap();
    assert_eq!(agent.name(), "echo");
    assert!(agent.card().streams());

    let events: Vec<AgentEvent> = agent.reply_stream(user("hello world")).collect().await;
    let AgentEvent::ReplyStart(start) = &events[0] else {
        panic!("no REPLY_START first");
    };
    let mut rebuilt = Msg::reply(start.name.clone(), start.reply_id.clone());
    for e in &events {
        rebuilt.append_event(e).unwrap();
    }
    assert_eq!(texts(&rebuilt), vec!["Working...", "Echo: hello world"]);
    let deltas = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::TextBlockDelta(_)))
        .count();
    assert_eq!(
        deltas, 4,
        "the echo streams in three chunks after the status"
    );
    let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
        panic!("no REPLY_END last");
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Completed);
    let context = agent.state().await.context_id.expect("a context id");
    assert_eq!(end.metadata["a2a"]["context_id"], context.as_str());
    let artifact_end = events.iter().rev().find_map(|e| match e {
        AgentEvent::TextBlockEnd(end) => Some(end.metadata["a2a"].clone()),
        _ => None,
    });
    assert_eq!(artifact_end.unwrap()["artifact_id"], "echo");

    let reply = agent.reply(user("direct please")).await.unwrap();
    assert_eq!(reply.text(""), "Direct: direct please");
    assert_eq!(reply.metadata["a2a"]["context_id"], context.as_str());
    let state = agent.state().await;
    assert_eq!(state.context_id.as_deref(), Some(context.as_str()));
    assert_eq!(state.task_id, None);
}

#[tokio::test]
async fn real_server_input_required_is_answered_by_the_next_reply() {
    let Some(server) = start(&[]).await else {
        return;
    };
    let agent = A2AAgent::connect(&server.base_url).await.unwrap();
    let reply = agent.reply(user("ask me")).await.unwrap();
    assert_eq!(texts(&reply), vec!["Working...", "What is your name?"]);
    assert_eq!(reply.finished_reason, Some(ReplyFinishedReason::Completed));
    let state = agent.state().await;
    assert!(state.task_id.is_some());
    assert_eq!(state.task_state, Some(TaskState::InputRequired));

    let reply = agent.reply(user("Bob")).await.unwrap();
    assert_eq!(reply.text(""), "Hello, Bob!");
    assert_eq!(agent.state().await.task_id, None);
}

#[tokio::test]
async fn real_server_failures_files_and_cancellation() {
    let Some(server) = start(&[]).await else {
        return;
    };
    let agent = A2AAgent::connect(&server.base_url).await.unwrap();

    let err = agent.reply(user("fail now")).await.unwrap_err();
    match err {
        Error::TaskFailed { state, message, .. } => {
            assert_eq!(state, TaskState::Failed);
            assert_eq!(message.as_deref(), Some("It broke."));
        }
        other => panic!("unexpected {other:?}"),
    }

    let reply = agent.reply(user("file")).await.unwrap();
    let data: Vec<(String, Option<String>)> = reply
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Data(d) => Some((d.source.media_type().to_owned(), d.name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        data,
        vec![
            ("image/png".to_owned(), Some("dot.png".to_owned())),
            ("application/pdf".to_owned(), None)
        ]
    );

    let mut stream = agent.reply_stream(user("slow"));
    let mut last = None;
    while let Some(e) = tokio::time::timeout(Duration::from_secs(30), stream.next())
        .await
        .expect("the slow reply stalled")
    {
        if matches!(e, AgentEvent::TextBlockEnd(_)) {
            stream.interrupt();
        }
        last = Some(e);
    }
    let Some(AgentEvent::ReplyEnd(end)) = last else {
        panic!("no REPLY_END");
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Interrupted);
    assert_eq!(agent.state().await.task_id, None);
}

#[tokio::test]
async fn real_server_without_streaming_answers_through_send_message() {
    let Some(server) = start(&["--no-streaming"]).await else {
        return;
    };
    let agent = A2AAgent::connect(&server.base_url).await.unwrap();
    assert!(!agent.card().streams());
    let reply = agent.reply(user("hello")).await.unwrap();
    assert_eq!(texts(&reply), vec!["Echo: hello"]);
    assert_eq!(reply.finished_reason, Some(ReplyFinishedReason::Completed));
}
