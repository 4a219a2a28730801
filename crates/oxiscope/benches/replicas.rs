//! Replica load benchmark: 1, 2 and 3 `oxiscope serve` processes sharing
//! one PostgreSQL database and one Redis, against a fast local fake
//! OpenAI-compatible model.
//!
//! For each replica count: start the replicas (`--dev-auth`,
//! `--workspace local`, `--session-titles excerpt`, so the reply path is
//! measured), create the sessions round-robin over them, then run one chat
//! per session, 64 in flight. Each chat is posted to replica `i` while its
//! SSE subscriber reads from replica `i + 1` (with one replica both are
//! the same process), so its events reach it through Redis. The fake model streams
//! a short answer whose tokens carry their send time (`t<micros> `); the
//! subscriber compares it with the time it reads the delta.
//!
//! Reported per replica count: sessions created per second, replies per
//! second (completed `REPLY_END`s over the chat phase) and the p50 / p99
//! token-to-SSE latency (model sends a token -> subscriber on another
//! replica reads it).
//!
//! `cargo bench -p oxiscope --bench replicas`. Sizes from
//! `OXISCOPE_BENCH_SESSIONS` (default 1000) and `OXISCOPE_BENCH_REPLICAS`
//! (default `1,2,3`); `OXISCOPE_BENCH_BIN` runs another `oxiscope` binary. Without `postgres` or `redis-server` it says so and
//! exits.
//!
//! First figures (2026-12-01, 2 cores shared with other builds: load
//! average 3.5 to 5; bench profile; replicas, PostgreSQL, Redis, the fake
//! model and the clients all on this machine; whole run about 40 s), two
//! runs back to back:
//!
//! | replicas | sessions created/s | replies/s | token->SSE p50 | p99 |
//! |---:|---:|---:|---:|---:|
//! | 1 | 2117 / 1798 | 241.5 / 148.7 | 24.1 / 39.3 ms | 83.1 / 125.3 ms |
//! | 2 | 2329 / 1479 | 214.6 / 154.4 | 48.1 / 65.4 ms | 184.4 / 193.9 ms |
//! | 3 | 1632 / 1164 | 190.6 / 148.1 | 55.5 / 69.5 ms | 216.7 / 242.9 ms |
//!
//! The engine split (#30), measured in one run with this harness against
//! the commit before it (`OXISCOPE_BENCH_BIN`, 1 replica, 1,000 sessions,
//! 2026-12-02, machine shared with other builds), two runs alternating:
//! before 220.4 / 202.5 replies/s (token->SSE p99 61.3 / 71.9 ms), after
//! 220.5 / 205.5 replies/s (p99 61.1 / 69.9 ms): not slower.
//!
//! 1,000 replies completed at every count, none failed. On two cores more
//! replicas add processes, not CPU: throughput stays flat, and a
//! subscriber on another process than the run costs about 25 ms more at
//! the median. The figures say the Redis bus
//! carries a subscriber on another replica without loss; the scaling of
//! replies/s with replica count needs a core (or a machine) per replica.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::post;
use futures_util::StreamExt;
use oxiscope_test_support::OpenAiScript;
use oxiscope_test_support::servers::postgres::TestPostgres;
use oxiscope_test_support::servers::redis::TestRedis;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_oxiscope");

/// The `oxiscope` binary under test: `OXISCOPE_BENCH_BIN` when set (to
/// measure another build, say the previous commit's, with this same
/// harness in one run), else the one built with this benchmark.
fn bin() -> String {
    std::env::var("OXISCOPE_BENCH_BIN").unwrap_or_else(|_| BIN.to_owned())
}
/// Text tokens in each model answer.
const TOKENS: usize = 8;
/// Chats running at once.
const IN_FLIGHT: usize = 64;
/// Session creations running at once.
const CREATING: usize = 32;
/// The longest wait for the next SSE chunk before a chat counts as failed.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

fn micros_now() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros()
}

/// The fake model: `TOKENS` text tokens stamped with their send time.
async fn fake_completion() -> impl IntoResponse {
    let mut script = OpenAiScript::new();
    for _ in 0..TOKENS {
        script = script.text(format!("t{} ", micros_now()));
    }
    let body = script.finish("stop").usage(20, TOKENS as u64, 0).body();
    ([(header::CONTENT_TYPE, "text/event-stream")], body)
}

/// A running `oxiscope serve` and its base URL; killed when dropped.
struct Replica {
    child: Child,
    base: Arc<str>,
}

impl Replica {
    fn start(dir: &Path, shared: &[&str]) -> Self {
        // One user runs every chat: the policy lets it run as many at
        // once as the benchmark keeps in flight.
        let policy = dir.join("bench-policy.toml");
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            &policy,
            format!("max_concurrent_runs_per_user = {IN_FLIGHT}\nmax_live_workspaces_per_user = 100000\n"),
        )
        .unwrap();
        let mut child = Command::new(bin())
            .args(["serve", "--addr", "127.0.0.1:0", "--dev-auth"])
            .arg("--allow-private-model-endpoints")
            .args(["--workspace", "local", "--session-titles", "excerpt"])
            .args(["--log-level", "warn"])
            .arg("--policy")
            .arg(&policy)
            .arg("--data-dir")
            .arg(dir)
            .args(shared)
            .env_remove("OXISCOPE_SECRET_KEY")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
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
        Self {
            child,
            base: base.into(),
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn post_json(http: &reqwest::Client, url: String, body: Value) -> Result<Value, String> {
    let res = http
        .post(url)
        .header("x-user-id", "bench")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = res.status();
    let text = res.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("{status}: {text}"));
    }
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// Every `t<micros>` stamp in a text delta, as latencies up to now.
fn stamps(delta: &str, now: u128, out: &mut Vec<u128>) {
    for word in delta.split_whitespace() {
        if let Some(sent) = word.strip_prefix('t').and_then(|t| t.parse::<u128>().ok()) {
            out.push(now.saturating_sub(sent));
        }
    }
}

/// One chat: subscribe on `sub`, post on `chat`, read until `REPLY_END`.
/// The token latencies of a completed reply, or why it failed.
async fn one_chat(
    http: reqwest::Client,
    chat: Arc<str>,
    sub: Arc<str>,
    agent: Arc<str>,
    session: String,
) -> Result<Vec<u128>, String> {
    let res = http
        .get(format!("{sub}/sessions/{session}/stream?agent_id={agent}"))
        .header("x-user-id", "bench")
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if !res.status().is_success() {
        return Err(format!("subscribe: {}", res.status()));
    }
    let mut body = res.bytes_stream();
    post_json(
        &http,
        format!("{chat}/chat/"),
        json!({"agent_id": &*agent, "session_id": session,
               "input": {"name": "user", "role": "user", "content": [{"type": "text", "text": "hello"}]}}),
    )
    .await?;
    let mut buf: Vec<u8> = Vec::new();
    let mut latencies = Vec::with_capacity(TOKENS);
    loop {
        while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
            let frame: Vec<u8> = buf.drain(..end + 2).collect();
            let Some(data) = frame.strip_prefix(b"data: ") else {
                continue;
            };
            let event: Value = serde_json::from_slice(data).map_err(|e| e.to_string())?;
            match event["type"].as_str() {
                Some("TEXT_BLOCK_DELTA") => {
                    if let Some(delta) = event["delta"].as_str() {
                        stamps(delta, micros_now(), &mut latencies);
                    }
                }
                Some("REPLY_END") if event["finished_reason"] == "completed" => {
                    return Ok(latencies);
                }
                Some("REPLY_END") => return Err(format!("reply ended: {event}")),
                _ => {}
            }
        }
        match tokio::time::timeout(READ_TIMEOUT, body.next()).await {
            Ok(Some(Ok(chunk))) => buf.extend_from_slice(&chunk),
            Ok(Some(Err(e))) => return Err(e.to_string()),
            Ok(None) => return Err("stream closed before REPLY_END".to_owned()),
            Err(_) => return Err("no event for 60 s".to_owned()),
        }
    }
}

fn percentile(sorted: &[u128], p: f64) -> u128 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// What one replica count measured.
struct Outcome {
    created_per_s: f64,
    replies: usize,
    failed: usize,
    replies_per_s: f64,
    latencies: Vec<u128>,
}

/// Creates `n` sessions round-robin over `bases`, then runs one chat per
/// session, `IN_FLIGHT` at once, subscribed on the next replica.
async fn drive(bases: &[Arc<str>], n: usize, fake: &str) -> Outcome {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(1024)
        .build()
        .unwrap();
    let first = &bases[0];
    let cred = post_json(
        &http,
        format!("{first}/credential/"),
        json!({"data": {"type": "openai_credential", "api_key": "sk-bench", "base_url": format!("{fake}/v1")}}),
    )
    .await
    .unwrap()["credential_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let agent: Arc<str> = post_json(&http, format!("{first}/agent/"), json!({"name": "Bench"}))
        .await
        .unwrap()["agent_id"]
        .as_str()
        .unwrap()
        .into();

    let start = Instant::now();
    let sessions: Vec<String> = futures_util::stream::iter(0..n)
        .map(|i| {
            let (http, base, agent) = (http.clone(), bases[i % bases.len()].clone(), agent.clone());
            // One session per (agent, workspace): a workspace each.
            let body = json!({"agent_id": &*agent, "workspace_id": format!("bench-{i}"),
                "chat_model_config": {"type": "openai_credential", "credential_id": &cred, "model": "gpt-4.1", "parameters": {}}});
            async move {
                post_json(&http, format!("{base}/sessions/"), body)
                    .await
                    .unwrap()["session_id"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            }
        })
        .buffered(CREATING)
        .collect()
        .await;
    let created_per_s = n as f64 / start.elapsed().as_secs_f64();

    let start = Instant::now();
    let results: Vec<Result<Vec<u128>, String>> =
        futures_util::stream::iter(sessions.into_iter().enumerate())
            .map(|(i, session)| {
                let chat = bases[i % bases.len()].clone();
                let sub = bases[(i + 1) % bases.len()].clone();
                tokio::spawn(one_chat(http.clone(), chat, sub, agent.clone(), session))
            })
            .buffer_unordered(IN_FLIGHT)
            .map(|joined| joined.unwrap_or_else(|e| Err(e.to_string())))
            .collect()
            .await;
    let elapsed = start.elapsed().as_secs_f64();
    let mut latencies = Vec::new();
    let mut failed = 0;
    let mut replies = 0;
    for result in results {
        match result {
            Ok(l) => {
                replies += 1;
                latencies.extend(l);
            }
            Err(why) => {
                if failed == 0 {
                    eprintln!("first failed chat: {why}");
                }
                failed += 1;
            }
        }
    }
    latencies.sort_unstable();
    Outcome {
        created_per_s,
        replies,
        failed,
        replies_per_s: replies as f64 / elapsed,
        latencies,
    }
}

fn env_list(name: &str, default: &str) -> Vec<usize> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_owned())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .filter(|&n| n > 0)
        .collect()
}

fn main() {
    let n = env_list("OXISCOPE_BENCH_SESSIONS", "1000")
        .first()
        .copied()
        .unwrap_or(1000);
    let counts = env_list("OXISCOPE_BENCH_REPLICAS", "1,2,3");
    let Some(pg) = TestPostgres::start() else {
        eprintln!("replicas bench: PostgreSQL is not installed; nothing measured");
        return;
    };
    let Some(redis) = TestRedis::start() else {
        eprintln!("replicas bench: redis-server is not installed; nothing measured");
        return;
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let fake = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let router = Router::new().route("/v1/chat/completions", post(fake_completion));
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        format!("http://{addr}")
    });
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("sealing.key");
    std::fs::write(&key_file, "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=\n").unwrap();

    println!(
        "{n} sessions, one chat each, {IN_FLIGHT} in flight, {TOKENS} tokens per answer, \
         subscriber on the next replica"
    );
    println!(
        "{:>8} {:>10} {:>10} {:>8} {:>11} {:>12} {:>12} {:>8}",
        "replicas",
        "created/s",
        "replies",
        "failed",
        "replies/s",
        "p50 tok->SSE",
        "p99 tok->SSE",
        "tokens"
    );
    for (round, &count) in counts.iter().enumerate() {
        // A database and a Redis database of its own per replica count.
        let url = pg.fresh_database();
        let redis_url = redis.url_of_db(u8::try_from(round % 16).unwrap_or(0));
        let shared = [
            "--database-url",
            &url,
            "--key-file",
            key_file.to_str().unwrap(),
            "--redis-url",
            &redis_url,
        ];
        let replicas: Vec<Replica> = (0..count)
            .map(|r| Replica::start(&dir.path().join(format!("c{count}-r{r}")), &shared))
            .collect();
        let bases: Vec<Arc<str>> = replicas.iter().map(|r| r.base.clone()).collect();
        let out = runtime.block_on(drive(&bases, n, &fake));
        println!(
            "{:>8} {:>10.1} {:>10} {:>8} {:>11.1} {:>9.2} ms {:>9.2} ms {:>8}",
            count,
            out.created_per_s,
            out.replies,
            out.failed,
            out.replies_per_s,
            percentile(&out.latencies, 0.50) as f64 / 1000.0,
            percentile(&out.latencies, 0.99) as f64 / 1000.0,
            out.latencies.len(),
        );
        drop(replicas);
    }
}
