//! `oxiscope serve` as a real process: killed mid-run and restarted, shut
//! down gracefully mid-run, and API keys from `oxiscope keys create`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_test_support::{FakeServer, OpenAiScript, ScriptedResponse};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_oxiscope");

/// A running `oxiscope serve` and its base URL.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn start(dir: &Path, dev_auth: bool) -> Self {
        Self::start_with(dir, dev_auth, &[])
    }

    fn start_with(dir: &Path, dev_auth: bool, extra: &[&str]) -> Self {
        let mut cmd = Command::new(BIN);
        // The fake model servers of these tests are on loopback.
        cmd.args(["serve", "--addr", "127.0.0.1:0"])
            .arg("--allow-private-model-endpoints")
            .arg("--data-dir")
            .arg(dir)
            .args(workspace_args())
            .args(extra)
            .env_remove("OXISCOPE_SECRET_KEY")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if dev_auth {
            cmd.arg("--dev-auth");
        }
        let mut child = cmd.spawn().unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let base = loop {
            let line = lines
                .next()
                .expect("the server reports its address")
                .unwrap();
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        };
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        Self { child, base }
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    fn terminate(mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        self.child.wait().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// The default (sandboxed) workspaces where bubblewrap runs; elsewhere
/// `--workspace local` after a loud message (a failure in CI, which
/// installs bubblewrap).
fn workspace_args() -> Vec<&'static str> {
    let bwrap = Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if bwrap {
        return Vec::new();
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI must run the service sandboxed: bubblewrap does not work here"
    );
    eprintln!(
        "\n!!! SKIPPED the sandbox: bubblewrap does not work here; serving with --workspace local\n"
    );
    vec!["--workspace", "local"]
}

struct Client {
    http: reqwest::Client,
    base: String,
    auth: (&'static str, String),
}

impl Client {
    fn new(server: &Server, auth: (&'static str, String)) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self {
            http: reqwest::Client::new(),
            base: server.base.clone(),
            auth,
        }
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header(self.auth.0, &self.auth.1);
        if let Some(body) = body {
            req = req
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let res = req.send().await.unwrap();
        let code = res.status().as_u16();
        let text = res.text().await.unwrap();
        (code, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, None).await
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    /// Reads SSE frames until an event of type `until`.
    async fn stream_until(&self, path: &str, until: &str) -> Vec<Value> {
        let res = self
            .http
            .get(format!("{}{path}", self.base))
            .header(self.auth.0, &self.auth.1)
            .send()
            .await
            .unwrap();
        let mut body = res.bytes_stream();
        let mut buf = Vec::new();
        let mut events = Vec::new();
        loop {
            while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = buf.drain(..end + 2).collect();
                let text = String::from_utf8(frame).unwrap();
                let Some(data) = text.strip_prefix("data: ") else {
                    continue;
                };
                let event: Value = serde_json::from_str(data.trim_end()).unwrap();
                let done = event["type"] == until;
                events.push(event);
                if done {
                    return events;
                }
            }
            let chunk = tokio::time::timeout(Duration::from_secs(15), body.next())
                .await
                .expect("an event in time")
                .expect("stream open")
                .unwrap();
            buf.extend_from_slice(&chunk);
        }
    }
}

struct Ids {
    agent: String,
    session: String,
}

async fn setup(c: &Client, fake: &FakeServer) -> Ids {
    let (code, cred) = c
        .post(
            "/credential/",
            json!({"data": {"type": "openai_credential", "api_key": "sk-x", "base_url": fake.url("/v1")}}),
        )
        .await;
    assert_eq!(code, 201, "{cred}");
    let (_, agent) = c.post("/agent/", json!({"name": "Friday"})).await;
    let agent = agent["agent_id"].as_str().unwrap().to_owned();
    let (_, session) = c
        .post(
            "/sessions/",
            json!({"agent_id": agent, "chat_model_config": {"type": "openai_credential", "credential_id": cred["credential_id"], "model": "gpt-4.1", "parameters": {}}}),
        )
        .await;
    Ids {
        agent,
        session: session["session_id"].as_str().unwrap().to_owned(),
    }
}

fn user_msg(text: &str) -> Value {
    json!({"name": "user", "role": "user", "content": [{"type": "text", "text": text}]})
}

fn slow_answer() -> ScriptedResponse {
    let mut script = OpenAiScript::new();
    for i in 0..100 {
        script = script.text(format!("w{i} "));
    }
    script
        .finish("stop")
        .usage(5, 100, 0)
        .response_paced(2, Duration::from_millis(100))
}

fn quick_answer(text: &str) -> ScriptedResponse {
    OpenAiScript::new()
        .text(text)
        .finish("stop")
        .usage(5, 1, 0)
        .response()
}

async fn chat(c: &Client, ids: &Ids, input: Value) -> u16 {
    let (code, body) = c
        .post(
            "/chat/",
            json!({"agent_id": ids.agent, "session_id": ids.session, "input": input}),
        )
        .await;
    assert!(code == 200 || code == 409, "{code} {body}");
    code
}

async fn messages(c: &Client, ids: &Ids) -> Value {
    let (code, page) = c
        .get(&format!(
            "/sessions/{}/messages?agent_id={}",
            ids.session, ids.agent
        ))
        .await;
    assert_eq!(code, 200);
    page
}

async fn status(c: &Client, ids: &Ids) -> String {
    let (_, body) = c
        .get(&format!(
            "/sessions/{}/status?agent_id={}",
            ids.session, ids.agent
        ))
        .await;
    body["status"].as_str().unwrap().to_owned()
}

fn dev() -> (&'static str, String) {
    ("x-user-id", "alice".to_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_mid_run_restarts_with_an_honest_loadable_session() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeServer::start().await.unwrap();
    let server = Server::start(dir.path(), true);
    let c = Client::new(&server, dev());
    let ids = setup(&c, &fake).await;
    let stream = format!("/sessions/{}/stream?agent_id={}", ids.session, ids.agent);

    fake.push(slow_answer());
    assert_eq!(chat(&c, &ids, user_msg("tell me a long story")).await, 200);
    c.stream_until(&stream, "TEXT_BLOCK_DELTA").await;
    assert_eq!(status(&c, &ids).await, "running");
    server.kill();

    let server = Server::start(dir.path(), true);
    let c = Client::new(&server, dev());
    // The lock died with the process; the user's message was stored before
    // the model was called.
    assert_eq!(status(&c, &ids).await, "idle");
    let page = messages(&c, &ids).await;
    assert_eq!(page["is_running"], false);
    let first = &page["messages"][0];
    assert_eq!(first["role"], "user", "{page}");
    assert!(first.to_string().contains("long story"));

    // The next chat works, and the model sees the earlier message.
    fake.push(quick_answer("Once upon a time."));
    assert_eq!(chat(&c, &ids, user_msg("short version please")).await, 200);
    let events = c.stream_until(&stream, "REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    // (The session's title call, after this first completed reply, may
    // come after it.)
    let requests = fake.requests();
    let chat_request = requests
        .iter()
        .map(|r| r.body_text())
        .find(|body| body.contains("short version"))
        .unwrap();
    assert!(chat_request.contains("long story"));
    let page = messages(&c, &ids).await;
    let roles: Vec<&str> = page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    // Oldest first: the interrupted turn left only its user message.
    assert_eq!(roles, ["user", "user", "assistant"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_graceful_shutdown_interrupts_and_persists_the_running_reply() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeServer::start().await.unwrap();
    let server = Server::start(dir.path(), true);
    let c = Client::new(&server, dev());
    let ids = setup(&c, &fake).await;
    let stream = format!("/sessions/{}/stream?agent_id={}", ids.session, ids.agent);

    fake.push(slow_answer());
    chat(&c, &ids, user_msg("go on")).await;
    c.stream_until(&stream, "TEXT_BLOCK_DELTA").await;
    let exit = server.terminate();
    assert!(exit.success(), "{exit:?}");

    let server = Server::start(dir.path(), true);
    let c = Client::new(&server, dev());
    let page = messages(&c, &ids).await;
    let msgs = page["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2, "{page}");
    let reply = &msgs[1];
    assert_eq!(reply["role"], "assistant", "{page}");
    assert_eq!(reply["finished_reason"], "interrupted");
    assert_eq!(status(&c, &ids).await, "idle");
    drop(server);
}

/// As root on Debian, whose `/root` is `0700`: the sandbox user may not
/// pass through the directories above the data directory, and the first
/// chat's tool call must still run, confined.
#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_tool_call_works_with_the_data_dir_under_a_private_home() {
    use std::os::unix::fs::PermissionsExt as _;

    let top = tempfile::tempdir().unwrap();
    let home = top.path().join("home");
    std::fs::create_dir(&home).unwrap();
    for dir in [top.path(), home.as_path()] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let fake = FakeServer::start().await.unwrap();
    let server = Server::start(&home.join("data"), true);
    let c = Client::new(&server, dev());
    let ids = setup(&c, &fake).await;
    let stream = format!("/sessions/{}/stream?agent_id={}", ids.session, ids.agent);
    // A read-only command: it runs without asking, in the sandbox.
    fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_1", "Bash")
            .tool_args(
                0,
                json!({"command": "pwd && ls -a /workspace && id -u"}).to_string(),
            )
            .finish("tool_calls")
            .usage(5, 1, 0)
            .response(),
    );
    fake.push(quick_answer("done"));
    assert_eq!(chat(&c, &ids, user_msg("where am I?")).await, 200);
    let events = c.stream_until(&stream, "REPLY_END").await;
    let end = events.last().unwrap();
    assert!(end.get("error").is_none_or(Value::is_null), "{end}");
    let page = messages(&c, &ids).await;
    let text = page.to_string();
    assert!(text.contains("/workspace"), "{text}");
    if workspace_args().is_empty() && running_as_root() {
        // Confined: as root the sandbox runs as another user.
        assert!(text.contains("65534"), "{text}");
    }
    drop(server);
}

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_knowledge_base_limits_are_set_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        true,
        &["--kb-max-upload-mib", "1", "--kb-max-bases-per-user", "1"],
    );
    let c = Client::new(&server, dev());
    let kb = json!({
        "name": "One",
        "embedding_model_config": {"type": "local", "credential_id": "local", "model": "offline", "dimensions": 384},
    });
    let (code, created) = c.post("/knowledge_bases/", kb.clone()).await;
    assert_eq!(code, 201, "{created}");
    let (code, _) = c.post("/knowledge_bases/", kb).await;
    assert_eq!(code, 403);
    let id = created["knowledge_base_id"].as_str().unwrap();
    let boundary = "limitBoundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.txt\"\r\n\r\n"
    )
    .into_bytes();
    body.extend(std::iter::repeat_n(b'a', (1 << 20) + 10));
    body.extend(format!("\r\n--{boundary}--\r\n").as_bytes());
    let res = c
        .http
        .post(format!("{}/knowledge_bases/{id}/documents", c.base))
        .header(c.auth.0, &c.auth.1)
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 413);
}

#[tokio::test]
async fn keys_created_on_the_command_line_authenticate() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["keys", "create", "--user", "carol", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(key.starts_with("oxk_"));

    let server = Server::start(dir.path(), false);
    let c = Client::new(&server, ("authorization", format!("Bearer {key}")));
    let (code, _) = c.post("/agent/", json!({"name": "K"})).await;
    assert_eq!(code, 201);
    let (code, list) = c.get("/agent/").await;
    assert_eq!(
        (code, list["agents"][0]["user_id"].clone()),
        (200, json!("carol"))
    );

    // Without a key, or with the development header, nothing.
    let anonymous = Client::new(&server, ("x-user-id", "carol".to_owned()));
    let (code, _) = anonymous.get("/agent/").await;
    assert_eq!(code, 401);

    // The key file was created private.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("secret.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

/// What a newcomer does: starts `serve` with a data dir of their own,
/// pastes the key command it prints, then lists and revokes the key.
#[tokio::test(flavor = "multi_thread")]
async fn the_key_command_serve_prints_writes_where_serve_reads_and_keys_can_be_revoked() {
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("my data");
    let mut child = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--data-dir"])
        .arg(&dir)
        .args(workspace_args())
        .env_remove("OXISCOPE_SECRET_KEY")
        .env_remove("OXISCOPE_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (mut base, mut printed) = (None, None);
    while printed.is_none() {
        let line = lines.next().expect("serve says how to make a key").unwrap();
        if let Some(rest) = line.split("listening on ").nth(1) {
            base = Some(rest.split_whitespace().next().unwrap().to_owned());
        }
        printed = line.split("create a key with: ").nth(1).map(str::to_owned);
    }
    std::thread::spawn(move || for _ in lines {});
    let server = Server {
        child,
        base: base.unwrap(),
    };
    let printed = printed.unwrap();
    assert!(printed.contains("--data-dir"), "{printed}");
    let pasted = printed
        .replacen("oxiscope ", &format!("'{BIN}' "), 1)
        .replace("NAME", "dave");
    let out = Command::new("sh").args(["-c", &pasted]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{pasted}: {said}");
    assert!(
        said.contains(&format!("the SQLite database in {}", dir.display())),
        "{said}"
    );
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let c = Client::new(&server, ("authorization", format!("Bearer {key}")));
    assert_eq!(c.get("/agent/").await.0, 200);

    let keys = |args: &[&str]| {
        let out = Command::new(BIN)
            .arg("keys")
            .args(args)
            .arg("--data-dir")
            .arg(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (
            out.status.success(),
            String::from_utf8(out.stdout).unwrap(),
            stderr,
        )
    };
    let (ok, listed, _) = keys(&["list", "--json"]);
    assert!(ok);
    let rows: Vec<Value> = listed
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{listed}");
    assert_eq!(rows[0]["user"], "dave");
    let id = rows[0]["id"].as_str().unwrap().to_owned();
    assert!(!listed.contains(&key), "a listing never shows the key");
    let (ok, table, _) = keys(&["list"]);
    assert!(
        ok && table.contains(&id) && table.contains("dave"),
        "{table}"
    );

    let (ok, _, said) = keys(&["revoke", "deadbeef00"]);
    assert!(!ok && said.contains("no API key"), "{said}");
    let (ok, _, said) = keys(&["revoke", &id]);
    assert!(ok, "{said}");
    assert!(said.contains("revoked") && said.contains(&id), "{said}");
    assert_eq!(
        c.get("/agent/").await.0,
        401,
        "a revoked key is refused at once"
    );
    let (_, listed, _) = keys(&["list", "--json"]);
    assert_eq!(listed.trim(), "");
}

#[test]
fn serve_refuses_to_start_without_a_sandbox_unless_told_to_run_unconfined() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            // Bubblewrap asked for by name: `auto` would fall back to
            // Landlock where the kernel has it.
            "--sandbox",
            "bwrap",
            "--bwrap",
            "/nonexistent/bwrap",
            "--data-dir",
        ])
        .arg(dir.path().join("data"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bubblewrap"), "{stderr}");
    assert!(stderr.contains("--workspace local"), "{stderr}");
    assert!(
        !dir.path().join("data").exists(),
        "nothing is created before the check"
    );

    let server = Server::start_with(&dir.path().join("data"), true, &["--workspace", "local"]);
    drop(server);
}

#[test]
fn the_data_directory_is_absolute_and_private() {
    use std::os::unix::fs::PermissionsExt as _;

    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir.path())
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--data-dir",
            "relative-data",
            "--allow-private-model-endpoints",
        ])
        .args(workspace_args())
        .env_remove("OXISCOPE_SECRET_KEY")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let listening = loop {
        let line = lines.next().expect("the server starts").unwrap();
        if line.contains("listening on") {
            break line;
        }
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let data = std::fs::canonicalize(dir.path().join("relative-data")).unwrap();
    assert!(
        listening.contains(&format!("(data in {})", data.display())),
        "{listening}"
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    // Private to this user even when sandboxes run as another (root):
    // they reach their workspaces through a mount, not by passing through.
    assert_eq!(mode(&data), 0o700, "{:o}", mode(&data));
    assert_eq!(mode(&data.join("workspaces")), 0o700);
    assert_eq!(mode(&data.join("oxiscope.db")), 0o600);
    assert_eq!(mode(&data.join("secret.key")), 0o600);
}

/// `oxiscope serve` with debug logs as JSON lines; the thread returns
/// every stderr line once the process ends.
fn start_logging(dir: &Path, sealing_key: &str) -> (Server, std::thread::JoinHandle<Vec<String>>) {
    let mut child = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--log-level", "debug"])
        .arg("--allow-private-model-endpoints")
        .args(["--log-format", "json", "--data-dir"])
        .arg(dir)
        .args(workspace_args())
        .env("OXISCOPE_SECRET_KEY", sealing_key)
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (address, base) = std::sync::mpsc::channel();
    let logs = std::thread::spawn(move || {
        let mut all = Vec::new();
        for line in lines.map_while(Result::ok) {
            if let Some(rest) = line.split("listening on ").nth(1) {
                let _ = address.send(rest.split_whitespace().next().unwrap().to_owned());
            }
            all.push(line);
        }
        all
    });
    let base = base
        .recv_timeout(Duration::from_secs(30))
        .expect("the server reports its address");
    (Server { child, base }, logs)
}

#[tokio::test(flavor = "multi_thread")]
async fn debug_logs_of_a_whole_conversation_carry_no_secret() {
    const SEALING_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const MODEL_KEY: &str = "sk-logtest-7f3a9c0e5b1d4f2a";
    const WRONG_KEY: &str = "oxk_logtest_not_a_key_5e8c2b";
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["keys", "create", "--user", "carol", "--data-dir"])
        .arg(dir.path())
        .env("OXISCOPE_SECRET_KEY", SEALING_KEY)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let api_key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let fake = FakeServer::start().await.unwrap();
    let (server, logs) = start_logging(dir.path(), SEALING_KEY);
    let c = Client::new(&server, ("authorization", format!("Bearer {api_key}")));

    // A credential, an agent, a session, and a reply streamed to the end.
    let (code, cred) = c
        .post(
            "/credential/",
            json!({"data": {"type": "openai_credential", "name": "mine", "api_key": MODEL_KEY, "base_url": fake.url("/v1")}}),
        )
        .await;
    assert_eq!(code, 201, "{cred}");
    let (_, agent) = c.post("/agent/", json!({"name": "Friday"})).await;
    let (code, session) = c
        .post(
            "/sessions/",
            json!({"agent_id": agent["agent_id"], "chat_model_config": {"type": "openai_credential", "credential_id": cred["credential_id"], "model": "gpt-4.1", "parameters": {}}}),
        )
        .await;
    assert_eq!(code, 201, "{session}");
    let ids = Ids {
        agent: agent["agent_id"].as_str().unwrap().to_owned(),
        session: session["session_id"].as_str().unwrap().to_owned(),
    };
    let stream = format!("/sessions/{}/stream?agent_id={}", ids.session, ids.agent);
    fake.push(quick_answer("All good."));
    assert_eq!(chat(&c, &ids, user_msg("how are things?")).await, 200);
    let events = c.stream_until(&stream, "REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    let sent = fake.requests()[0]
        .header("authorization")
        .map(str::to_owned);
    assert_eq!(
        sent,
        Some(format!("Bearer {MODEL_KEY}")),
        "the key was used"
    );

    // A run that fails at the model, a wrong key, the credential read back.
    // (Once the first run has let go: an input sent while it still holds
    // the session would be served by it.)
    for _ in 0..500 {
        if status(&c, &ids).await == "idle" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    fake.push(oxiscope_test_support::openai_invalid_api_key());
    assert_eq!(chat(&c, &ids, user_msg("again")).await, 200);
    let events = c.stream_until(&stream, "REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "error");
    let wrong = Client::new(&server, ("authorization", format!("Bearer {WRONG_KEY}")));
    assert_eq!(wrong.get("/agent/").await.0, 401);
    let (code, creds) = c.get("/credential/").await;
    assert_eq!(code, 200);
    assert!(!creds.to_string().contains(MODEL_KEY));
    assert!(server.terminate().success());
    let logs = logs.join().unwrap();
    let text = logs.join("\n");

    for secret in [MODEL_KEY, &api_key, WRONG_KEY, SEALING_KEY] {
        assert!(!text.contains(secret), "{secret:?} was logged:\n{text}");
    }
    // The logs were there to leak it: JSON lines at debug level, a span per
    // request with its id, status and latency, and the failed run's cause.
    let entries: Vec<Value> = logs
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(entries.len() > 20, "{text}");
    // No header of a request either (the startup banner, not a log entry,
    // names the scheme).
    for entry in &entries {
        let line = entry.to_string().to_ascii_lowercase();
        assert!(!line.contains("bearer"), "{entry}");
    }
    assert!(entries.iter().any(|e| e["level"] == "DEBUG"), "{text}");
    let finished = |route: &str, status: u16| {
        entries.iter().any(|e| {
            e["fields"]["message"] == "request finished"
                && e["span"]["route"] == route
                && e["fields"]["status"] == status
                && e["fields"]["latency_ms"].is_number()
                && e["span"]["request_id"]
                    .as_str()
                    .is_some_and(|id| id.len() == 32)
        })
    };
    assert!(finished("/chat/", 200), "{text}");
    assert!(finished("/credential/", 201), "{text}");
    assert!(finished("/agent/", 401), "{text}");
    assert!(
        entries.iter().any(|e| {
            e["level"] == "ERROR"
                && e["fields"]["message"] == "chat run ended with an error"
                && e["fields"]["cause"]
                    .as_str()
                    .is_some_and(|c| c.contains("Incorrect API key"))
        }),
        "{text}"
    );
}

#[test]
fn a_dev_server_refuses_requests_for_another_host() {
    use std::io::{Read as _, Write as _};

    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), true);
    let addr = server.base.trim_start_matches("http://").to_owned();
    let port = addr.rsplit(':').next().unwrap().to_owned();
    let status = |host: &str| {
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            stream,
            "GET /agent/ HTTP/1.1\r\nhost: {host}\r\nx-user-id: alice\r\nconnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response.split(' ').nth(1).unwrap().to_owned()
    };
    // The port is the one bound (`--addr 127.0.0.1:0`), not the one asked for.
    assert_eq!(status(&format!("localhost:{port}")), "200");
    assert_eq!(status(&format!("evil.example:{port}")), "403");
    assert_eq!(status("localhost:0"), "403");
}

#[test]
fn a_bad_log_level_stops_serve_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--log-level", "loud"])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("invalid --log-level \"loud\""), "{stderr}");
    assert!(!dir.path().join("data").exists());
}

/// Two `oxiscope serve` replicas on one PostgreSQL database with one
/// sealing key (`--database-url`, `--key-file`), and an API key created by
/// `oxiscope keys create --database-url`: what one replica stores (a
/// sealed credential included) the other reads and runs with.
#[tokio::test(flavor = "multi_thread")]
async fn replicas_on_one_postgres_database_share_keys_credentials_and_sessions() {
    let Some(pg) = oxiscope_test_support::servers::postgres::TestPostgres::start() else {
        return;
    };
    let url = pg.fresh_database();
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("sealing.key");
    // The base64 of 32 bytes.
    std::fs::write(&key_file, "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=\n").unwrap();
    let out = Command::new(BIN)
        .args(["keys", "create", "--user", "dora", "--database-url", &url])
        .arg("--data-dir")
        .arg(dir.path().join("keys"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(
        !dir.path().join("keys").join("oxiscope.db").exists(),
        "the key went to PostgreSQL, not to a SQLite file"
    );

    let shared = [
        "--database-url",
        &url,
        "--key-file",
        key_file.to_str().unwrap(),
    ];
    let a = Server::start_with(&dir.path().join("a"), false, &shared);
    let b = Server::start_with(&dir.path().join("b"), false, &shared);
    let auth = ("authorization", format!("Bearer {key}"));
    let (ca, cb) = (Client::new(&a, auth.clone()), Client::new(&b, auth));
    let fake = FakeServer::start().await.unwrap();
    let ids = setup(&ca, &fake).await;
    let stream = format!("/sessions/{}/stream?agent_id={}", ids.session, ids.agent);

    fake.push(quick_answer("Hello from A."));
    assert_eq!(chat(&ca, &ids, user_msg("hi A")).await, 200);
    let events = ca.stream_until(&stream, "REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    // A has committed the reply once its run is over.
    for _ in 0..500 {
        if status(&ca, &ids).await == "idle" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // Replica B unseals the credential A stored and continues the session.
    assert_eq!(
        messages(&cb, &ids).await["messages"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    fake.push(quick_answer("Hello from B."));
    assert_eq!(chat(&cb, &ids, user_msg("hi B")).await, 200);
    let events = cb.stream_until(&stream, "REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    let chat_request = fake
        .requests()
        .iter()
        .map(|r| r.body_text())
        .find(|body| body.contains("hi B"))
        .unwrap();
    assert!(chat_request.contains("Hello from A."), "{chat_request}");
    let page = messages(&ca, &ids).await;
    let texts: Vec<String> = page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(texts.len(), 4, "{page}");
    assert!(texts[3].contains("Hello from B."), "{page}");
    assert!(!dir.path().join("a").join("oxiscope.db").exists());
}

#[test]
fn a_bad_database_or_vector_store_url_stops_serve_without_echoing_it() {
    let dir = tempfile::tempdir().unwrap();
    for (url, expected) in [
        ("mysql://root:hunter2@db/x", "expected postgres://"),
        ("postgres://root:hunter2@127.0.0.1:1/x", "PostgreSQL"),
    ] {
        let out = Command::new(BIN)
            .args(["serve", "--addr", "127.0.0.1:0", "--workspace", "local"])
            .args(["--database-url", url, "--data-dir"])
            .arg(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
    for (url, expected) in [
        ("mysql://root:hunter2@db/x", "starts with postgres://"),
        (
            "postgres://root:hunter2@127.0.0.1:1/x",
            "--vector-store-url",
        ),
        ("http://root:hunter2@127.0.0.1:1", "--vector-store-url"),
    ] {
        let out = Command::new(BIN)
            .args(["serve", "--addr", "127.0.0.1:0", "--workspace", "local"])
            .args(["--vector-store-url", url, "--data-dir"])
            .arg(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{url}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
    let out = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--workspace", "local"])
        .args(["--key-file", "/nonexistent/key", "--data-dir"])
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--key-file"), "{stderr}");
}

/// Two replicas sharing PostgreSQL and Redis: a run on A streams, event by
/// event, to an SSE subscriber on B, and B sees the session running.
#[tokio::test(flavor = "multi_thread")]
async fn replicas_on_postgres_and_redis_stream_a_run_to_a_subscriber_on_the_other() {
    let Some(pg) = oxiscope_test_support::servers::postgres::TestPostgres::start() else {
        return;
    };
    let Some(redis) = oxiscope_test_support::servers::redis::TestRedis::start() else {
        return;
    };
    let url = pg.fresh_database();
    let redis_url = redis.url();
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("sealing.key");
    std::fs::write(&key_file, "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=\n").unwrap();
    let shared = [
        "--database-url",
        &url,
        "--key-file",
        key_file.to_str().unwrap(),
        "--redis-url",
        &redis_url,
    ];
    let a = Server::start_with(&dir.path().join("a"), true, &shared);
    let b = Server::start_with(&dir.path().join("b"), true, &shared);
    let (ca, cb) = (Client::new(&a, dev()), Client::new(&b, dev()));
    let fake = FakeServer::start().await.unwrap();
    let ids = setup(&ca, &fake).await;
    let stream = format!("/sessions/{}/stream?agent_id={}", ids.session, ids.agent);

    fake.push(slow_answer());
    let watcher = tokio::spawn({
        let stream = stream.clone();
        async move { cb.stream_until(&stream, "REPLY_END").await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(chat(&ca, &ids, user_msg("hi")).await, 200);
    let cb = Client::new(&b, dev());
    tokio::time::sleep(Duration::from_millis(300)).await;
    // B sees A's run as running (the lock is in Redis).
    assert_eq!(status(&cb, &ids).await, "running");
    let events = watcher.await.unwrap();
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    let text: String = events.iter().filter_map(|e| e["delta"].as_str()).collect();
    assert!(text.contains("w0 ") && text.contains("w99 "), "{text}");
    // A late subscriber without a cursor, on A, gets what follows the
    // persisted messages: the run's end, from the log in Redis.
    let replay = ca.stream_until(&stream, "REPLY_END").await;
    assert_eq!(replay.last().unwrap()["finished_reason"], "completed");
}

/// Two replicas on one PostgreSQL database and one Redis, with 2 s run
/// locks (so a dead replica's runs are taken over within seconds), and a
/// user whose first agent talks to `fake`.
struct Replicas {
    // Declared first: the replicas stop before the servers they use.
    a: Option<Server>,
    b: Server,
    fake: FakeServer,
    ids: Ids,
    stream: String,
    dir: tempfile::TempDir,
    _pg: oxiscope_test_support::servers::postgres::TestPostgres,
    _redis: oxiscope_test_support::servers::redis::TestRedis,
}

impl Replicas {
    /// `None` (after a loud skip message; a failure under `CI=true`)
    /// without `postgres` or `redis-server`.
    async fn start(extra: &[&str], agent: Value) -> Option<Self> {
        let pg = oxiscope_test_support::servers::postgres::TestPostgres::start()?;
        let redis = oxiscope_test_support::servers::redis::TestRedis::start()?;
        let url = pg.fresh_database();
        let redis_url = redis.url();
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join("sealing.key");
        std::fs::write(&key_file, "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=\n").unwrap();
        let mut args = vec![
            "--database-url",
            &url,
            "--key-file",
            key_file.to_str().unwrap(),
            "--redis-url",
            &redis_url,
            "--lock-ttl-secs",
            "2",
        ];
        args.extend_from_slice(extra);
        let a = Server::start_with(&dir.path().join("a"), true, &args);
        let b = Server::start_with(&dir.path().join("b"), true, &args);
        let fake = FakeServer::start().await.unwrap();
        let ca = Client::new(&a, dev());
        let (code, cred) = ca
            .post(
                "/credential/",
                json!({"data": {"type": "openai_credential", "api_key": "sk-x", "base_url": fake.url("/v1")}}),
            )
            .await;
        assert_eq!(code, 201, "{cred}");
        let (code, agent) = ca.post("/agent/", agent).await;
        assert_eq!(code, 201, "{agent}");
        let agent = agent["agent_id"].as_str().unwrap().to_owned();
        let (_, session) = ca
            .post(
                "/sessions/",
                json!({"agent_id": agent, "chat_model_config": {"type": "openai_credential", "credential_id": cred["credential_id"], "model": "gpt-4.1", "parameters": {}}}),
            )
            .await;
        let ids = Ids {
            agent,
            session: session["session_id"].as_str().unwrap().to_owned(),
        };
        let stream = format!("/sessions/{}/stream?agent_id={}", ids.session, ids.agent);
        Some(Self {
            a: Some(a),
            b,
            fake,
            ids,
            stream,
            dir,
            _pg: pg,
            _redis: redis,
        })
    }

    fn ca(&self) -> Client {
        Client::new(self.a.as_ref().unwrap(), dev())
    }

    fn cb(&self) -> Client {
        Client::new(&self.b, dev())
    }

    /// `kill -9` replica A.
    fn kill_a(&mut self) {
        self.a.take().unwrap().kill();
    }

    /// How many lines reading `line` the files named `name` hold, under
    /// both replicas' data directories.
    fn lines_in(&self, name: &str, line: &str) -> usize {
        fn walk(dir: &Path, name: &str, line: &str, n: &mut usize) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, name, line, n);
                } else if path.file_name().is_some_and(|f| f == name) {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    *n += text.lines().filter(|l| l.trim() == line).count();
                }
            }
        }
        let mut n = 0;
        walk(self.dir.path(), name, line, &mut n);
        n
    }
}

/// Every event a subscriber gets within `window`.
async fn events_within(c: &Client, path: &str, window: Duration) -> Vec<Value> {
    let res = c
        .http
        .get(format!("{}{path}", c.base))
        .header(c.auth.0, &c.auth.1)
        .send()
        .await
        .unwrap();
    let mut body = res.bytes_stream();
    let mut buf = Vec::new();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + window;
    while let Ok(Some(chunk)) = tokio::time::timeout_at(deadline, body.next()).await {
        buf.extend_from_slice(&chunk.unwrap());
        while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
            let frame: Vec<u8> = buf.drain(..end + 2).collect();
            let text = String::from_utf8(frame).unwrap();
            if let Some(data) = text.strip_prefix("data: ") {
                events.push(serde_json::from_str(data.trim_end()).unwrap());
            }
        }
    }
    events
}

fn count(events: &[Value], kind: &str) -> usize {
    events.iter().filter(|e| e["type"] == kind).count()
}

/// The session's replay cursor now (from its messages page).
async fn cursor(c: &Client, ids: &Ids) -> String {
    messages(c, ids).await["event_cursor"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// After the takeover: one error end that says the reply can be retried,
/// for the reply that started.
fn assert_taken_over(events: &[Value]) {
    assert_eq!(count(events, "REPLY_START"), 1, "{events:?}");
    assert_eq!(count(events, "REPLY_END"), 1, "{events:?}");
    let end = events.last().unwrap();
    assert_eq!(end["type"], "REPLY_END", "{events:?}");
    assert_eq!(end["finished_reason"], "error", "{end}");
    assert!(
        end["error"]["message"]
            .as_str()
            .unwrap()
            .contains("can be retried"),
        "{end}"
    );
    assert_eq!(end["reply_id"], events[0]["reply_id"], "{events:?}");
}

/// After the takeover the session takes the next chat on the survivor,
/// and that reply completes.
async fn chat_again_completes(r: &Replicas) {
    let cb = r.cb();
    for _ in 0..200 {
        if status(&cb, &r.ids).await == "idle" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status(&cb, &r.ids).await, "idle");
    // From the taken-over reply's end on (a subscriber without a cursor
    // could connect before the next run begins and get that end again).
    let after = cursor(&cb, &r.ids).await;
    r.fake.push(quick_answer("Back again."));
    let (code, body) = cb
        .post(
            "/chat/",
            json!({"agent_id": r.ids.agent, "session_id": r.ids.session, "input": user_msg("are you there?")}),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let events = cb
        .stream_until(&format!("{}&after={after}", r.stream), "REPLY_END")
        .await;
    assert_eq!(
        events.last().unwrap()["finished_reason"],
        "completed",
        "{events:?}"
    );
}

/// Replica A is killed (`kill -9`) while it streams a reply: replica B
/// ends the reply with one retryable error `REPLY_END`; a subscriber on B
/// sees the whole run once, one resuming with a cursor gets exactly the
/// rest, and the session chats again.
#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_while_streaming_has_its_reply_ended_by_the_survivor() {
    let Some(mut r) = Replicas::start(&[], json!({"name": "Friday"})).await else {
        return;
    };
    let (ca, cb) = (r.ca(), r.cb());
    r.fake.push(slow_answer());
    let watcher = tokio::spawn({
        let stream = r.stream.clone();
        async move { cb.stream_until(&stream, "REPLY_END").await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(chat(&ca, &r.ids, user_msg("a long story")).await, 200);
    ca.stream_until(&r.stream, "TEXT_BLOCK_DELTA").await;
    let cursor = cursor(&r.cb(), &r.ids).await;
    r.kill_a();

    let seen = watcher.await.unwrap();
    assert_taken_over(&seen);
    // Resuming with the cursor: exactly the events after it, no more
    // (nothing is published twice, even after further sweeps).
    let resumed = events_within(
        &r.cb(),
        &format!("{}&after={cursor}", r.stream),
        Duration::from_secs(4),
    )
    .await;
    let seq: usize = cursor.split_once('-').unwrap().1.parse().unwrap();
    assert_eq!(resumed, seen[seq..], "cursor {cursor}");
    chat_again_completes(&r).await;
}

/// Replica A is killed while a tool call runs (a slow Bash command):
/// replica B ends the reply with one retryable error `REPLY_END`, the
/// command is not run again, and the session chats again.
#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_during_a_tool_call_has_its_reply_ended_without_running_it_again() {
    let extra = ["--allow-mode", "default", "--allow-mode", "bypass"];
    let agent = json!({"name": "Friday", "permission_mode": "bypass"});
    let Some(mut r) = Replicas::start(&extra, agent).await else {
        return;
    };
    let (ca, cb) = (r.ca(), r.cb());
    let command = "echo started >> ran.txt; sleep 30; echo finished >> ran.txt";
    r.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_slow", "Bash")
            .tool_args(0, json!({"command": command}).to_string())
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response(),
    );
    let watcher = tokio::spawn({
        let stream = r.stream.clone();
        async move { cb.stream_until(&stream, "REPLY_END").await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(chat(&ca, &r.ids, user_msg("run the slow thing")).await, 200);
    ca.stream_until(&r.stream, "TOOL_CALL_END").await;
    // The command has started.
    for _ in 0..200 {
        if r.lines_in("ran.txt", "started") == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(r.lines_in("ran.txt", "started"), 1);
    r.kill_a();

    let seen = watcher.await.unwrap();
    assert_taken_over(&seen);
    assert_eq!(count(&seen, "TOOL_CALL_START"), 1, "{seen:?}");
    // The call is in doubt: the end names it...
    let message = seen.last().unwrap()["error"]["message"].to_string();
    assert!(message.contains("Bash (call_slow)"), "{message}");
    assert!(message.contains("may or may not have run"), "{message}");
    chat_again_completes(&r).await;
    // ...and so does the note the model read in the next turn.
    let asked = r
        .fake
        .requests()
        .iter()
        .map(|req| req.body_text())
        .find(|body| body.contains("are you there?"))
        .unwrap();
    assert!(asked.contains("call_slow"), "{asked}");
    assert!(asked.contains("may or may not have run"), "{asked}");
    // Nobody ran the call again.
    assert_eq!(r.lines_in("ran.txt", "started"), 1);
}

/// Replica A is killed while its reply is parked on a confirmation:
/// nothing is ended for it (it was not running), and the confirmation
/// answered on replica B resumes the reply there, which runs the tool once
/// and completes.
#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_while_a_reply_awaits_confirmation_leaves_it_to_the_survivor() {
    let Some(mut r) = Replicas::start(&[], json!({"name": "Friday"})).await else {
        return;
    };
    let (ca, cb) = (r.ca(), r.cb());
    let args = json!({"file_path": "note.txt", "content": "confirmed"}).to_string();
    r.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_write", "Write")
            .tool_args(0, args)
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response(),
    );
    assert_eq!(chat(&ca, &r.ids, user_msg("write a note")).await, 200);
    let parked = cb.stream_until(&r.stream, "REQUIRE_USER_CONFIRM").await;
    let ask = parked.last().unwrap().clone();
    let cursor = cursor(&cb, &r.ids).await;
    r.kill_a();

    // Longer than a lock's life and a sweep: nothing is published.
    let quiet = events_within(
        &cb,
        &format!("{}&after={cursor}", r.stream),
        Duration::from_secs(4),
    )
    .await;
    assert_eq!(quiet, Vec::<Value>::new());
    assert_eq!(status(&cb, &r.ids).await, "awaiting_permission");

    r.fake.push(quick_answer("The note is written."));
    let confirm = json!({
        "type": "USER_CONFIRM_RESULT",
        "reply_id": ask["reply_id"],
        "confirm_results": [{"confirmed": true, "tool_call": ask["tool_calls"][0]}],
    });
    assert_eq!(chat(&cb, &r.ids, confirm).await, 200);
    let events = cb
        .stream_until(&format!("{}&after={cursor}", r.stream), "REPLY_END")
        .await;
    assert_eq!(count(&events, "REPLY_END"), 1, "{events:?}");
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    assert_eq!(events.last().unwrap()["reply_id"], ask["reply_id"]);
    assert_eq!(r.lines_in("note.txt", "confirmed"), 1);
}

/// Replica A is killed while a confirmed tool call runs: replica B ends
/// the reply (naming the call in doubt), the session is back to the
/// confirmation it was parked on, and confirming the call again on B does
/// not run it a second time: the model reads it as refused and the reply
/// completes.
#[tokio::test(flavor = "multi_thread")]
async fn a_confirmed_call_in_doubt_is_not_run_again_when_confirmed_twice() {
    let Some(mut r) = Replicas::start(&[], json!({"name": "Friday"})).await else {
        return;
    };
    let (ca, cb) = (r.ca(), r.cb());
    let command = "echo started >> ran.txt; sleep 30; echo finished >> ran.txt";
    r.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_doubt", "Bash")
            .tool_args(0, json!({"command": command}).to_string())
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response(),
    );
    assert_eq!(chat(&ca, &r.ids, user_msg("run it")).await, 200);
    let parked = cb.stream_until(&r.stream, "REQUIRE_USER_CONFIRM").await;
    let ask = parked.last().unwrap().clone();
    let confirm = json!({
        "type": "USER_CONFIRM_RESULT",
        "reply_id": ask["reply_id"],
        "confirm_results": [{"confirmed": true, "tool_call": ask["tool_calls"][0]}],
    });
    let cursor = cursor(&cb, &r.ids).await;
    let watcher = tokio::spawn({
        let path = format!("{}&after={cursor}", r.stream);
        let cb = r.cb();
        async move { cb.stream_until(&path, "REPLY_END").await }
    });
    assert_eq!(chat(&ca, &r.ids, confirm.clone()).await, 200);
    for _ in 0..200 {
        if r.lines_in("ran.txt", "started") == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(r.lines_in("ran.txt", "started"), 1);
    r.kill_a();

    let seen = watcher.await.unwrap();
    let end = seen.last().unwrap();
    assert_eq!(end["finished_reason"], "error", "{seen:?}");
    let message = end["error"]["message"].to_string();
    assert!(message.contains("Bash (call_doubt)"), "{message}");
    for _ in 0..200 {
        if status(&cb, &r.ids).await != "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status(&cb, &r.ids).await, "awaiting_permission");

    let after = self::cursor(&cb, &r.ids).await;
    r.fake.push(quick_answer("I will not run it again."));
    assert_eq!(chat(&cb, &r.ids, confirm).await, 200);
    let events = cb
        .stream_until(&format!("{}&after={after}", r.stream), "REPLY_END")
        .await;
    assert_eq!(events[0]["type"], "USER_CONFIRM_RESULT", "{events:?}");
    assert_eq!(
        events[0]["confirm_results"][0]["confirmed"], false,
        "{events:?}"
    );
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    assert_eq!(r.lines_in("ran.txt", "started"), 1);
}
