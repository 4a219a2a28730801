//! The whole stack against a local fake OpenAI-compatible server: a reply
//! of 20 tool rounds through `Agent` + the OpenAI provider, next to a bare
//! reqwest + serde_json loop doing the same HTTP work (post the growing
//! conversation, parse the SSE stream, append the tool call and its result).
//! Both talk to the same server with the same scripted answers, in one run.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout
)]

use std::sync::Arc;

use divan::Bencher;
use futures_util::StreamExt;
use oxiscope_agent::{Agent, AgentState, InjectionConfig, ReActConfig};
use oxiscope_message::{Msg, PermissionBehavior, PermissionRule};
use oxiscope_model::DynChatModel;
use oxiscope_providers::openai_chat::OpenAiChatModel;
use oxiscope_test_support::OpenAiScript;
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use oxiscope_tool::{FunctionTool, Toolkit};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

const ROUNDS: usize = 20;

fn main() {
    divan::main();
}

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A number.
    n: u32,
}

fn script() -> Vec<ScriptedResponse> {
    let mut out: Vec<ScriptedResponse> = (0..ROUNDS)
        .map(|i| {
            OpenAiScript::new()
                .text("Checking.")
                .tool_call(0, format!("call_{i}"), "echo")
                .tool_args(0, format!("{{\"n\": {i}}}"))
                .finish("tool_calls")
                .usage(100, 10, 0)
                .response()
        })
        .collect();
    out.push(
        OpenAiScript::new()
            .text("All done.")
            .finish("stop")
            .usage(100, 3, 0)
            .response(),
    );
    out
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

struct Setup {
    rt: tokio::runtime::Runtime,
    server: FakeServer,
    responses: Vec<ScriptedResponse>,
}

fn setup() -> Setup {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start()).unwrap();
    Setup {
        rt,
        server,
        responses: script(),
    }
}

impl Setup {
    fn load(&self) {
        for r in &self.responses {
            self.server.push(r.clone());
        }
    }
}

fn agent(base_url: &str) -> Agent {
    let model = OpenAiChatModel::builder("gpt-bench")
        .with_api_key("sk-bench")
        .with_base_url(base_url)
        .build()
        .unwrap();
    let model: Arc<dyn DynChatModel> = Arc::new(model);
    let mut toolkit = Toolkit::new();
    toolkit
        .register(FunctionTool::new("echo", |a: Args| async move {
            a.n.to_string()
        }))
        .unwrap();
    let mut state = AgentState::default();
    state.permission_context.add_rule(PermissionRule::new(
        "echo",
        None,
        PermissionBehavior::Allow,
        "session",
    ));
    Agent::builder("bench", model)
        .system_prompt("You are a benchmark.")
        .toolkit(Arc::new(toolkit))
        .react_config(ReActConfig {
            max_iters: 100,
            ..ReActConfig::default()
        })
        .injection_config(InjectionConfig {
            inject_runtime_state: false,
            ..InjectionConfig::default()
        })
        .state(state)
        .build()
        .unwrap()
}

#[divan::bench(sample_count = 30, sample_size = 1)]
fn oxiscope_agent_20_tool_rounds(bencher: Bencher<'_, '_>) {
    let s = setup();
    let base = s.server.url("/v1");
    bencher
        .with_inputs(|| {
            s.load();
            agent(&base)
        })
        .bench_local_values(|a| {
            s.rt.block_on(async {
                let events = a
                    .reply_stream(Msg::user("user", "go").unwrap())
                    .count()
                    .await;
                assert!(events > ROUNDS * 5);
            });
        });
}

/// The baseline: the same requests and stream parsing, nothing else.
async fn bare_loop(client: &reqwest::Client, url: &str) -> usize {
    let tools = json!([{"type": "function", "function": {"name": "echo", "description": "Echo.",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}]);
    let mut messages = vec![
        json!({"role": "system", "content": "You are a benchmark."}),
        json!({"role": "user", "content": "go"}),
    ];
    let mut rounds = 0;
    loop {
        let body = json!({"model": "gpt-bench", "messages": messages, "tools": tools, "stream": true,
                          "stream_options": {"include_usage": true}});
        let response = client
            .post(url)
            .header("content-type", "application/json")
            .header("authorization", "Bearer sk-bench")
            .body(serde_json::to_vec(&body).unwrap())
            .send()
            .await
            .unwrap();
        let mut stream = response.bytes_stream();
        let mut buffer: Vec<u8> = Vec::new();
        let (mut text, mut call_id, mut args) = (String::new(), String::new(), String::new());
        while let Some(chunk) = stream.next().await {
            buffer.extend_from_slice(&chunk.unwrap());
            while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = buffer.drain(..end + 2).collect();
                let Some(data) = frame.strip_prefix(b"data: ") else {
                    continue;
                };
                let data = &data[..data.len() - 2];
                if data == b"[DONE]" {
                    continue;
                }
                let v: Value = serde_json::from_slice(data).unwrap();
                let delta = &v["choices"][0]["delta"];
                if let Some(t) = delta["content"].as_str() {
                    text.push_str(t);
                }
                if let Some(call) = delta["tool_calls"].get(0) {
                    if let Some(id) = call["id"].as_str() {
                        call_id = id.to_owned();
                    }
                    if let Some(a) = call["function"]["arguments"].as_str() {
                        args.push_str(a);
                    }
                }
            }
        }
        rounds += 1;
        if call_id.is_empty() {
            return rounds;
        }
        let n: Value = serde_json::from_str(&args).unwrap();
        messages.push(
            json!({"role": "assistant", "content": text, "tool_calls": [{"id": call_id,
            "type": "function", "function": {"name": "echo", "arguments": args}}]}),
        );
        messages
            .push(json!({"role": "tool", "tool_call_id": call_id, "content": n["n"].to_string()}));
    }
}

#[divan::bench(sample_count = 30, sample_size = 1)]
fn bare_reqwest_loop_20_tool_rounds(bencher: Bencher<'_, '_>) {
    let s = setup();
    let url = s.server.url("/v1/chat/completions");
    let client = oxiscope_http_client();
    bencher.with_inputs(|| s.load()).bench_local_values(|()| {
        s.rt.block_on(async {
            assert_eq!(bare_loop(&client, &url).await, ROUNDS + 1);
        });
    });
}

/// A plain reqwest client (the crypto provider must exist even for http).
fn oxiscope_http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}
