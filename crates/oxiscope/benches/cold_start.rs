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
use std::process::{Child, Stdio};

use divan::Bencher;

fn main() {
    divan::main();
}

/// The sandbox the CLI tests use: a fake OpenAI server and temporary
/// config, data, home and working directories.
#[allow(dead_code)]
#[path = "../tests/suite/chat_env.rs"]
mod chat_env;

use chat_env::{ChatEnv, text};

fn spawn(env: &ChatEnv) -> Child {
    env.chat(&["-p", "hi", "--output", "events"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
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
    let env = ChatEnv::new();
    bencher
        .with_inputs(|| env.answer(&text("Hi.")))
        .bench_local_values(|()| {
            let mut child = spawn(&env);
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
    let env = ChatEnv::new();
    bencher
        .with_inputs(|| env.answer(&text("Hi.")))
        .bench_local_values(|()| {
            let out = spawn(&env).wait_with_output().unwrap();
            assert!(out.status.success());
            out
        });
}
