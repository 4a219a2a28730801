#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_message::TextBlock;
use oxiscope_storage::{BackgroundTaskRecord, BackgroundTaskState};
use tokio_util::sync::CancellationToken;

use super::tasks::hint;
use super::*;

fn text_chunk(text: &str, state: ToolResultState, last: bool) -> ToolChunk {
    ToolChunk {
        is_last: last,
        ..ToolChunk::new(vec![TextBlock::new(text).into()], state)
    }
}

#[test]
fn output_is_capped_at_a_character_boundary_and_remembers_errors() {
    let mut out = Output::default();
    out.push(&text_chunk("ab", ToolResultState::Running, false));
    assert_eq!(out.text(), "ab");
    assert!(!out.error);
    out.push(&text_chunk(
        &"é".repeat(RESULT_CAP),
        ToolResultState::Running,
        false,
    ));
    out.push(&text_chunk("more", ToolResultState::Error, true));
    let text = out.text();
    assert!(text.starts_with("abé"));
    assert!(text.ends_with(&format!("[output cut at {RESULT_CAP} bytes]")));
    assert!(text.len() <= RESULT_CAP + 64, "{}", text.len());
    assert!(out.error);
}

#[test]
fn the_placeholder_names_the_call_and_the_task() {
    let call = ToolCallBlock::new("call_7", "Bash", "{}");
    let text = placeholder(&call, "task_1", true);
    assert!(text.starts_with("[The call Bash (call_7)"), "{text}");
    assert!(text.contains("task task_1"));
    assert!(text.contains("arrive later as a separate message"));
    assert!(placeholder(&call, "task_1", false).starts_with('\n'));
}

#[test]
fn hints_say_how_the_call_ended() {
    let mut task = BackgroundTaskRecord::start("u", "s", "Bash", "call_1", "boot");
    task.state = BackgroundTaskState::Done;
    task.result = Some(r#"{"state":"success","output":"done\n"}"#.to_owned());
    let block = hint(&task);
    let text = block.hint.text("");
    assert!(text.contains("Bash (call_1)"), "{text}");
    assert!(text.contains("finished with state success"), "{text}");
    assert!(text.ends_with("done\n"), "{text}");
    let source: serde_json::Value = serde_json::from_str(block.source.as_deref().unwrap()).unwrap();
    assert_eq!(source["type"], "background_task");
    assert_eq!(source["task_id"], task.id.as_str());
    assert_eq!(source["tool"], "Bash");
    assert_eq!(source["state"], "done");

    task.state = BackgroundTaskState::Failed;
    task.result = Some(r#"{"state":"interrupted","output":""}"#.to_owned());
    assert!(hint(&task).hint.text("").contains("state interrupted"));

    task.state = BackgroundTaskState::Lost;
    let text = hint(&task).hint.text("");
    assert!(text.contains("cut off by a server restart"), "{text}");
    assert!(text.contains("run the call again"), "{text}");
}

/// A state over a fresh SQLite store (no sessions: deliveries find none
/// and count as delivered).
async fn state() -> (Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let storage = std::sync::Arc::new(
        oxiscope_storage::SqliteStorage::open(dir.path())
            .await
            .unwrap(),
    );
    let state = Engine::new(
        storage,
        std::sync::Arc::new(oxiscope_storage::InMemoryBus::new()),
        crate::Sealer::from_key(&[3; 32]),
        crate::EngineConfig::new(dir.path()),
    );
    (state, dir)
}

/// Two replicas: services sharing one store and one bus.
async fn two_replicas() -> (Engine, Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let storage: std::sync::Arc<dyn oxiscope_storage::Storage> = std::sync::Arc::new(
        oxiscope_storage::SqliteStorage::open(dir.path())
            .await
            .unwrap(),
    );
    let bus: std::sync::Arc<dyn oxiscope_storage::MessageBus> =
        std::sync::Arc::new(oxiscope_storage::InMemoryBus::new());
    let make = || {
        Engine::new(
            storage.clone(),
            bus.clone(),
            crate::Sealer::from_key(&[3; 32]),
            crate::EngineConfig::new(dir.path()),
        )
    };
    (make(), make(), dir)
}

fn new_job(state: &Engine) -> (Job, CancellationToken) {
    let cancel = CancellationToken::new();
    let job = Job {
        state: state.clone(),
        user_id: "u".to_owned(),
        session_id: "s".to_owned(),
        call: ToolCallBlock::new("call_1", "Bash", "{}"),
        cancel: cancel.clone(),
    };
    (job, cancel)
}

/// "a" at once, then "b" and the end after `delay`.
fn slow_tool(delay: Duration) -> ToolStream {
    let first = futures_util::stream::iter([ToolChunk::partial("a")]);
    let rest = futures_util::stream::once(async move {
        tokio::time::sleep(delay).await;
        ToolChunk::text("b")
    });
    first.chain(rest).boxed()
}

fn soon(after: Duration) -> Option<tokio::time::Instant> {
    Some(tokio::time::Instant::now() + after)
}

#[tokio::test]
async fn a_call_that_ends_in_time_passes_through_untouched() {
    let (state, _dir) = state().await;
    let (job, cancel) = new_job(&state);
    let stream = foreground(
        job,
        slow_tool(Duration::from_millis(10)),
        soon(Duration::from_secs(5)),
        CancellationToken::new(),
        cancel.clone().drop_guard(),
    );
    let chunks: Vec<ToolChunk> = stream.collect().await;
    let texts: Vec<String> = chunks.iter().map(ToolChunk::text_content).collect();
    assert_eq!(texts, ["a", "b"]);
    assert!(chunks[1].is_last);
    // Finished: the reply no longer cancels anything.
    assert!(!cancel.is_cancelled());
    let rows = state.storage().list_background_tasks("s").await.unwrap();
    assert!(rows.is_empty());
}

#[tokio::test]
async fn a_call_past_the_timeout_is_offloaded_and_its_result_stored() {
    let (state, _dir) = state().await;
    let (job, cancel) = new_job(&state);
    let stream = foreground(
        job,
        slow_tool(Duration::from_millis(300)),
        soon(Duration::from_millis(50)),
        CancellationToken::new(),
        cancel.clone().drop_guard(),
    );
    let chunks: Vec<ToolChunk> = stream.collect().await;
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].text_content(), "a");
    let placeholder = chunks[1].text_content();
    assert!(
        placeholder.starts_with("\n[The call Bash (call_1)"),
        "{placeholder}"
    );
    assert!(chunks[1].is_last);
    assert_eq!(chunks[1].state, ToolResultState::Success);
    // The reply's stream is gone; the call goes on.
    assert!(!cancel.is_cancelled());
    let rows = state.storage().list_background_tasks("s").await.unwrap();
    assert_eq!(rows.len(), 1);
    assert!(placeholder.contains(&rows[0].id));
    for _ in 0..100 {
        let rows = state.storage().list_background_tasks("s").await.unwrap();
        if rows[0].delivered_at.is_some() {
            assert_eq!(rows[0].state, BackgroundTaskState::Done);
            let result: serde_json::Value =
                serde_json::from_str(rows[0].result.as_deref().unwrap()).unwrap();
            assert_eq!(result["output"], "ab");
            assert_eq!(result["state"], "success");
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the background result was not stored and delivered");
}

#[tokio::test]
async fn cancelling_the_session_interrupts_its_background_call() {
    let (state, _dir) = state().await;
    let (job, cancel) = new_job(&state);
    let stream = foreground(
        job,
        slow_tool(Duration::from_secs(60)),
        soon(Duration::from_millis(20)),
        CancellationToken::new(),
        cancel.clone().drop_guard(),
    );
    let _: Vec<ToolChunk> = stream.collect().await;
    assert_eq!(cancel_session(&state, "other"), 0);
    assert_eq!(cancel_session(&state, "s"), 1);
    assert!(cancel.is_cancelled());
    for _ in 0..100 {
        let rows = state.storage().list_background_tasks("s").await.unwrap();
        if rows[0].delivered_at.is_some() {
            assert_eq!(rows[0].state, BackgroundTaskState::Failed);
            assert!(rows[0].result.as_deref().unwrap().contains("interrupted"));
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the interrupted call was not stored");
}

#[tokio::test]
async fn a_reply_that_stops_stops_its_call() {
    let (state, _dir) = state().await;
    let (job, cancel) = new_job(&state);
    let reply = CancellationToken::new();
    let mut stream = foreground(
        job,
        slow_tool(Duration::from_secs(60)),
        soon(Duration::from_secs(30)),
        reply.clone(),
        cancel.clone().drop_guard(),
    );
    assert_eq!(stream.next().await.unwrap().text_content(), "a");
    reply.cancel();
    let end = stream.next().await.unwrap();
    assert_eq!(end.state, ToolResultState::Interrupted);
    assert!(stream.next().await.is_none());
    assert!(cancel.is_cancelled());

    // A reply that drops the stream mid-call cancels it too.
    let (job, cancel) = new_job(&state);
    let mut stream = foreground(
        job,
        slow_tool(Duration::from_secs(60)),
        soon(Duration::from_secs(30)),
        CancellationToken::new(),
        cancel.clone().drop_guard(),
    );
    stream.next().await.unwrap();
    drop(stream);
    assert!(cancel.is_cancelled());
    assert!(
        state
            .storage()
            .list_background_tasks("s")
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_user_past_the_background_limit_keeps_the_call_in_the_reply() {
    // The limit holds across replicas: half the calls run on each.
    let (state, other_replica, _dir) = two_replicas().await;
    let endless = || -> ToolStream { futures_util::stream::pending().boxed() };
    let mut cancels = Vec::new();
    for i in 0..tasks::MAX_PER_USER {
        let replica = if i % 2 == 0 { &state } else { &other_replica };
        let (job, cancel) = new_job(replica);
        assert!(
            tasks::offload(&job, endless(), Output::default())
                .await
                .is_ok()
        );
        cancels.push(cancel);
    }
    let (job, _) = new_job(&state);
    assert!(
        tasks::offload(&job, endless(), Output::default())
            .await
            .is_err()
    );
    assert_eq!(
        state
            .storage()
            .list_background_tasks("s")
            .await
            .unwrap()
            .len() as u64,
        tasks::MAX_PER_USER
    );
    // Another user has a limit of their own.
    let (mut other, _) = new_job(&state);
    other.user_id = "v".to_owned();
    assert!(
        tasks::offload(&other, endless(), Output::default())
            .await
            .is_ok()
    );
    // A call that ends frees its place.
    cancels[0].cancel();
    for _ in 0..200 {
        if tasks::offload(&job, endless(), Output::default())
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the ended call's place was not freed");
}
