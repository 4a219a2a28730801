//! Building the examples and running one against a fake model server.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::SystemTime;

use oxiscope_test_support::{FakeServer, OpenAiScript, ScriptedResponse};
use serde_json::Value;
use tempfile::TempDir;
use tokio::runtime::Runtime;

/// The directory the examples are built into: `examples/` next to this
/// test's `deps/`, in the same target directory and profile.
fn examples_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    profile_dir.join("examples")
}

/// The features this test was built with: the examples get the same.
fn features() -> String {
    let all = [
        ("openai", cfg!(feature = "openai")),
        ("anthropic", cfg!(feature = "anthropic")),
        ("ollama", cfg!(feature = "ollama")),
        ("minimax", cfg!(feature = "minimax")),
        ("openai_response", cfg!(feature = "openai_response")),
        ("gemini", cfg!(feature = "gemini")),
        ("local-embedding", cfg!(feature = "local-embedding")),
        ("mcp", cfg!(feature = "mcp")),
        ("workspace", cfg!(feature = "workspace")),
        ("rag", cfg!(feature = "rag")),
        ("memory", cfg!(feature = "memory")),
        ("a2a", cfg!(feature = "a2a")),
        ("console", cfg!(feature = "console")),
        ("server", cfg!(feature = "server")),
        ("cli", cfg!(feature = "cli")),
    ];
    let on: Vec<&str> = all.iter().filter(|(_, on)| *on).map(|(f, _)| *f).collect();
    on.join(",")
}

/// The newest modification time of the sources an example is built from:
/// every crate's `src/` and manifest, and the examples.
fn newest_source() -> SystemTime {
    fn walk(path: &Path, newest: &mut SystemTime) {
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        if let Ok(modified) = meta.modified() {
            *newest = (*newest).max(modified);
        }
        if meta.is_dir() {
            for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
                walk(&entry.path(), newest);
            }
        }
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut newest = SystemTime::UNIX_EPOCH;
    walk(&manifest.join("examples"), &mut newest);
    let crates = manifest.parent().unwrap();
    for entry in std::fs::read_dir(crates).unwrap().flatten() {
        walk(&entry.path().join("src"), &mut newest);
        walk(&entry.path().join("Cargo.toml"), &mut newest);
    }
    newest
}

/// Makes sure the examples are built and fresh, once per test run.
/// `cargo test` builds them before running this; only when one is missing
/// or older than its sources (`cargo test --test examples` builds no
/// example) are they built here, with this test's features.
fn build_examples() {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let dir = examples_dir();
        let newest = newest_source();
        let fresh = EXAMPLES.iter().all(|name| {
            std::fs::metadata(dir.join(name))
                .and_then(|m| m.modified())
                .is_ok_and(|built| built >= newest)
        });
        if fresh {
            return Ok(());
        }
        let target = dir.parent().and_then(|p| p.parent()).unwrap();
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "--quiet", "--package", "oxiscope", "--examples"])
            .args(["--no-default-features", "--features", &features()])
            .arg("--target-dir")
            .arg(target)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let out = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    });
    if let Err(why) = built {
        panic!("the examples do not build:\n{why}");
    }
}

/// Every example of `examples/`.
const EXAMPLES: [&str; 13] = [
    "minimal_agent",
    "streaming",
    "typed_tools",
    "permissions",
    "pause_resume",
    "structured_output",
    "custom_middleware",
    "goal_pipeline",
    "mcp_server",
    "rag_folder",
    "memory",
    "a2a_remote",
    "console",
];

/// One example run: a fake OpenAI server with scripted answers, a scratch
/// directory, and the example's output.
pub(crate) struct ExampleRun {
    /// Runs the fake server; kept alive with it.
    _rt: Runtime,
    pub(crate) server: FakeServer,
    pub(crate) dir: TempDir,
}

impl ExampleRun {
    pub(crate) fn new() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = rt.block_on(FakeServer::start()).unwrap();
        Self {
            _rt: rt,
            server,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Queues the model's next answer.
    pub(crate) fn answer(&self, response: ScriptedResponse) -> &Self {
        self.server.push_for("/v1/chat/completions", response);
        self
    }

    /// Queues a response for another path (an A2A server's, say).
    pub(crate) fn serve(&self, path: &str, response: ScriptedResponse) -> &Self {
        self.server.push_for(path, response);
        self
    }

    /// Runs example `name` with `args`; returns its stdout, failing the
    /// test (with its stderr) when it fails.
    pub(crate) fn run(&self, name: &str, args: &[&str]) -> String {
        let out = self.output(name, args);
        assert!(
            out.status.success(),
            "example {name} failed ({}):\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs example `name` with `stdin` as its input; returns its stdout,
    /// failing the test when it fails.
    pub(crate) fn run_with_input(&self, name: &str, stdin: &str) -> String {
        use std::io::Write as _;
        let mut child = self
            .command(name, &[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "example {name} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs example `name` with `args` in a clean environment that knows
    /// only the fake server.
    pub(crate) fn output(&self, name: &str, args: &[&str]) -> Output {
        self.command(name, args).output().unwrap()
    }

    /// The command running example `name` with `args` in a clean
    /// environment that knows only the fake server.
    fn command(&self, name: &str, args: &[&str]) -> Command {
        build_examples();
        let mut cmd = Command::new(examples_dir().join(name));
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("TMPDIR", self.dir.path())
            .env("OPENAI_API_KEY", "sk-example")
            .env("OPENAI_BASE_URL", self.server.url("/v1"))
            .current_dir(self.dir.path());
        cmd
    }

    /// The bodies of the chat requests the model received, in order.
    pub(crate) fn chat_requests(&self) -> Vec<Value> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.path == "/v1/chat/completions")
            .map(|r| r.body_json().unwrap())
            .collect()
    }

    /// Whether every queued answer was used.
    pub(crate) fn assert_all_answers_used(&self) {
        assert_eq!(
            self.server.pending_responses(),
            0,
            "unused scripted answers"
        );
    }
}

/// A text answer.
pub(crate) fn text(text: &str) -> ScriptedResponse {
    OpenAiScript::new()
        .text(text)
        .finish("stop")
        .usage(20, 5, 0)
        .response()
}

/// An answer that calls tools: `(id, name, arguments)` each.
pub(crate) fn calls(calls: &[(&str, &str, &str)]) -> ScriptedResponse {
    let mut script = OpenAiScript::new();
    for (index, (id, name, args)) in calls.iter().enumerate() {
        script = script.tool_call(index, *id, *name).tool_args(index, *args);
    }
    script.finish("tool_calls").usage(20, 5, 0).response()
}

/// The `tool` messages of a chat request body: `(tool_call_id, content)`.
pub(crate) fn tool_results(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or("").to_owned(),
                message_text(m),
            )
        })
        .collect()
}

/// The text of a message of a chat request body (its text parts joined).
pub(crate) fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => other.to_string(),
    }
}

/// The system prompt of a chat request body.
pub(crate) fn system_prompt(body: &Value) -> String {
    let first = &body["messages"][0];
    assert_eq!(first["role"], "system", "{body}");
    message_text(first)
}
