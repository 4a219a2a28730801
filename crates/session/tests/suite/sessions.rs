//! `Sessions` end to end, without HTTP: submit, park on a confirmation,
//! resume, interrupt, queue, and take over a run whose runner died.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use oxiscope_session::api::SessionStatus;
use oxiscope_session::{SessionError, Submitted};
use oxiscope_test_support::{OpenAiScript, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::world::{World, text_answer, types, user_msg};

/// The model asks to write `note.txt` in the workspace (a write asks for
/// confirmation in the default mode).
fn write_call(w: &World) -> ScriptedResponse {
    let path = w
        .engine
        .workspaces()
        .dir("u", &w.agent_id)
        .unwrap()
        .join("note.txt");
    let args = json!({"file_path": path, "content": "written by the agent"}).to_string();
    OpenAiScript::new()
        .tool_call(0, "call_1", "Write")
        .tool_args(0, args)
        .finish("tool_calls")
        .usage(10, 5, 0)
        .response()
}

/// Parks the session on the confirmation of [`write_call`]; the ask.
async fn park(w: &World, events: &mut super::world::Events) -> Value {
    w.fake.push(write_call(w));
    let submitted = w
        .engine
        .sessions()
        .submit(w.key(), Some(user_msg("write a note")), None)
        .await
        .unwrap();
    assert_eq!(submitted, Submitted::Started);
    let got = events.until("REQUIRE_USER_CONFIRM").await;
    assert_eq!(types(&got)[0], "REPLY_START");
    assert_eq!(w.settled().await, SessionStatus::AwaitingPermission);
    got.last().unwrap().clone()
}

fn confirm(ask: &Value, confirmed: bool) -> Value {
    json!({
        "type": "USER_CONFIRM_RESULT",
        "reply_id": ask["reply_id"],
        "confirm_results": [{"confirmed": confirmed, "tool_call": ask["tool_calls"][0]}],
    })
}

#[tokio::test]
async fn a_message_runs_to_its_end_and_the_session_is_idle_again() {
    let w = World::new().await;
    let mut events = w.subscribe().await;
    w.fake.push(text_answer("Hello there."));
    let submitted = w
        .engine
        .sessions()
        .submit(w.key(), Some(user_msg("hi")), None)
        .await
        .unwrap();
    assert_eq!(submitted, Submitted::Started);
    let got = events.until("REPLY_END").await;
    let kinds = types(&got);
    assert_eq!(kinds[0], "REPLY_START");
    assert!(kinds.contains(&"TEXT_BLOCK_DELTA"), "{got:?}");
    assert_eq!(got.last().unwrap()["finished_reason"], "completed");
    assert_eq!(w.settled().await, SessionStatus::Idle);
}

#[tokio::test]
async fn a_confirmation_resumes_the_parked_reply() {
    let w = World::new().await;
    let mut events = w.subscribe().await;
    let ask = park(&w, &mut events).await;
    let sessions = w.engine.sessions();

    // An answer naming another reply, and an external result while a
    // confirmation is awaited, are refused as data and change nothing.
    let wrong = json!({"type": "USER_CONFIRM_RESULT", "reply_id": "other", "confirm_results": []});
    let e = sessions
        .submit(w.key(), Some(wrong), None)
        .await
        .unwrap_err();
    assert!(matches!(e, SessionError::Invalid(_)), "{e:?}");
    let external = json!({"type": "EXTERNAL_EXECUTION_RESULT", "reply_id": ask["reply_id"],
                          "execution_results": []});
    let e = sessions
        .submit(w.key(), Some(external), None)
        .await
        .unwrap_err();
    assert!(matches!(e, SessionError::Conflict(_)), "{e:?}");
    assert_eq!(w.status().await, SessionStatus::AwaitingPermission);

    w.fake.push(text_answer("The note is written."));
    let submitted = sessions
        .submit(w.key(), Some(confirm(&ask, true)), None)
        .await
        .unwrap();
    assert_eq!(submitted, Submitted::Started);
    let got = events.until("REPLY_END").await;
    let kinds = types(&got);
    assert_eq!(kinds[..2], ["USER_CONFIRM_RESULT", "REPLY_START"]);
    assert!(kinds.contains(&"TOOL_RESULT_END"), "{kinds:?}");
    assert_eq!(got.last().unwrap()["finished_reason"], "completed");
    assert_eq!(w.settled().await, SessionStatus::Idle);
    let note = w
        .engine
        .workspaces()
        .dir("u", &w.agent_id)
        .unwrap()
        .join("note.txt");
    assert_eq!(
        std::fs::read_to_string(note).unwrap(),
        "written by the agent"
    );

    // Nothing is parked any more.
    let e = sessions
        .submit(w.key(), Some(confirm(&ask, true)), None)
        .await
        .unwrap_err();
    assert!(matches!(e, SessionError::Conflict(_)), "{e:?}");
}

#[tokio::test]
async fn interrupting_a_parked_reply_closes_it_and_an_idle_one_is_a_no_op() {
    let w = World::new().await;
    let mut events = w.subscribe().await;
    let ask = park(&w, &mut events).await;
    w.engine.sessions().interrupt(w.key()).await.unwrap();
    let got = events.until("REPLY_END").await;
    let end = got.last().unwrap();
    assert_eq!(end["reply_id"], ask["reply_id"]);
    assert_eq!(end["finished_reason"], "interrupted");
    assert_eq!(w.settled().await, SessionStatus::Idle);
    let note = w
        .engine
        .workspaces()
        .dir("u", &w.agent_id)
        .unwrap()
        .join("note.txt");
    assert!(!note.exists());
    w.engine.sessions().interrupt(w.key()).await.unwrap();
    assert_eq!(w.status().await, SessionStatus::Idle);
}

#[tokio::test]
async fn while_a_run_is_active_messages_are_refused_and_an_answer_is_queued() {
    let w = World::new().await;
    let mut events = w.subscribe().await;
    let ask = park(&w, &mut events).await;
    let sessions = w.engine.sessions();
    // The resumed reply streams slowly, so the session stays busy.
    w.fake.push(
        OpenAiScript::new()
            .text("one ")
            .text("two ")
            .text("three")
            .finish("stop")
            .usage(10, 5, 0)
            .response_paced(1, Duration::from_millis(300)),
    );
    sessions
        .submit(w.key(), Some(confirm(&ask, false)), None)
        .await
        .unwrap();
    events.until("REPLY_START").await;
    assert_eq!(w.status().await, SessionStatus::Running);
    let e = sessions
        .submit(w.key(), Some(user_msg("are you there?")), None)
        .await
        .unwrap_err();
    assert!(matches!(e, SessionError::Conflict(_)), "{e:?}");
    // An answer to a parked reply waits for the run instead; this one is
    // stale by the time the run ends, and is dropped then.
    let queued = sessions
        .submit(w.key(), Some(confirm(&ask, true)), None)
        .await
        .unwrap();
    assert_eq!(queued, Submitted::Queued);
    let got = events.until("REPLY_END").await;
    assert_eq!(got.last().unwrap()["finished_reason"], "completed");
    assert_eq!(w.settled().await, SessionStatus::Idle);
}

#[tokio::test]
async fn another_users_session_is_not_found() {
    let w = World::new().await;
    let sessions = w.engine.sessions();
    let e = sessions
        .submit(w.key_of("mallory"), Some(user_msg("hi")), None)
        .await
        .unwrap_err();
    assert!(matches!(e, SessionError::NotFound(_)), "{e:?}");
    let e = sessions.interrupt(w.key_of("mallory")).await.unwrap_err();
    assert!(matches!(e, SessionError::NotFound(_)), "{e:?}");
    assert!(matches!(
        sessions.subscribe(w.key_of("mallory"), None).await,
        Err(SessionError::NotFound(_))
    ));
    // A broken input is a typed refusal naming the field.
    let e = sessions
        .submit(w.key(), Some(json!({"type": "NOT_AN_EVENT"})), None)
        .await
        .unwrap_err();
    let SessionError::Fields(items) = e else {
        panic!("{e:?}")
    };
    assert_eq!(items[0]["loc"], json!(["body", "input"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_runner_died_is_ended_by_another_replica_which_then_serves_the_session() {
    let w = World::with(|mut c| {
        c.lock_ttl = Duration::from_millis(300);
        c
    })
    .await;
    let mut events = w.subscribe().await;
    w.fake.push(
        OpenAiScript::new()
            .text("a ")
            .text("b ")
            .text("c")
            .finish("stop")
            .usage(10, 5, 0)
            .response_paced(1, Duration::from_secs(5)),
    );
    w.engine
        .sessions()
        .submit(w.key(), Some(user_msg("a long answer, please")), None)
        .await
        .unwrap();
    events.until("REPLY_START").await;
    // The runner dies mid-reply: its task stops and its lease is not
    // renewed.
    let task = w
        .engine
        .runs()
        .get_mut(&w.session_id)
        .and_then(|run| run.task.take())
        .unwrap();
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());

    // Another replica over the same store and bus finds the run, once its
    // lease expired, and ends its reply with an error.
    let other = oxiscope_session::Engine::new(
        w.storage.clone(),
        w.bus.clone(),
        oxiscope_session::Sealer::from_key(&[9; 32]),
        w.engine.config().clone(),
    );
    let mut swept = 0;
    for _ in 0..100 {
        swept = oxiscope_session::takeover::sweep(&other).await.unwrap();
        if swept > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(swept, 1);
    let got = events.until("REPLY_END").await;
    assert_eq!(got.last().unwrap()["finished_reason"], "error");

    // The session is usable again, from the other replica.
    w.fake.push(text_answer("Back again."));
    let submitted = other
        .sessions()
        .submit(w.key(), Some(user_msg("hello?")), None)
        .await
        .unwrap();
    assert_eq!(submitted, Submitted::Started);
    let got = events.until("REPLY_END").await;
    assert_eq!(got.last().unwrap()["finished_reason"], "completed");
}
