//! Cold start: a fresh process, from spawning it to reading its first event
//! line, and to its exit after a one-shot reply ("hi" -> "Hi.").
//!
//! Oxiscope: `oxiscope chat -p hi --output events` in an empty sandbox (its
//! own config, data, home and working directories), whose first line is
//! `REPLY_START`. The floor: this bench binary as a client process that
//! starts a 2-worker runtime, builds its reqwest client, prints its first
//! event line just before it sends the request (where the agent emits
//! `REPLY_START`), runs the reply and prints a last line.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The role that makes the bench binary the floor's cold-start client.
pub const ROLE_FLOOR: &str = "floor-cold";

/// The floor process: one reply against `OXISCOPE_E2E_URL`.
pub fn floor_process() {
    let url = std::env::var("OXISCOPE_E2E_URL").unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = super::floor::client();
        let tools = super::floor::tools();
        println!(r#"{{"type":"REPLY_START"}}"#);
        let outcome = super::floor::reply(&client, &url, &tools, "hi").await;
        println!(r#"{{"type":"REPLY_END","text":{}}}"#, outcome.text);
    });
}

/// The sandbox `oxiscope chat` runs in.
pub struct Sandbox {
    root: TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        for dir in ["config", "data", "home", "work"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        Self { root }
    }

    /// `oxiscope chat -p hi --output events` against `base` (`.../v1`).
    pub fn oxiscope(&self, base: &str) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_oxiscope"));
        cmd.args([
            "chat",
            "--provider",
            "openai",
            "--api-key",
            "sk-bench",
            "--base-url",
            base,
            "--no-color",
            "-p",
            "hi",
            "--output",
            "events",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", self.root.path().join("home"))
        .env("OXISCOPE_CONFIG_DIR", self.root.path().join("config"))
        .env("OXISCOPE_DATA_DIR", self.root.path().join("data"))
        .current_dir(self.root.path().join("work"));
        cmd
    }
}

/// The floor's process against `url` (`.../chat/completions`).
pub fn floor(url: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env_clear()
        .env(super::ROLE, ROLE_FLOOR)
        .env("OXISCOPE_E2E_URL", url);
    cmd
}

/// Spawns `cmd`: (time to its first stdout line, time to its exit).
pub fn time(mut cmd: Command) -> (Duration, Duration) {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let to_first = started.elapsed();
    assert!(first.contains("REPLY_START"), "first line: {first:?}");
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    let to_exit = started.elapsed();
    assert!(status.success(), "{status}; {rest}");
    assert!(rest.contains("REPLY_END"), "{rest}");
    (to_first, to_exit)
}
