//! Chat runs end to end: stream, stored messages, replay, conflicts,
//! interruption while streaming.

use std::time::Duration;

use oxiscope_test_support::OpenAiScript;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{Harness, text_answer, types};

pub(crate) fn user_msg(text: &str) -> Value {
    json!({"name": "user", "role": "user", "content": [{"type": "text", "text": text}]})
}

#[tokio::test]
async fn a_chat_streams_events_and_stores_messages() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    h.fake.push(text_answer("Héllo ✓"));
    let mut sse = h.subscribe("u", &s, None).await;

    let (code, started) = h.chat("u", &s, user_msg("Hi")).await;
    assert_eq!(code, 200, "{started}");
    assert_eq!(
        started,
        json!({"status": "started", "session_id": s.session_id})
    );

    let events = sse.until("REPLY_END").await;
    let kinds = types(&events);
    assert_eq!(kinds.first(), Some(&"REPLY_START"));
    assert!(kinds.contains(&"TEXT_BLOCK_DELTA"), "{kinds:?}");
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    // Frames are written like Python's json.dumps: spaced separators,
    // non-ASCII as is.
    let delta = sse
        .raw
        .iter()
        .find(|r| r.contains("TEXT_BLOCK_DELTA"))
        .unwrap();
    assert!(delta.starts_with("{\"id\": \""), "{delta}");
    assert!(delta.contains("\"type\": \"TEXT_BLOCK_DELTA\""), "{delta}");
    assert!(sse.raw.iter().any(|r| r.contains("Héllo ✓")));

    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    let page = h.messages("u", &s).await;
    assert_eq!(page["is_running"], false);
    assert_eq!(page["has_more"], false);
    let msgs = page["messages"].as_array().unwrap();
    // Oldest first, as AgentScope's UI draws the array.
    assert_eq!(msgs.len(), 2, "{page}");
    assert_eq!(msgs[0]["role"], "user");
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(msgs[1]["id"], events[0]["reply_id"]);
    assert_eq!(msgs[1]["finished_reason"], "completed");
    assert!(msgs[1].to_string().contains("Héllo ✓"));
    assert!(page["event_cursor"].is_string());

    // The model got the real key and the user's text.
    let request = &h.fake.requests()[0];
    assert_eq!(
        request.header("authorization"),
        Some("Bearer sk-test-secret")
    );
    assert!(request.body_text().contains("Hi"));

    // Paging backwards: one at a time, the newest page first.
    let (_, first) = h
        .get(
            &format!(
                "/sessions/{}/messages?agent_id={}&limit=1",
                s.session_id, s.agent_id
            ),
            "u",
        )
        .await;
    assert_eq!(first["has_more"], true);
    let newest = first["messages"][0]["id"].as_str().unwrap();
    let (_, older) = h
        .get(
            &format!(
                "/sessions/{}/messages?agent_id={}&limit=1&before={newest}",
                s.session_id, s.agent_id
            ),
            "u",
        )
        .await;
    assert_eq!(older["messages"][0]["role"], "user");
    assert_eq!(older["has_more"], false);
}

#[tokio::test]
async fn a_late_subscriber_gets_the_replay_and_one_connection_carries_later_runs() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    h.fake.push(text_answer("first"));
    h.chat("u", &s, user_msg("one")).await;
    h.wait_not_running("u", &s).await;

    // Subscribing after the run: the reply is in the stored messages, so
    // only its end is replayed (a reloaded page does not draw it twice).
    let mut late = h.subscribe("u", &s, None).await;
    let replay = late.until("REPLY_END").await;
    assert_eq!(types(&replay), ["REPLY_END"]);
    // Then the session's new name, after its first completed reply.
    let renamed = late.until("CUSTOM").await;
    assert_eq!(renamed[0]["name"], "session_updated");

    // A subscriber behind the cursor of the messages page gets nothing old.
    let page = h.messages("u", &s).await;
    let cursor = page["event_cursor"].as_str().unwrap().to_owned();
    let mut behind = h.subscribe("u", &s, Some(&cursor)).await;

    h.fake.push(text_answer("second"));
    h.chat("u", &s, user_msg("two")).await;
    let next_late = late.until("REPLY_END").await;
    let next_behind = behind.until("REPLY_END").await;
    assert_eq!(types(&next_late)[0], "REPLY_START");
    assert_eq!(next_late, next_behind);
    assert_ne!(next_late[0]["reply_id"], replay[0]["reply_id"]);
    assert!(late.raw.iter().any(|r| r.contains("second")));

    let (code, body) = h
        .get(
            &format!(
                "/sessions/{}/stream?agent_id={}&after=garbage",
                s.session_id, s.agent_id
            ),
            "u",
        )
        .await;
    assert_eq!(code, 422, "{body}");
}

fn slow_answer() -> oxiscope_test_support::ScriptedResponse {
    let mut script = OpenAiScript::new();
    for i in 0..40 {
        script = script.text(format!("w{i} "));
    }
    script
        .finish("stop")
        .usage(5, 40, 0)
        .response_paced(3, Duration::from_millis(100))
}

#[tokio::test]
async fn a_second_chat_while_running_is_a_conflict_and_interrupt_stops_the_stream() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    h.fake.push(slow_answer());
    let mut sse = h.subscribe("u", &s, None).await;
    h.chat("u", &s, user_msg("long story")).await;
    // Wait for the first text delta: the model is streaming.
    loop {
        if sse.next().await["type"] == "TEXT_BLOCK_DELTA" {
            break;
        }
    }
    assert_eq!(h.status("u", &s).await, "running");
    let (code, body) = h.chat("u", &s, user_msg("again")).await;
    assert_eq!(code, 409);
    assert_eq!(
        body,
        json!({"detail": "A chat run is already active for this session."})
    );

    let (code, body) = h
        .post(
            &format!(
                "/sessions/{}/interrupt?agent_id={}",
                s.session_id, s.agent_id
            ),
            "u",
            Value::Null,
        )
        .await;
    assert_eq!(code, 202);
    assert_eq!(body, json!({"session_id": s.session_id}));
    let rest = sse.until("REPLY_END").await;
    assert_eq!(rest.last().unwrap()["finished_reason"], "interrupted");
    assert_eq!(h.wait_not_running("u", &s).await, "idle");

    // The interrupted reply is stored, and the next chat works.
    let page = h.messages("u", &s).await;
    let msgs = page["messages"].as_array().unwrap();
    assert_eq!(msgs.last().unwrap()["finished_reason"], "interrupted");
    h.fake.push(text_answer("ok"));
    let (code, _) = h.chat("u", &s, user_msg("short")).await;
    assert_eq!(code, 200);
    let events = sse.until("REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
}

#[tokio::test]
async fn many_subscribers_see_the_same_events() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let mut subs = Vec::new();
    for _ in 0..5 {
        subs.push(h.subscribe("u", &s, None).await);
    }
    h.fake.push(text_answer("fan out"));
    h.chat("u", &s, user_msg("hi")).await;
    let mut seen = Vec::new();
    for sub in &mut subs {
        seen.push(sub.until("REPLY_END").await);
    }
    for other in &seen[1..] {
        assert_eq!(other, &seen[0]);
    }
}

#[tokio::test]
async fn a_chat_without_a_model_config_is_a_client_error() {
    let h = Harness::start().await;
    let (_, agent) = h.post("/agent/", "u", json!({"name": "A"})).await;
    let agent_id = agent["agent_id"].as_str().unwrap();
    let (_, session) = h
        .post("/sessions/", "u", json!({"agent_id": agent_id}))
        .await;
    let (code, body) = h
        .post(
            "/chat/",
            "u",
            json!({"agent_id": agent_id, "session_id": session["session_id"], "input": user_msg("hi")}),
        )
        .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body,
        json!({"detail": "The session has no chat model configured."})
    );
    // The failed start left no lock behind.
    let (_, status) = h
        .get(
            &format!(
                "/sessions/{}/status?agent_id={agent_id}",
                session["session_id"].as_str().unwrap()
            ),
            "u",
        )
        .await;
    assert_eq!(status["status"], "idle");
}

#[tokio::test]
async fn an_idle_stream_sends_comment_heartbeats_and_still_carries_events() {
    let h = Harness::start_config(
        oxiscope_server::AuthMode::DevHeader,
        Duration::from_millis(20),
    )
    .await;
    let s = h.setup("u").await;
    let mut sse = h.subscribe("u", &s, None).await;
    sse.wait_heartbeats(2).await;
    h.fake.push(text_answer("still here"));
    h.chat("u", &s, user_msg("ping")).await;
    let events = sse.until("REPLY_END").await;
    assert_eq!(types(&events)[0], "REPLY_START");
}
