//! Cold start: a fresh `oxiscope chat -p ... --output events` process
//! against a local fake OpenAI server, timed from spawning the process to
//! reading its first event line (`REPLY_START`), and to its exit.
//!
//! `cargo bench -p oxiscope --bench cold_start`
//!
//! First figures (2 shared cores): first event 11.9 ms, exit after the whole
//! one-shot reply 15.6 ms (medians of 40).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use divan::Bencher;
use oxiscope_test_support::{FakeServer, OpenAiScript};
use tempfile::TempDir;

fn main() {
    divan::main();
}

struct Sandbox {
    rt: tokio::runtime::Runtime,
    server: FakeServer,
    root: TempDir,
}

fn sandbox() -> Sandbox {
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
    Sandbox { rt, server, root }
}

impl Sandbox {
    fn answer(&self) {
        let _ = &self.rt;
        self.server
            .push(OpenAiScript::new().text("Hi.").finish("stop").response());
    }

    fn spawn(&self) -> Child {
        let base = format!("{}/v1", self.server.base_url());
        let dir = |d: &str| self.root.path().join(d);
        Command::new(env!("CARGO_BIN_EXE_oxiscope"))
            .args([
                "chat",
                "--provider",
                "openai",
                "--api-key",
                "sk-bench",
                "--base-url",
                &base,
                "--no-color",
                "-p",
                "hi",
                "--output",
                "events",
            ])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir("home"))
            .env("OXISCOPE_CONFIG_DIR", dir("config"))
            .env("OXISCOPE_DATA_DIR", dir("data"))
            .current_dir(dir("work"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }
}

/// Waits for the process when dropped (after the timing).
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.wait();
    }
}

#[divan::bench(sample_count = 40, sample_size = 1)]
fn spawn_to_first_event(bencher: Bencher<'_, '_>) {
    let s = sandbox();
    bencher.with_inputs(|| s.answer()).bench_local_values(|()| {
        let mut child = s.spawn();
        let stdout = child.stdout.take().unwrap();
        let mut first = String::new();
        let mut reader = BufReader::new(stdout);
        reader.read_line(&mut first).unwrap();
        assert!(first.contains("REPLY_START"), "{first}");
        // Keep reading in the background so the process can finish.
        std::thread::spawn(move || {
            let mut rest = String::new();
            while reader.read_line(&mut rest).unwrap_or(0) > 0 {
                rest.clear();
            }
        });
        Reaped(child)
    });
}

#[divan::bench(sample_count = 40, sample_size = 1)]
fn spawn_to_exit(bencher: Bencher<'_, '_>) {
    let s = sandbox();
    bencher.with_inputs(|| s.answer()).bench_local_values(|()| {
        let out = s.spawn().wait_with_output().unwrap();
        assert!(out.status.success());
        out
    });
}
