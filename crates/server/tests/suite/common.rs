//! A running server over a temporary data directory, an HTTP client, an
//! SSE reader and a fake OpenAI server.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use std::os::unix::fs::PermissionsExt as _;

use oxiscope_server::{AppState, AuthMode, Sealer, ServerConfig, WorkspaceMode, app};
use oxiscope_storage::{InMemoryBus, SqliteStorage};
use oxiscope_test_support::{FakeServer, OpenAiScript};
use oxiscope_workspace::SandboxConfig;
use serde_json::{Value, json};

pub(crate) struct Harness {
    pub(crate) base: String,
    pub(crate) http: reqwest::Client,
    pub(crate) state: AppState,
    pub(crate) fake: FakeServer,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) auth: AuthMode,
}

impl Harness {
    pub(crate) async fn start() -> Self {
        Self::start_with(AuthMode::DevHeader).await
    }

    pub(crate) async fn start_with(auth: AuthMode) -> Self {
        Self::start_config(auth, Duration::from_secs(30)).await
    }

    pub(crate) async fn start_config(auth: AuthMode, heartbeat: Duration) -> Self {
        Self::start_full(auth, heartbeat, default_workspace().await).await
    }

    /// The usual server with another tenant policy.
    pub(crate) async fn start_with_policy(policy: oxiscope_server::TenantPolicy) -> Self {
        let workspace = default_workspace().await;
        Self::start_custom(AuthMode::DevHeader, move |c| {
            c.with_workspace(workspace).with_policy(policy)
        })
        .await
    }

    /// The usual server with these hubs, whose catalogues are cached for
    /// `ttl`.
    pub(crate) async fn start_with_hubs(
        hubs: Vec<oxiscope_server::HubSource>,
        ttl: Duration,
    ) -> Self {
        let workspace = default_workspace().await;
        Self::start_hubs_in(workspace, hubs, ttl).await
    }

    /// As [`Self::start_with_hubs`], with local workspaces (hub MCP
    /// servers run on this machine, where the test servers are).
    pub(crate) async fn start_with_hubs_local(
        hubs: Vec<oxiscope_server::HubSource>,
        ttl: Duration,
    ) -> Self {
        Self::start_hubs_in(WorkspaceMode::Local, hubs, ttl).await
    }

    async fn start_hubs_in(
        workspace: WorkspaceMode,
        hubs: Vec<oxiscope_server::HubSource>,
        ttl: Duration,
    ) -> Self {
        Self::start_custom(AuthMode::DevHeader, move |c| {
            let mut c = c.with_workspace(workspace).with_hubs(hubs);
            c.engine.hub_cache_ttl = ttl;
            c
        })
        .await
    }

    /// A server whose agents' tools run in a sandbox; `None` (after a loud
    /// skip, a failure in CI) where bubblewrap cannot run.
    pub(crate) async fn start_sandboxed(config: SandboxConfig) -> Option<Self> {
        match oxiscope_workspace::probe_sandbox(&config).await {
            Ok(()) => Some(
                Self::start_full(
                    AuthMode::DevHeader,
                    Duration::from_secs(30),
                    WorkspaceMode::Sandbox(config),
                )
                .await,
            ),
            Err(e) => {
                no_sandbox(&e, "skipped");
                None
            }
        }
    }

    pub(crate) async fn start_full(
        auth: AuthMode,
        heartbeat: Duration,
        workspace: WorkspaceMode,
    ) -> Self {
        Self::start_custom(auth, move |c| {
            c.with_workspace(workspace).with_heartbeat(heartbeat)
        })
        .await
    }

    /// A server whose default configuration (the usual workspace mode)
    /// `configure` changes.
    pub(crate) async fn start_custom(
        auth: AuthMode,
        configure: impl FnOnce(ServerConfig) -> ServerConfig,
    ) -> Self {
        Self::start_on_bus(auth, Arc::new(InMemoryBus::new()), configure).await
    }

    /// As [`Self::start_custom`], over the given message bus.
    pub(crate) async fn start_on_bus(
        auth: AuthMode,
        bus: Arc<dyn oxiscope_storage::MessageBus>,
        configure: impl FnOnce(ServerConfig) -> ServerConfig,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        // Private, as `oxiscope serve` makes it: sandboxes reach their
        // workspaces without passing through it.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let storage = Arc::new(SqliteStorage::open(dir.path()).await.unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = AppState::new(
            storage,
            bus,
            Sealer::from_key(&[3; 32]),
            configure(
                ServerConfig::new(dir.path())
                    .with_auth(auth)
                    .with_listen_addr(addr)
                    // A title call would take a scripted answer meant for
                    // the conversation; the naming test opts back in.
                    .with_session_titles(oxiscope_server::SessionTitles::Excerpt)
                    // The fake model server is on loopback; tests of the
                    // default rule pass their own policy.
                    .with_policy(oxiscope_server::TenantPolicy {
                        private_model_endpoints: true,
                        // Schedule tests fire every second.
                        min_schedule_interval_secs: 1,
                        ..oxiscope_server::TenantPolicy::default()
                    }),
            ),
        );
        let router = app(state.clone());
        tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        // The workspace's reqwest has no default TLS provider; loopback
        // HTTP needs none, but the client builder insists on one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self {
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
            state,
            fake: FakeServer::start().await.unwrap(),
            dir,
            auth,
        }
    }

    /// `PATCH /sessions/{id}` of the session of `s` with `body`.
    pub(crate) async fn patch_session(&self, user: &str, s: &Setup, body: Value) -> (u16, Value) {
        self.call(
            reqwest::Method::PATCH,
            &format!("/sessions/{}?agent_id={}", s.session_id, s.agent_id),
            user,
            Some(body),
        )
        .await
    }

    /// The stored record of the session of `s`.
    pub(crate) async fn stored_session(
        &self,
        user: &str,
        s: &Setup,
    ) -> oxiscope_storage::SessionRecord {
        self.state
            .storage()
            .get_session(user, &s.session_id)
            .await
            .unwrap()
            .unwrap()
    }

    /// The host directory of a workspace of `user` (the sandbox calls it
    /// `/workspace`).
    pub(crate) fn workspace_dir(&self, user: &str, workspace_id: &str) -> std::path::PathBuf {
        self.state.workspaces().dir(user, workspace_id).unwrap()
    }

    /// The directory the agent's tools call their working directory.
    pub(crate) fn tool_dir(&self, user: &str, workspace_id: &str) -> std::path::PathBuf {
        match &self.state.config().workspace {
            WorkspaceMode::Sandbox(_) => "/workspace".into(),
            WorkspaceMode::Local => self.workspace_dir(user, workspace_id),
        }
    }

    fn request(&self, method: reqwest::Method, path: &str, user: &str) -> reqwest::RequestBuilder {
        let builder = self.http.request(method, format!("{}{path}", self.base));
        match self.auth {
            AuthMode::DevHeader => builder.header("x-user-id", user),
            AuthMode::ApiKeys => builder.bearer_auth(user),
        }
    }

    pub(crate) async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        user: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self.request(method, path, user);
        if let Some(body) = body {
            req = req
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        let text = res.text().await.unwrap();
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, value)
    }

    pub(crate) async fn get(&self, path: &str, user: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, user, None).await
    }

    pub(crate) async fn post(&self, path: &str, user: &str, body: Value) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, user, Some(body))
            .await
    }

    /// Credential (pointing at the fake server), agent, session.
    pub(crate) async fn setup(&self, user: &str) -> Setup {
        let (s, c) = self
            .post(
                "/credential/",
                user,
                json!({"data": {"type": "openai_credential", "name": "fake", "api_key": "sk-test-secret", "base_url": self.fake.url("/v1")}}),
            )
            .await;
        assert_eq!(s, 201, "{c}");
        let credential_id = c["credential_id"].as_str().unwrap().to_owned();
        self.setup_with_credential(user, &credential_id).await
    }

    /// An agent and a session of `user` on the stored credential
    /// `credential_id`.
    pub(crate) async fn setup_with_credential(&self, user: &str, credential_id: &str) -> Setup {
        let credential_id = credential_id.to_owned();
        let (s, a) = self
            .post(
                "/agent/",
                user,
                json!({"name": "Friday", "system_prompt": "You are Friday."}),
            )
            .await;
        assert_eq!(s, 201, "{a}");
        let agent_id = a["agent_id"].as_str().unwrap().to_owned();
        let (s, sess) = self
            .post(
                "/sessions/",
                user,
                json!({"agent_id": agent_id, "chat_model_config": {"type": "openai_credential", "credential_id": credential_id, "model": "gpt-4.1", "parameters": {}}}),
            )
            .await;
        assert_eq!(s, 201, "{sess}");
        Setup {
            credential_id,
            agent_id,
            session_id: sess["session_id"].as_str().unwrap().to_owned(),
        }
    }

    pub(crate) async fn chat(&self, user: &str, s: &Setup, input: Value) -> (u16, Value) {
        self.post(
            "/chat/",
            user,
            json!({"agent_id": s.agent_id, "session_id": s.session_id, "input": input}),
        )
        .await
    }

    /// The session's first page of messages (200 asserted).
    pub(crate) async fn messages(&self, user: &str, s: &Setup) -> Value {
        let path = format!(
            "/sessions/{}/messages?agent_id={}",
            s.session_id, s.agent_id
        );
        let (code, page) = self.get(&path, user).await;
        assert_eq!(code, 200, "{page}");
        page
    }

    pub(crate) async fn status(&self, user: &str, s: &Setup) -> String {
        let (code, body) = self
            .get(
                &format!("/sessions/{}/status?agent_id={}", s.session_id, s.agent_id),
                user,
            )
            .await;
        assert_eq!(code, 200, "{body}");
        body["status"].as_str().unwrap().to_owned()
    }

    /// Waits until the session's run is over.
    pub(crate) async fn wait_not_running(&self, user: &str, s: &Setup) -> String {
        for _ in 0..500 {
            let status = self.status(user, s).await;
            if status != "running" {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the run did not finish");
    }

    pub(crate) async fn subscribe(&self, user: &str, s: &Setup, after: Option<&str>) -> Sse {
        let mut path = format!("/sessions/{}/stream?agent_id={}", s.session_id, s.agent_id);
        if let Some(after) = after {
            path.push_str(&format!("&after={after}"));
        }
        let res = self
            .request(reqwest::Method::GET, &path, user)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200);
        assert_eq!(
            res.headers()["content-type"].to_str().unwrap(),
            "text/event-stream; charset=utf-8"
        );
        Sse {
            body: Box::pin(res.bytes_stream().map(|c| c.map(|b| b.to_vec()))),
            buf: Vec::new(),
            raw: Vec::new(),
            heartbeats: 0,
        }
    }
}

/// The sandbox when bubblewrap runs here; otherwise the local workspace,
/// after a loud message (a failure in CI, which installs bubblewrap).
async fn default_workspace() -> WorkspaceMode {
    let config = SandboxConfig::default();
    match oxiscope_workspace::probe_sandbox(&config).await {
        Ok(()) => WorkspaceMode::Sandbox(config),
        Err(e) => {
            no_sandbox(&e, "runs with the local workspace instead");
            WorkspaceMode::Local
        }
    }
}

/// Says loudly, straight to the process's stderr (the harness's capture
/// cannot hide it), that the running test goes without the sandbox, and
/// records it for `.ci/run`'s summary: a line `test name: what (why)`
/// appended to the file that `OXISCOPE_TEST_SKIPS` names, when set. In CI
/// (`CI=true`) it fails the test instead.
fn no_sandbox(e: &oxiscope_workspace::Error, what: &str) {
    oxiscope_test_support::skip(&format!("{what} (no sandbox: {e})"));
}

pub(crate) struct Setup {
    pub(crate) credential_id: String,
    pub(crate) agent_id: String,
    pub(crate) session_id: String,
}

type ByteStream =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<Vec<u8>>> + Send>>;

/// Reads `data:` frames off an SSE response.
pub(crate) struct Sse {
    body: ByteStream,
    buf: Vec<u8>,
    /// Every data frame's JSON text, as sent.
    pub(crate) raw: Vec<String>,
    /// How many `:` heartbeats were skipped.
    pub(crate) heartbeats: usize,
}

impl Sse {
    /// The next event (heartbeats skipped).
    pub(crate) async fn next(&mut self) -> Value {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buf.drain(..end + 2).collect();
                let text = String::from_utf8(frame).unwrap();
                if text.starts_with(':') {
                    assert_eq!(text, ":\n\n");
                    self.heartbeats += 1;
                    continue;
                }
                let data = text
                    .strip_prefix("data: ")
                    .unwrap_or_else(|| panic!("not a data frame: {text:?}"))
                    .trim_end_matches('\n')
                    .to_owned();
                self.raw.push(data.clone());
                return serde_json::from_str(&data).unwrap();
            }
            // Generous: under the whole suite's load a sandboxed tool
            // round (the first command of a warm sandbox starts it) has
            // taken over 10 s here; a stream that stopped still fails.
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.body.next())
                .await
                .expect("an SSE frame in time")
                .expect("the stream stays open")
                .unwrap();
            self.buf.extend(chunk);
        }
    }

    /// Waits for `n` heartbeats in total.
    pub(crate) async fn wait_heartbeats(&mut self, n: usize) {
        while self.heartbeats < n {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buf.drain(..end + 2).collect();
                assert_eq!(frame, b":\n\n", "only heartbeats expected");
                self.heartbeats += 1;
                continue;
            }
            // Generous: under the whole suite's load a sandboxed tool
            // round (the first command of a warm sandbox starts it) has
            // taken over 10 s here; a stream that stopped still fails.
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.body.next())
                .await
                .expect("a heartbeat in time")
                .expect("the stream stays open")
                .unwrap();
            self.buf.extend(chunk);
        }
    }

    /// The events that arrive until none has come for `quiet`.
    pub(crate) async fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        let mut events = Vec::new();
        while let Ok(event) = tokio::time::timeout(quiet, self.next()).await {
            events.push(event);
        }
        events
    }

    /// Events up to and including the first of type `until`.
    pub(crate) async fn until(&mut self, until: &str) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            let done = event["type"] == until;
            events.push(event);
            if done {
                return events;
            }
        }
    }
}

pub(crate) fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

/// A plain text answer.
pub(crate) fn text_answer(text: &str) -> oxiscope_test_support::ScriptedResponse {
    OpenAiScript::new()
        .text(text)
        .finish("stop")
        .usage(10, 2, 0)
        .response()
}
