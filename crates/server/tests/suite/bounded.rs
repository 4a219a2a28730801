//! Bounded memory through the service: a full inbox answers 429, an input
//! queued as a run lets go is still served, and sessions opened and closed
//! by the thousand leave the bus as they found it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use oxiscope_server::{AuthMode, WorkspaceMode};
use oxiscope_storage::{
    BoxFuture, Cursor, EventStream, InMemoryBus, MessageBus, Release, Result, Retained, RunLease,
};
use oxiscope_test_support::{OpenAiScript, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::chat::user_msg;
use super::common::{Harness, Setup, text_answer, types};

/// A point where a test holds the service until it says go.
#[derive(Debug, Default)]
struct Gate {
    armed: AtomicBool,
    reached: Notify,
    go: Notify,
}

impl Gate {
    /// The next pass waits.
    fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    async fn pass(&self) {
        if self.armed.swap(false, Ordering::SeqCst) {
            self.reached.notify_one();
            self.go.notified().await;
        }
    }

    async fn reached(&self) {
        tokio::time::timeout(Duration::from_secs(10), self.reached.notified())
            .await
            .expect("the service reached the gate");
    }

    fn open(&self) {
        self.go.notify_one();
    }
}

/// The in-process bus with two gates: after a run finds its inbox empty
/// (just before it lets go), and before an input is queued.
#[derive(Debug, Clone, Default)]
struct GatedBus {
    inner: InMemoryBus,
    inbox_found_empty: Arc<Gate>,
    before_push: Arc<Gate>,
}

impl MessageBus for GatedBus {
    fn try_lock<'a>(
        &'a self,
        session_id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<RunLease>>> {
        self.inner.try_lock(session_id, ttl)
    }
    fn renew<'a>(&'a self, lease: &'a RunLease, ttl: Duration) -> BoxFuture<'a, Result<bool>> {
        self.inner.renew(lease, ttl)
    }
    fn unlock<'a>(&'a self, lease: &'a RunLease) -> BoxFuture<'a, Result<bool>> {
        self.inner.unlock(lease)
    }
    fn release<'a>(&'a self, lease: &'a RunLease) -> BoxFuture<'a, Result<Release>> {
        self.inner.release(lease)
    }
    fn is_locked<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<bool>> {
        self.inner.is_locked(session_id)
    }
    fn begin_run<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>> {
        self.inner.begin_run(session_id)
    }
    fn publish<'a>(
        &'a self,
        session_id: &'a str,
        payload: Arc<str>,
        replay_limit: usize,
    ) -> BoxFuture<'a, Result<Cursor>> {
        self.inner.publish(session_id, payload, replay_limit)
    }
    fn checkpoint<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>> {
        self.inner.checkpoint(session_id)
    }
    fn last_cursor<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Cursor>>> {
        self.inner.last_cursor(session_id)
    }
    fn subscribe<'a>(
        &'a self,
        session_id: &'a str,
        after: Option<Cursor>,
    ) -> BoxFuture<'a, Result<EventStream>> {
        self.inner.subscribe(session_id, after)
    }
    fn push_inbox<'a>(
        &'a self,
        session_id: &'a str,
        item: Value,
        limit: usize,
    ) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            self.before_push.pass().await;
            self.inner.push_inbox(session_id, item, limit).await
        })
    }
    fn pop_inbox<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Value>>> {
        Box::pin(async move {
            let item = self.inner.pop_inbox(session_id).await?;
            if item.is_none() {
                self.inbox_found_empty.pass().await;
            }
            Ok(item)
        })
    }
    fn next_wakeup(&self) -> BoxFuture<'_, Result<String>> {
        self.inner.next_wakeup()
    }
    fn open_run<'a>(&'a self, session_id: &'a str, info: Value) -> BoxFuture<'a, Result<()>> {
        self.inner.open_run(session_id, info)
    }
    fn close_run<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<bool>> {
        self.inner.close_run(session_id)
    }
    fn open_runs(&self) -> BoxFuture<'_, Result<Vec<(String, Value)>>> {
        self.inner.open_runs()
    }
    fn forget_session<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>> {
        self.inner.forget_session(session_id)
    }
}

/// A service without a sandbox (these tests run no tool commands) over
/// `bus`, with `inbox_limit`.
async fn start(bus: Arc<dyn MessageBus>, inbox_limit: usize) -> Harness {
    Harness::start_on_bus(AuthMode::DevHeader, bus, move |mut c| {
        c.engine.inbox_limit = inbox_limit;
        c.with_workspace(WorkspaceMode::Local)
    })
    .await
}

/// The model asks to write a note (a write asks for confirmation).
fn write_call(h: &Harness, s: &Setup) -> ScriptedResponse {
    let path = h.tool_dir("u", &s.agent_id).join("note.txt");
    let args = json!({"file_path": path, "content": "late but written"}).to_string();
    OpenAiScript::new()
        .tool_call(0, "call_1", "Write")
        .tool_args(0, args)
        .finish("tool_calls")
        .usage(10, 5, 0)
        .response()
}

/// A confirmation of the call `ask` waits for.
fn confirm(ask: &Value) -> Value {
    json!({
        "type": "USER_CONFIRM_RESULT",
        "reply_id": ask["reply_id"],
        "confirm_results": [{"confirmed": true, "tool_call": ask["tool_calls"][0]}],
    })
}

/// An answer that streams slowly enough to be interrupted.
fn slow_answer() -> ScriptedResponse {
    OpenAiScript::new()
        .text("thinking")
        .finish("stop")
        .usage(1, 1, 0)
        .response_paced(1, Duration::from_millis(500))
}

fn external_result() -> Value {
    json!({"type": "EXTERNAL_EXECUTION_RESULT", "reply_id": "r", "execution_results": []})
}

async fn wait_unlocked(bus: &dyn MessageBus, session_id: &str) {
    for _ in 0..10_000 {
        if !bus.is_locked(session_id).await.unwrap() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("the run of {session_id} did not end");
}

async fn interrupt(h: &Harness, s: &Setup, session_id: &str) {
    let path = format!("/sessions/{session_id}/interrupt?agent_id={}", s.agent_id);
    let (code, body) = h.post(&path, "u", Value::Null).await;
    assert_eq!(code, 202, "{body}");
}

async fn delete_session(h: &Harness, s: &Setup, session_id: &str) {
    let path = format!("/sessions/{session_id}?agent_id={}", s.agent_id);
    let (code, body) = h.call(reqwest::Method::DELETE, &path, "u", None).await;
    assert_eq!(code, 204, "{body}");
}

#[tokio::test]
async fn a_confirmation_queued_as_the_run_lets_go_is_served_by_that_run() {
    let bus = GatedBus::default();
    let h = start(Arc::new(bus.clone()), 64).await;
    let s = h.setup("u").await;
    let mut sse = h.subscribe("u", &s, None).await;

    // The run parks on a confirmation, finds its inbox empty, and is held
    // just before it lets go.
    bus.inbox_found_empty.arm();
    h.fake.push(write_call(&h, &s));
    assert_eq!(h.chat("u", &s, user_msg("write a note")).await.0, 200);
    let ask = sse.until("REQUIRE_USER_CONFIRM").await.pop().unwrap();
    bus.inbox_found_empty.reached().await;

    // The confirmation arrives then: the lock is held, so it is queued.
    h.fake.push(text_answer("The note is written."));
    let (code, body) = h.chat("u", &s, confirm(&ask)).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(bus.inner.retained().inputs, 1);

    // The run does not leave it behind.
    bus.inbox_found_empty.open();
    let events = sse.until("REPLY_END").await;
    assert_eq!(types(&events)[..2], ["USER_CONFIRM_RESULT", "REPLY_START"]);
    assert_eq!(events[1]["reply_id"], ask["reply_id"]);
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    assert_eq!(bus.inner.retained().inputs, 0);
    let note = h.workspace_dir("u", &s.agent_id).join("note.txt");
    assert_eq!(std::fs::read_to_string(note).unwrap(), "late but written");
}

#[tokio::test]
async fn a_confirmation_queued_just_after_the_run_let_go_is_served_by_its_sender() {
    let bus = GatedBus::default();
    let h = start(Arc::new(bus.clone()), 64).await;
    let s = h.setup("u").await;
    let mut sse = h.subscribe("u", &s, None).await;
    bus.inbox_found_empty.arm();
    bus.before_push.arm();
    h.fake.push(write_call(&h, &s));
    assert_eq!(h.chat("u", &s, user_msg("write a note")).await.0, 200);
    let ask = sse.until("REQUIRE_USER_CONFIRM").await.pop().unwrap();
    bus.inbox_found_empty.reached().await;

    // The confirmation finds the lock held and is about to be queued; the
    // run lets go (its inbox still empty) before the push lands.
    h.fake.push(text_answer("The note is written."));
    let sending = h.chat("u", &s, confirm(&ask));
    let interleave = async {
        bus.before_push.reached().await;
        bus.inbox_found_empty.open();
        wait_unlocked(&bus, &s.session_id).await;
        bus.before_push.open();
    };
    let ((code, body), ()) = tokio::join!(sending, interleave);
    assert_eq!(code, 200, "{body}");

    let events = sse.until("REPLY_END").await;
    assert_eq!(events[0]["reply_id"], ask["reply_id"]);
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    assert_eq!(bus.inner.retained().inputs, 0);
}

#[tokio::test]
async fn a_full_inbox_answers_429_naming_the_limit() {
    let bus = InMemoryBus::new();
    let h = start(Arc::new(bus.clone()), 2).await;
    let s = h.setup("u").await;
    h.fake.push(slow_answer());
    assert_eq!(h.chat("u", &s, user_msg("go")).await.0, 200);
    for _ in 0..2 {
        let (code, body) = h.chat("u", &s, external_result()).await;
        assert_eq!(code, 200, "{body}");
    }
    let (code, body) = h.chat("u", &s, external_result()).await;
    assert_eq!(code, 429);
    assert_eq!(
        body,
        json!({"detail": "The session's inbox is full: at most 2 inputs can wait for the active run."})
    );
    assert_eq!(bus.retained().inputs, 2);

    // Interrupted, the run leaves its inputs queued; deleting the session
    // drops them with everything else, and ends its streams.
    interrupt(&h, &s, &s.session_id).await;
    wait_unlocked(&bus, &s.session_id).await;
    assert_eq!(bus.retained().inputs, 2);
    let stream = h
        .http
        .get(format!(
            "{}/sessions/{}/stream?agent_id={}",
            h.base, s.session_id, s.agent_id
        ))
        .header("x-user-id", "u")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    assert_eq!(bus.retained().subscribers, 1);
    delete_session(&h, &s, &s.session_id).await;
    let replayed = tokio::time::timeout(Duration::from_secs(5), stream.text())
        .await
        .expect("the stream ends with its session")
        .unwrap();
    assert!(
        replayed.contains("\"finished_reason\": \"interrupted\""),
        "{replayed}"
    );
    assert_eq!(bus.retained(), Retained::default());
}

/// How many sessions the soak opens and closes.
const SOAK_SESSIONS: usize = 1000;
/// Sessions opened side by side.
const SOAK_LANES: usize = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_sessions_with_queued_inputs_leave_the_bus_as_they_found_it() {
    let bus = InMemoryBus::new();
    let h = start(Arc::new(bus.clone()), 2).await;
    let s = h.setup("u").await;
    delete_session(&h, &s, &s.session_id).await;
    let start_level = bus.retained();
    assert_eq!(start_level, Retained::default());

    let credential = s.credential_id.clone();
    let lane = |lane: usize| {
        let (h, s, bus, credential) = (&h, &s, &bus, credential.clone());
        async move {
            for _ in 0..SOAK_SESSIONS / SOAK_LANES {
                let (code, created) = h
                    .post(
                        "/sessions/",
                        "u",
                        json!({
                            "agent_id": s.agent_id,
                            "workspace_id": format!("lane{lane}"),
                            "chat_model_config": {"type": "openai_credential", "credential_id": credential, "model": "gpt-4.1", "parameters": {}},
                        }),
                    )
                    .await;
                assert_eq!(code, 201, "{created}");
                let id = created["session_id"].as_str().unwrap().to_owned();
                h.fake.push(slow_answer());
                let chat = |input: Value| {
                    h.post(
                        "/chat/",
                        "u",
                        json!({"agent_id": s.agent_id, "session_id": id, "input": input}),
                    )
                };
                assert_eq!(chat(user_msg("go")).await.0, 200);
                let (code, body) = chat(external_result()).await;
                assert_eq!(code, 200, "{body}");
                interrupt(h, s, &id).await;
                wait_unlocked(bus, &id).await;
                delete_session(h, s, &id).await;
            }
        }
    };
    futures_util::future::join_all((0..SOAK_LANES).map(lane)).await;
    assert_eq!(bus.retained(), start_level);

    // Finished sessions keep an idle replay log for a while; deleting their
    // agent drops them.
    let ids = {
        let mut ids = Vec::new();
        for n in 0..3 {
            let (code, created) = h
                .post(
                    "/sessions/",
                    "u",
                    json!({
                        "agent_id": s.agent_id,
                        "workspace_id": format!("kept{n}"),
                        "chat_model_config": {"type": "openai_credential", "credential_id": credential, "model": "gpt-4.1", "parameters": {}},
                    }),
                )
                .await;
            assert_eq!(code, 201, "{created}");
            ids.push(created["session_id"].as_str().unwrap().to_owned());
        }
        ids
    };
    for id in &ids {
        h.fake.push(text_answer("done"));
        let (code, _) = h
            .post(
                "/chat/",
                "u",
                json!({"agent_id": s.agent_id, "session_id": id, "input": user_msg("hi")}),
            )
            .await;
        assert_eq!(code, 200);
        wait_unlocked(&bus, id).await;
    }
    assert_eq!(bus.retained().sessions, 3);
    let (code, body) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/agent/{}", s.agent_id),
            "u",
            None,
        )
        .await;
    assert_eq!(code, 204, "{body}");
    assert_eq!(bus.retained(), start_level);
}

#[tokio::test]
async fn a_model_that_streams_without_end_is_cut_off_and_its_log_stays_within_budget() {
    let bus = InMemoryBus::with_retention(oxiscope_storage::Retention {
        log_bytes: 256 * 1024,
        ..oxiscope_storage::Retention::default()
    });
    let h = Harness::start_on_bus(AuthMode::DevHeader, Arc::new(bus.clone()), |mut c| {
        c.engine.reply_limits = oxiscope_agent::ReplyLimits {
            max_text_bytes: 64 * 1024,
            ..oxiscope_agent::ReplyLimits::default()
        };
        c
    })
    .await;
    let s = h.setup("u").await;
    // 2 MiB of answer in 4 KiB deltas.
    let mut flood = OpenAiScript::new();
    for _ in 0..512 {
        flood = flood.text("z".repeat(4096));
    }
    h.fake.push(flood.finish("stop").usage(10, 2, 0).response());
    let mut sse = h.subscribe("u", &s, None).await;
    let (code, body) = h.chat("u", &s, user_msg("flood")).await;
    assert_eq!(code, 200, "{body}");
    let events = sse.until("REPLY_END").await;
    let end = events.last().unwrap();
    assert_eq!(end["finished_reason"], "error", "{end}");
    let message = end["error"]["message"].as_str().unwrap();
    assert!(message.contains("65536 bytes of text"), "{message}");
    let streamed: usize = events
        .iter()
        .filter(|e| e["type"] == "TEXT_BLOCK_DELTA")
        .map(|e| e["delta"].as_str().map_or(0, str::len))
        .sum();
    assert!(
        streamed > 0 && streamed <= 64 * 1024,
        "{streamed} bytes streamed"
    );
    assert!(
        bus.retained().bytes <= 256 * 1024 + 8192,
        "{:?}",
        bus.retained()
    );
    h.wait_not_running("u", &s).await;

    // The session is still usable.
    h.fake.push(text_answer("fine"));
    let (code, body) = h.chat("u", &s, user_msg("again")).await;
    assert_eq!(code, 200, "{body}");
    let events = sse.until("REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
}
