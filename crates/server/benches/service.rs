//! Service benchmark: N concurrent sessions, each running a 5-round tool
//! reply (five Glob calls, then a text answer) against a local fake
//! OpenAI-compatible model, each with its own SSE subscriber.
//!
//! Reports replies per second, p50/p99 time from the model sending a text
//! token to the subscriber reading its SSE frame, and the process's peak
//! RSS (server, fake model and clients share the process).
//!
//! `cargo bench -p oxiscope-server --bench service` (sizes from
//! `OXISCOPE_BENCH_SESSIONS`, default `100,1000`; raise `ulimit -n` to a
//! few times the largest size).
//!
//! First figures (2 shared cores, bench profile, everything in one
//! process, all sessions started at once so latency includes queueing):
//! N=100: 30.6 replies/s, token->SSE p50 142 ms / p99 365 ms, peak RSS
//! 77 MiB; N=1000: 37.1 replies/s, p50 305 ms / p99 1.17 s, peak RSS
//! 350 MiB. Each reply is six model calls and five tool calls.
//!
//! After runs reuse the chat model of the same credential and config (no
//! HTTP client, root certificates and request cache built per run):
//! N=100: 95.9 replies/s, p50 38 ms / p99 100 ms, peak RSS 60 MiB;
//! N=1000: 103.1 replies/s, p50 58 ms / p99 191 ms, peak RSS 261 MiB.
//!
//! With workspaces (each run gets its session's sandbox workspace from the
//! manager and its toolkit from `equip`; Glob walks through handles), the
//! operator policy and the bounded bus: N=100: 114.4 replies/s, p50 29 ms /
//! p99 111 ms, peak RSS 58 MiB; N=1000: 119.3 replies/s, p50 38 ms / p99
//! 164 ms, peak RSS 290 MiB.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::post;
use futures_util::StreamExt;
use oxiscope_server::{AppState, AuthMode, Sealer, ServerConfig, TenantPolicy, app};
use oxiscope_storage::{InMemoryBus, SqliteStorage};
use oxiscope_test_support::OpenAiScript;
use serde_json::{Value, json};

const ROUNDS: usize = 5;

fn micros_now() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros()
}

/// The fake model: a Glob call until the request holds five tool results,
/// then a text answer whose tokens carry their send time.
async fn fake_completion(body: Bytes) -> impl IntoResponse {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let tool_results = request["messages"]
        .as_array()
        .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count());
    let script = if tool_results < ROUNDS {
        OpenAiScript::new()
            .tool_call(0, format!("call_{tool_results}"), "Glob")
            .tool_args(0, r#"{"pattern": "*.txt"}"#)
            .finish("tool_calls")
            .usage(20, 5, 0)
    } else {
        let mut script = OpenAiScript::new();
        for _ in 0..5 {
            script = script.text(format!("t{} ", micros_now()));
        }
        script.finish("stop").usage(20, 5, 0)
    };
    ([(header::CONTENT_TYPE, "text/event-stream")], script.body())
}

async fn spawn(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

async fn post_json(http: &reqwest::Client, url: String, body: Value) -> Value {
    let res = http
        .post(url)
        .header("x-user-id", "bench")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    serde_json::from_str(&res.text().await.unwrap()).unwrap()
}

/// One session: subscribe, chat, read until REPLY_END; the token latencies.
async fn one_session(
    http: reqwest::Client,
    base: Arc<str>,
    agent: Arc<str>,
    cred: Arc<str>,
) -> Vec<u128> {
    let session = post_json(
        &http,
        format!("{base}/sessions/"),
        json!({"agent_id": &*agent, "workspace_id": format!("w{}", oxiscope_storage::new_id()),
               "chat_model_config": {"type": "openai_credential", "credential_id": &*cred, "model": "gpt-4.1", "parameters": {}}}),
    )
    .await["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = http
        .get(format!("{base}/sessions/{session}/stream?agent_id={agent}"))
        .header("x-user-id", "bench")
        .send()
        .await
        .unwrap();
    let mut body = res.bytes_stream();
    post_json(
        &http,
        format!("{base}/chat/"),
        json!({"agent_id": &*agent, "session_id": session,
               "input": {"name": "user", "role": "user", "content": [{"type": "text", "text": "find the text files"}]}}),
    )
    .await;
    let mut buf: Vec<u8> = Vec::new();
    let mut latencies = Vec::new();
    loop {
        while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
            let frame: Vec<u8> = buf.drain(..end + 2).collect();
            let Some(data) = frame.strip_prefix(b"data: ") else {
                continue;
            };
            let event: Value = serde_json::from_slice(data).unwrap();
            match event["type"].as_str() {
                Some("TEXT_BLOCK_DELTA") => {
                    let sent: u128 = event["delta"]
                        .as_str()
                        .and_then(|d| d.trim().strip_prefix('t'))
                        .and_then(|t| t.parse().ok())
                        .unwrap_or(0);
                    if sent > 0 {
                        latencies.push(micros_now().saturating_sub(sent));
                    }
                }
                Some("REPLY_END") => {
                    assert_eq!(event["finished_reason"], "completed", "{event}");
                    return latencies;
                }
                _ => {}
            }
        }
        let chunk = tokio::time::timeout(Duration::from_secs(300), body.next())
            .await
            .expect("events keep coming")
            .expect("stream open")
            .unwrap();
        buf.extend_from_slice(&chunk);
    }
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[u128], p: f64) -> u128 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

async fn run(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    // As `oxiscope serve` does: sandboxes started by root run as another
    // user, who must pass through the data directory.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o711),
    )
    .unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let fake = spawn(Router::new().route("/v1/chat/completions", post(fake_completion))).await;
    let state = AppState::new(
        Arc::new(SqliteStorage::open(dir.path()).await.unwrap()),
        Arc::new(InMemoryBus::new()),
        Sealer::from_key(&[1; 32]),
        // The fake model server is on loopback.
        ServerConfig::new(dir.path())
            .with_auth(AuthMode::DevHeader)
            // The reply path is measured: no title call after first replies.
            .with_session_titles(oxiscope_server::SessionTitles::Excerpt)
            .with_policy(TenantPolicy {
                private_model_endpoints: true,
                ..TenantPolicy::default()
            }),
    );
    let base: Arc<str> = spawn(app(state.clone())).await.into();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(4096)
        .build()
        .unwrap();
    let cred = post_json(
        &http,
        format!("{base}/credential/"),
        json!({"data": {"type": "openai_credential", "api_key": "sk-bench", "base_url": format!("{fake}/v1")}}),
    )
    .await["credential_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let agent =
        post_json(&http, format!("{base}/agent/"), json!({"name": "Bench"})).await["agent_id"]
            .as_str()
            .unwrap()
            .to_owned();
    let (agent, cred): (Arc<str>, Arc<str>) = (agent.into(), cred.into());

    let start = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            tokio::spawn(one_session(
                http.clone(),
                base.clone(),
                agent.clone(),
                cred.clone(),
            ))
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    let elapsed = start.elapsed();
    latencies.sort_unstable();
    println!(
        "N={n:>5}: {n} replies x {ROUNDS} tool rounds in {:.2} s = {:.1} replies/s; \
         token->SSE p50 {} us, p99 {} us ({} tokens); peak RSS {} MiB",
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies.len(),
        peak_rss_kib() / 1024,
    );
    state.shutdown().await;
}

fn main() {
    let sizes = std::env::var("OXISCOPE_BENCH_SESSIONS").unwrap_or_else(|_| "100,1000".to_owned());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    for n in sizes.split(',').filter_map(|s| s.trim().parse().ok()) {
        runtime.block_on(run(n));
    }
}
