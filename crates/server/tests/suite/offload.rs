//! Background tool calls through the service: a call that outlives the
//! offload timeout gives the reply a placeholder, and its result arrives
//! later as a new run on the session's stream; an interrupt cancels it; a
//! restart reports it lost; a result stored but never delivered is
//! delivered at start.

use std::sync::Arc;
use std::time::Duration;

use oxiscope_server::{AppState, AuthMode, Sealer, ServerConfig, TenantPolicy, WorkspaceMode, app};
use oxiscope_storage::{BackgroundTaskRecord, BackgroundTaskState, InMemoryBus, SqliteStorage};
use oxiscope_test_support::OpenAiScript;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, Setup, text_answer, types};

/// The server settings of these tests: offload after 1 s, local tools,
/// bypass allowed (so `sleep` runs unasked), the fake model on loopback.
fn configure(c: ServerConfig) -> ServerConfig {
    let mut policy = TenantPolicy {
        private_model_endpoints: true,
        ..TenantPolicy::default()
    };
    policy
        .allowed_modes
        .push(oxiscope_permission::PermissionMode::Bypass);
    let mut c = c.with_workspace(WorkspaceMode::Local).with_policy(policy);
    c.engine.tool_offload = Duration::from_secs(1);
    c
}

async fn start() -> Harness {
    Harness::start_custom(AuthMode::DevHeader, configure).await
}

/// The usual setup, with the session in bypass mode.
async fn setup(h: &Harness) -> Setup {
    let s = h.setup("u").await;
    let (code, body) = h
        .patch_session("u", &s, json!({"permission_mode": "bypass"}))
        .await;
    assert_eq!(code, 200, "{body}");
    s
}

/// The model runs `command` with Bash.
fn bash(command: &str) -> oxiscope_test_support::ScriptedResponse {
    OpenAiScript::new()
        .tool_call(0, "call_1", "Bash")
        .tool_args(0, json!({"command": command}).to_string())
        .finish("tool_calls")
        .usage(10, 5, 0)
        .response()
}

/// The text of the tool result the reply streamed.
fn tool_output(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["type"] == "TOOL_RESULT_TEXT_DELTA")
        .map(|e| e["delta"].as_str().unwrap_or_default())
        .collect()
}

/// Starts a reply whose Bash call outlives the timeout; returns the first
/// reply's events (ended by the placeholder).
async fn offloaded_reply(
    h: &Harness,
    s: &Setup,
    sse: &mut super::common::Sse,
    command: &str,
) -> Vec<Value> {
    h.fake.push(bash(command));
    h.fake.push(text_answer(
        "It runs in the background; I will report back.",
    ));
    let (code, body) = h.chat("u", s, user_msg("run it")).await;
    assert_eq!(code, 200, "{body}");
    let events = sse.until("REPLY_END").await;
    let end = events.last().unwrap();
    assert_eq!(end["finished_reason"], "completed", "{end}");
    let output = tool_output(&events);
    assert!(
        output.contains("now runs in the background as task"),
        "{output}"
    );
    assert!(output.contains("Bash (call_1)"), "{output}");
    events
}

async fn tasks(h: &Harness, s: &Setup) -> Vec<BackgroundTaskRecord> {
    h.state
        .storage()
        .list_background_tasks(&s.session_id)
        .await
        .unwrap()
}

/// The text the model was last sent.
fn last_request(h: &Harness) -> String {
    h.fake.requests().last().unwrap().body_text()
}

async fn wait_delivered(h: &Harness, s: &Setup) -> Vec<BackgroundTaskRecord> {
    for _ in 0..200 {
        let all = tasks(h, s).await;
        if !all.is_empty() && all.iter().all(|t| t.delivered_at.is_some()) {
            return all;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "the background tasks were not delivered: {:?}",
        tasks(h, s).await
    );
}

#[tokio::test]
async fn a_slow_call_goes_to_the_background_and_its_result_comes_back_as_a_new_run() {
    let h = start().await;
    let s = setup(&h).await;
    let mut sse = h.subscribe("u", &s, None).await;
    offloaded_reply(&h, &s, &mut sse, "sleep 3; echo finished-in-background").await;
    // The reply did not wait: the call still runs.
    let running = tasks(&h, &s).await;
    assert_eq!(running.len(), 1);
    assert_eq!(running[0].state, BackgroundTaskState::Running);
    assert_eq!(running[0].tool_name, "Bash");
    assert_eq!(running[0].tool_call_id, "call_1");

    // Its result arrives as a new run that the model answers.
    h.fake.push(text_answer("The command printed its line."));
    let second = sse.until("REPLY_END").await;
    assert!(types(&second).contains(&"REPLY_START"), "{second:?}");
    assert_eq!(second.last().unwrap()["finished_reason"], "completed");
    assert!(
        second.iter().any(|e| e["type"] == "TEXT_BLOCK_DELTA"
            && e["delta"]
                .as_str()
                .unwrap_or_default()
                .contains("printed its line")),
        "{second:?}"
    );
    let asked = last_request(&h);
    assert!(asked.contains("has finished with state success"), "{asked}");
    assert!(asked.contains("finished-in-background"), "{asked}");

    let done = wait_delivered(&h, &s).await;
    assert_eq!(done[0].state, BackgroundTaskState::Done);
    let result: Value = serde_json::from_str(done[0].result.as_deref().unwrap()).unwrap();
    assert_eq!(result["state"], "success");
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .contains("finished-in-background")
    );
    assert_eq!(h.wait_not_running("u", &s).await, "idle");

    // The hint is kept with the conversation.
    let page = h.messages("u", &s).await;
    let hint = page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "background_task")
        .unwrap_or_else(|| panic!("no hint message: {page}"));
    assert_eq!(hint["role"], "assistant");
    assert_eq!(hint["content"][0]["type"], "hint");
    let source: Value =
        serde_json::from_str(hint["content"][0]["source"].as_str().unwrap()).unwrap();
    assert_eq!(source["type"], "background_task");
    assert_eq!(source["task_id"], done[0].id.as_str());
}

#[tokio::test]
async fn a_quick_call_stays_in_the_reply() {
    let h = start().await;
    let s = setup(&h).await;
    let mut sse = h.subscribe("u", &s, None).await;
    h.fake.push(bash("echo quick"));
    h.fake.push(text_answer("Done."));
    let (code, _) = h.chat("u", &s, user_msg("run it")).await;
    assert_eq!(code, 200);
    let events = sse.until("REPLY_END").await;
    let output = tool_output(&events);
    assert!(output.contains("quick"), "{output}");
    assert!(!output.contains("background"), "{output}");
    assert_eq!(tasks(&h, &s).await, Vec::new());
}

#[tokio::test]
async fn interrupting_the_session_cancels_its_background_calls() {
    let h = start().await;
    let s = setup(&h).await;
    let mut sse = h.subscribe("u", &s, None).await;
    offloaded_reply(&h, &s, &mut sse, "sleep 60; echo never").await;
    assert_eq!(h.wait_not_running("u", &s).await, "idle");

    h.fake.push(text_answer("Understood, it was stopped."));
    let (code, _) = h
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
    // The model is told the call was interrupted.
    let events = sse.until("REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    let asked = last_request(&h);
    assert!(
        asked.contains("has finished with state interrupted"),
        "{asked}"
    );
    assert!(!asked.contains("Its output:\\nnever"), "{asked}");
    let done = wait_delivered(&h, &s).await;
    assert_eq!(done[0].state, BackgroundTaskState::Failed);
}

/// A second server on `h`'s data directory (a restart: the first one's
/// in-process bus is gone) with the same fake model.
async fn restart(h: Harness) -> Harness {
    let Harness {
        http, fake, dir, ..
    } = h;
    let storage = Arc::new(SqliteStorage::open(dir.path()).await.unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = AppState::new(
        storage,
        Arc::new(InMemoryBus::new()),
        Sealer::from_key(&[3; 32]),
        configure(
            ServerConfig::new(dir.path())
                .with_auth(AuthMode::DevHeader)
                .with_listen_addr(addr)
                .with_session_titles(oxiscope_server::SessionTitles::Excerpt),
        ),
    );
    let router = app(state.clone());
    tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    Harness {
        base: format!("http://{addr}"),
        http,
        state,
        fake,
        dir,
        auth: AuthMode::DevHeader,
    }
}

#[tokio::test]
async fn a_background_call_cut_off_by_a_restart_is_reported_lost() {
    let h = start().await;
    let s = setup(&h).await;
    let mut sse = h.subscribe("u", &s, None).await;
    offloaded_reply(&h, &s, &mut sse, "sleep 60; echo never").await;
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    drop(sse);
    // The server stops: the call is dropped, its row stays `running`.
    h.state.shutdown().await;
    let left = tasks(&h, &s).await;
    assert_eq!(left[0].state, BackgroundTaskState::Running);
    assert_eq!(left[0].heartbeat_at, 0);

    let h = restart(h).await;
    let mut sse = h.subscribe("u", &s, None).await;
    h.fake.push(text_answer("I will run it again."));
    assert_eq!(h.state.recover_background_tasks().await.unwrap(), 1);
    let events = sse.until("REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    let asked = last_request(&h);
    assert!(asked.contains("cut off by a server restart"), "{asked}");
    let lost = wait_delivered(&h, &s).await;
    assert_eq!(lost[0].state, BackgroundTaskState::Lost);
    assert_ne!(lost[0].owner, left[0].owner);
    // Taken over once: nothing is left to take.
    assert_eq!(h.state.recover_background_tasks().await.unwrap(), 0);
}

#[tokio::test]
async fn tasks_of_a_dead_process_are_taken_over_at_start() {
    let h = start().await;
    let s = setup(&h).await;
    // A process that died (no heartbeat for long) left a running call and
    // a result it stored but never delivered; a live one keeps its own.
    let mut running = BackgroundTaskRecord::start("u", &s.session_id, "Bash", "call_a", "dead");
    running.heartbeat_at = 1;
    let mut finished = BackgroundTaskRecord::start("u", &s.session_id, "Bash", "call_b", "dead");
    finished.heartbeat_at = 1;
    let live = BackgroundTaskRecord::start("u", &s.session_id, "Bash", "call_c", "alive");
    let storage = h.state.storage();
    for task in [&running, &finished, &live] {
        storage.create_background_task(task).await.unwrap();
    }
    let result = json!({"state": "success", "output": "stored-before-the-crash"}).to_string();
    storage
        .finish_background_task(&finished.id, BackgroundTaskState::Done, &result)
        .await
        .unwrap();

    let mut sse = h.subscribe("u", &s, None).await;
    h.fake.push(text_answer("Noted the lost call."));
    h.fake.push(text_answer("Noted the result."));
    assert_eq!(h.state.recover_background_tasks().await.unwrap(), 2);
    // One run for each hint, in either order.
    sse.until("REPLY_END").await;
    sse.until("REPLY_END").await;
    let asked = last_request(&h);
    assert!(asked.contains("stored-before-the-crash"), "{asked}");
    assert!(asked.contains("cut off by a server restart"), "{asked}");
    assert_eq!(h.wait_not_running("u", &s).await, "idle");

    let all = tasks(&h, &s).await;
    let states: Vec<(&str, BackgroundTaskState, bool)> = all
        .iter()
        .map(|t| (t.tool_call_id.as_str(), t.state, t.delivered_at.is_some()))
        .collect();
    assert_eq!(
        states,
        [
            ("call_a", BackgroundTaskState::Lost, true),
            ("call_b", BackgroundTaskState::Done, true),
            ("call_c", BackgroundTaskState::Running, false),
        ]
    );
}

/// A result that comes back while the session waits for a confirmation
/// waits too: running it would close the parked reply. It runs after the
/// user's answer ends that reply.
#[tokio::test]
async fn a_result_arriving_while_the_session_is_parked_waits_for_the_answer() {
    let h = start().await;
    let s = setup(&h).await;
    let mut sse = h.subscribe("u", &s, None).await;
    offloaded_reply(&h, &s, &mut sse, "sleep 3; echo late-result").await;

    // Back in the default mode, the next reply parks on a Write.
    let (code, body) = h
        .patch_session("u", &s, json!({"permission_mode": "default"}))
        .await;
    assert_eq!(code, 200, "{body}");
    let path = h.tool_dir("u", &s.agent_id).join("note.txt");
    h.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_2", "Write")
            .tool_args(0, json!({"file_path": path, "content": "x"}).to_string())
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response(),
    );
    let (code, body) = h.chat("u", &s, user_msg("write a note")).await;
    assert_eq!(code, 200, "{body}");
    let ask = sse
        .until("REQUIRE_USER_CONFIRM")
        .await
        .last()
        .unwrap()
        .clone();
    assert_eq!(h.wait_not_running("u", &s).await, "awaiting_permission");

    // The background call ends and is delivered to the inbox, not run.
    let delivered = wait_delivered(&h, &s).await;
    assert_eq!(delivered[0].state, BackgroundTaskState::Done);
    let asked = h.fake.request_count();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(h.status("u", &s).await, "awaiting_permission");
    assert_eq!(h.fake.request_count(), asked);

    // The answer resumes the parked reply; then the result runs.
    h.fake.push(text_answer("Noted."));
    h.fake
        .push(text_answer("The late command printed its line."));
    let confirm = json!({
        "type": "USER_CONFIRM_RESULT",
        "reply_id": ask["reply_id"],
        "confirm_results": [{"confirmed": true, "tool_call": ask["tool_calls"][0]}],
    });
    let (code, body) = h.chat("u", &s, confirm).await;
    assert_eq!(code, 200, "{body}");
    let resumed = sse.until("REPLY_END").await;
    assert_eq!(resumed.last().unwrap()["finished_reason"], "completed");
    assert!(types(&resumed).contains(&"TOOL_RESULT_END"));
    let hinted = sse.until("REPLY_END").await;
    assert_eq!(hinted.last().unwrap()["finished_reason"], "completed");
    assert!(
        last_request(&h).contains("late-result"),
        "{}",
        last_request(&h)
    );
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
}

/// A result queued while a run is active, which then parks, is kept for
/// the parked reply: it reaches the model at the resumed reply's next
/// step instead of closing the reply.
#[tokio::test]
async fn a_result_queued_before_the_reply_parks_is_given_to_the_resumed_reply() {
    let h = start().await;
    let s = h.setup("u").await;
    let mut sse = h.subscribe("u", &s, None).await;
    // Default mode: the Bash call asks first.
    h.fake.push(bash("sleep 3; echo kept-for-later"));
    let (code, body) = h.chat("u", &s, user_msg("run it")).await;
    assert_eq!(code, 200, "{body}");
    let ask = sse
        .until("REQUIRE_USER_CONFIRM")
        .await
        .last()
        .unwrap()
        .clone();
    assert_eq!(h.wait_not_running("u", &s).await, "awaiting_permission");

    // Confirmed, it runs, moves to the background after 1 s, and the next
    // step (answered 3 s later, after the call ended) asks for a Write.
    let path = h.tool_dir("u", &s.agent_id).join("note.txt");
    h.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_2", "Write")
            .tool_args(0, json!({"file_path": path, "content": "x"}).to_string())
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response()
            .with_delay(Duration::from_secs(3)),
    );
    let confirm = |ask: &Value| {
        json!({
            "type": "USER_CONFIRM_RESULT",
            "reply_id": ask["reply_id"],
            "confirm_results": [{"confirmed": true, "tool_call": ask["tool_calls"][0]}],
        })
    };
    let (code, body) = h.chat("u", &s, confirm(&ask)).await;
    assert_eq!(code, 200, "{body}");
    let ask = sse
        .until("REQUIRE_USER_CONFIRM")
        .await
        .last()
        .unwrap()
        .clone();
    assert_eq!(ask["tool_calls"][0]["name"], "Write");
    assert_eq!(h.wait_not_running("u", &s).await, "awaiting_permission");
    let delivered = wait_delivered(&h, &s).await;
    assert_eq!(delivered[0].state, BackgroundTaskState::Done);
    // Still parked; the model was not asked again.
    let asked = h.fake.request_count();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(h.wait_not_running("u", &s).await, "awaiting_permission");
    assert_eq!(h.fake.request_count(), asked);

    // The answer resumes the reply, whose next step reads the result.
    h.fake.push(text_answer("Both done."));
    let (code, body) = h.chat("u", &s, confirm(&ask)).await;
    assert_eq!(code, 200, "{body}");
    let resumed = sse.until("REPLY_END").await;
    assert_eq!(resumed.last().unwrap()["finished_reason"], "completed");
    assert!(
        last_request(&h).contains("kept-for-later"),
        "{}",
        last_request(&h)
    );
    assert!(
        resumed.iter().any(|e| e["type"] == "HINT_BLOCK_START"
            || e["type"] == "HINT_BLOCK"
            || e.to_string().contains("kept-for-later")),
        "{resumed:?}"
    );
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    assert_eq!(h.fake.request_count(), asked + 1);
}
