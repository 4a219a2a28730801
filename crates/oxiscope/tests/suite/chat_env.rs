//! A sandbox for running `oxiscope chat`: a fake OpenAI server on
//! 127.0.0.1, and temporary config, data, home and working directories.

use std::process::{Command, Output};
use std::time::Duration;

use oxiscope_test_support::{FakeServer, OpenAiScript, RecordedRequest};
use serde_json::Value;
use tempfile::TempDir;
use tokio::runtime::Runtime;

pub(crate) struct ChatEnv {
    /// Runs the fake server; kept alive with it.
    _rt: Runtime,
    pub(crate) server: FakeServer,
    pub(crate) root: TempDir,
}

impl ChatEnv {
    pub(crate) fn new() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = rt.block_on(FakeServer::start()).unwrap();
        let root = tempfile::tempdir().unwrap();
        for dir in ["config", "data", "home", "work"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        Self {
            _rt: rt,
            server,
            root,
        }
    }

    pub(crate) fn work(&self) -> std::path::PathBuf {
        self.root.path().join("work")
    }

    pub(crate) fn data(&self) -> std::path::PathBuf {
        self.root.path().join("data")
    }

    pub(crate) fn config(&self) -> std::path::PathBuf {
        self.root.path().join("config")
    }

    /// `oxiscope <args>` with only this sandbox in its environment.
    pub(crate) fn bare(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_oxiscope"));
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.path().join("home"))
            .env("OXISCOPE_CONFIG_DIR", self.config())
            .env("OXISCOPE_DATA_DIR", self.data())
            .env("TERM", "xterm")
            .current_dir(self.work());
        cmd
    }

    /// `oxiscope chat` pointed at the fake server, then `args`.
    pub(crate) fn chat(&self, args: &[&str]) -> Command {
        let base = format!("{}/v1", self.server.base_url());
        let mut all = vec![
            "chat",
            "--provider",
            "openai",
            "--api-key",
            "sk-test",
            "--base-url",
            &base,
            "--no-color",
        ];
        all.extend_from_slice(args);
        self.bare(&all)
    }

    /// Queues a streamed answer.
    pub(crate) fn answer(&self, script: &OpenAiScript) {
        self.server.push(script.response());
    }

    /// Queues a streamed answer that sends its first `immediate` events,
    /// then waits `delay` before each of the others.
    pub(crate) fn answer_slowly(&self, script: &OpenAiScript, immediate: usize, delay: Duration) {
        self.server.push(script.response_paced(immediate, delay));
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// The `messages` of request `index`.
    pub(crate) fn messages(&self, index: usize) -> Vec<Value> {
        let body = self.requests()[index].body_json().unwrap();
        body["messages"].as_array().cloned().unwrap_or_default()
    }
}

/// A text answer.
pub(crate) fn text(words: &str) -> OpenAiScript {
    OpenAiScript::new()
        .text(words)
        .finish("stop")
        .usage(20, 5, 0)
}

/// One Bash call.
pub(crate) fn bash(id: &str, command: &str) -> OpenAiScript {
    let args = serde_json::json!({ "command": command }).to_string();
    OpenAiScript::new()
        .tool_call(0, id, "Bash")
        .tool_args(0, args)
        .finish("tool_calls")
        .usage(30, 10, 0)
}

/// Runs `cmd` with no standard input.
pub(crate) fn run(mut cmd: Command) -> Output {
    cmd.stdin(std::process::Stdio::null()).output().unwrap()
}

/// What `out` printed on stdout.
pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// What `out` printed on stderr.
pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}
