#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use pretty_assertions::assert_eq;

use super::*;

fn call(id: &str, tool: &str) -> ToolCallRecord {
    ToolCallRecord::start("s", "r", id, tool)
}

#[test]
fn the_end_names_the_calls_in_doubt_and_says_the_reply_can_be_retried() {
    assert_eq!(end_message(&[]), STOPPED_MESSAGE);
    let message = end_message(&[call("c1", "Bash"), call("c2", "Write")]);
    assert!(message.starts_with(STOPPED_MESSAGE), "{message}");
    assert!(
        message.contains(
            "may or may not have run (check before running them again): \
             Bash (c1), Write (c2)."
        ),
        "{message}"
    );
}

#[test]
fn open_run_records_round_trip_and_foreign_ones_are_refused() {
    let info = OpenRunInfo::new("u", "r");
    assert_eq!(OpenRunInfo::from_value(&info.to_value()), Some(info));
    assert_eq!(OpenRunInfo::from_value(&json!({"reply_id": "r"})), None);
}

use crate::testing::service;

/// Every payload in the session's log.
async fn log(state: &Engine, session_id: &str) -> Vec<Value> {
    let Some(last) = state.bus().last_cursor(session_id).await.unwrap() else {
        return Vec::new();
    };
    let mut events = state
        .bus()
        .subscribe(
            session_id,
            Some(Cursor {
                run: last.run,
                seq: 0,
            }),
        )
        .await
        .unwrap();
    let mut out = Vec::new();
    for _ in 0..last.seq {
        let event = events.next().await.unwrap();
        out.push(serde_json::from_str(&event.payload).unwrap());
    }
    out
}

/// A run that started a reply and whose runner died: its lease ran out.
async fn orphan(state: &Engine, session: &SessionRecord, events: &[Value]) {
    let bus = state.bus();
    bus.try_lock(&session.id, Duration::ZERO)
        .await
        .unwrap()
        .unwrap();
    bus.begin_run(&session.id).await.unwrap();
    for event in events {
        bus.publish(&session.id, event.to_string().into(), 100)
            .await
            .unwrap();
    }
    bus.open_run(&session.id, OpenRunInfo::new("u", "r1").to_value())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_orphaned_reply_gets_one_error_end_and_the_session_is_freed_and_fenced() {
    let dir = tempfile::tempdir().unwrap();
    let (state, session) = service(dir.path()).await;
    let start = json!({"type": "REPLY_START", "reply_id": "r1", "session_id": session.id});
    orphan(&state, &session, std::slice::from_ref(&start)).await;
    let started = ToolCallRecord::start(&session.id, "r1", "c1", "Bash");
    state.storage().start_tool_call(&started).await.unwrap();

    assert_eq!(sweep(&state).await.unwrap(), 1);
    let events = log(&state, &session.id).await;
    assert_eq!(events.len(), 2, "{events:?}");
    let end = &events[1];
    assert_eq!(end["type"], "REPLY_END");
    assert_eq!(end["reply_id"], "r1");
    assert_eq!(end["finished_reason"], "error");
    assert!(
        end["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Bash (c1)"),
        "{end}"
    );
    assert!(state.bus().open_runs().await.unwrap().is_empty());
    assert!(!state.bus().is_locked(&session.id).await.unwrap());
    // Fenced: a commit from the dead runner's revision is refused.
    let stored = state
        .storage()
        .get_session("u", &session.id)
        .await
        .unwrap()
        .unwrap();
    assert!(stored.revision > session.revision);
    let stale = state
        .storage()
        .commit_reply(&session.id, session.revision, &json!({}), &[])
        .await;
    assert!(
        matches!(stale, Err(StorageError::StaleRevision { .. })),
        "{stale:?}"
    );
    // A second sweep finds nothing.
    assert_eq!(sweep(&state).await.unwrap(), 0);
    assert_eq!(log(&state, &session.id).await.len(), 2);
}

#[tokio::test]
async fn a_reply_whose_end_was_published_is_not_ended_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (state, session) = service(dir.path()).await;
    let events = [
        json!({"type": "REPLY_START", "reply_id": "r1", "session_id": session.id}),
        json!({"type": "REPLY_END", "reply_id": "r1", "session_id": session.id, "finished_reason": "completed"}),
    ];
    orphan(&state, &session, &events).await;

    assert_eq!(sweep(&state).await.unwrap(), 0);
    assert_eq!(log(&state, &session.id).await, events);
    assert!(state.bus().open_runs().await.unwrap().is_empty());
    assert!(!state.bus().is_locked(&session.id).await.unwrap());
}

#[tokio::test]
async fn a_running_reply_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (state, session) = service(dir.path()).await;
    let lease = state
        .bus()
        .try_lock(&session.id, Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    state
        .bus()
        .open_run(&session.id, OpenRunInfo::new("u", "r1").to_value())
        .await
        .unwrap();
    assert_eq!(sweep(&state).await.unwrap(), 0);
    assert_eq!(state.bus().open_runs().await.unwrap().len(), 1);
    assert!(
        state
            .bus()
            .renew(&lease, Duration::from_secs(60))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn an_open_run_record_naming_another_user_writes_nothing_to_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let (state, session) = service(dir.path()).await;
    let start = json!({"type": "REPLY_START", "reply_id": "r1", "session_id": session.id});
    orphan(&state, &session, std::slice::from_ref(&start)).await;
    // The record claims the session is mallory's (a forged or stale record).
    state
        .bus()
        .open_run(&session.id, OpenRunInfo::new("mallory", "r1").to_value())
        .await
        .unwrap();

    assert_eq!(sweep(&state).await.unwrap(), 0);
    // No error end on the owner's log, no fence, the record is gone and
    // the session is free.
    assert_eq!(log(&state, &session.id).await, vec![start]);
    let stored = state
        .storage()
        .get_session("u", &session.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.revision, session.revision);
    assert!(state.bus().open_runs().await.unwrap().is_empty());
    assert!(!state.bus().is_locked(&session.id).await.unwrap());
}
