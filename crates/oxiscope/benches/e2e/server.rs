//! The scripted OpenAI-compatible model server every client of the run
//! talks to, in a process of its own so that the client's CPU time
//! (`getrusage`) counts only the client.
//!
//! `POST /{scenario}/v1/chat/completions` streams the answer of the round
//! the conversation is in; the round is the number of tool results in the
//! request (`"tool_call_id"` keys) divided by the calls per round, so any
//! client (this run's, or another implementation's) gets the same answers
//! without shared state. Scenarios:
//!
//! - `tokens`: one answer of [`TOKENS`] content chunks.
//! - `tools`: [`ROUNDS`] answers with one `echo` call each, then a text.
//! - `parallel`: [`ROUNDS`] answers with [`PARALLEL`] `echo` calls each,
//!   then a text.
//! - `hi`: one short text (the cold-start run).
//!
//! Every chunk is its own body frame, as a model server sends them.

use axum::Router;
use axum::body::{Body, Bytes};
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use oxiscope_test_support::OpenAiScript;

/// Content chunks of the `tokens` answer.
pub const TOKENS: usize = 1_000;
/// Tool rounds of the `tools` and `parallel` scenarios.
pub const ROUNDS: usize = 20;
/// Calls per round of the `parallel` scenario.
pub const PARALLEL: usize = 4;

/// The environment variable that makes the bench binary this server.
pub const ROLE_SERVER: &str = "server";

/// Runs the server on 127.0.0.1 (a free port, or `OXISCOPE_E2E_PORT`),
/// printing `port <n>` on stdout once it listens; never returns.
pub fn serve() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let port: u16 = std::env::var("OXISCOPE_E2E_PORT")
            .ok()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        let app = Router::new()
            .route("/{scenario}/v1/chat/completions", post(answer))
            .with_state(Arc::new(Answers::new()));
        println!("port {}", listener.local_addr().unwrap().port());
        axum::serve(listener, app).await.unwrap();
    });
}

/// Every answer, made once: the server's own CPU is taken from the same
/// cores as the client's.
struct Answers {
    tokens: Vec<Bytes>,
    hi: Vec<Bytes>,
    /// Round -> answer; the last one is the closing text.
    tools: Vec<Vec<Bytes>>,
    parallel: Vec<Vec<Bytes>>,
}

impl Answers {
    fn new() -> Self {
        Self {
            tokens: tokens(),
            hi: text("Hi."),
            tools: (0..=ROUNDS).map(|r| rounds(r, 1)).collect(),
            parallel: (0..=ROUNDS).map(|r| rounds(r, PARALLEL)).collect(),
        }
    }
}

async fn answer(
    State(answers): State<Arc<Answers>>,
    Path(scenario): Path<String>,
    body: Bytes,
) -> Response {
    let results = count(&body, b"\"tool_call_id\"");
    let frames = match scenario.as_str() {
        "tokens" => &answers.tokens,
        "hi" => &answers.hi,
        "tools" => &answers.tools[results.min(ROUNDS)],
        "parallel" => &answers.parallel[(results / PARALLEL).min(ROUNDS)],
        _ => return (StatusCode::NOT_FOUND, "no such scenario").into_response(),
    };
    let stream =
        futures_util::stream::iter(frames.clone().into_iter().map(Ok::<_, std::io::Error>));
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        Body::from_stream(stream),
    )
        .into_response()
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    memchr::memmem::find_iter(haystack, needle).count()
}

/// One frame per `data:` event of a scripted body.
fn frames(script: OpenAiScript) -> Vec<Bytes> {
    script
        .model("gpt-bench")
        .events()
        .into_iter()
        .map(Bytes::from)
        .collect()
}

fn tokens() -> Vec<Bytes> {
    let mut script = OpenAiScript::new();
    for i in 0..TOKENS {
        script = script.text(format!("t{} ", i % 10));
    }
    frames(script.finish("stop").usage(100, TOKENS as u64, 0))
}

fn text(words: &str) -> Vec<Bytes> {
    frames(
        OpenAiScript::new()
            .text(words)
            .finish("stop")
            .usage(20, 2, 0),
    )
}

/// Round `round` of a tool scenario with `calls` calls per round.
fn rounds(round: usize, calls: usize) -> Vec<Bytes> {
    if round >= ROUNDS {
        return frames(
            OpenAiScript::new()
                .text("All done.")
                .finish("stop")
                .usage(100, 3, 0),
        );
    }
    let mut script = OpenAiScript::new().text("Checking.");
    for c in 0..calls {
        script = script
            .tool_call(c, format!("call_{round}_{c}"), "echo")
            .tool_args(c, format!("{{\"n\": {}}}", round * calls + c));
    }
    frames(script.finish("tool_calls").usage(100, 10, 0))
}

/// The server's process, killed when dropped.
pub struct Child {
    child: std::process::Child,
    port: u16,
}

impl Child {
    /// Starts this bench binary as the server and waits until it listens.
    pub fn start() -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .env(super::ROLE, ROLE_SERVER)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().strip_prefix("port ").unwrap().parse().unwrap();
        Self { child, port }
    }

    /// The base URL of `scenario` (`.../v1`), as a model is configured.
    pub fn base(&self, scenario: &str) -> String {
        format!("http://127.0.0.1:{}/{scenario}/v1", self.port)
    }

    /// The endpoint of `scenario`.
    pub fn url(&self, scenario: &str) -> String {
        format!("{}/chat/completions", self.base(scenario))
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
