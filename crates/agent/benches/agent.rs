//! Agent-loop overhead with the scripted in-process model (no HTTP):
//! a reply streaming 1,000 text deltas, a reply of 20 tool rounds, 1,000
//! such replies on concurrent agents, and the memory of an idle agent
//! holding a 50-message context.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use divan::{AllocProfiler, Bencher, black_box};
use futures_util::StreamExt;
use oxiscope_agent::{Agent, AgentState, InjectionConfig, ReActConfig};
use oxiscope_message::{Msg, PermissionBehavior, PermissionRule};
use oxiscope_model::{DynChatModel, ModelDelta};
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use oxiscope_tool::{FunctionTool, Toolkit};
use schemars::JsonSchema;
use serde::Deserialize;

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A number.
    n: u32,
}

fn toolkit() -> Arc<Toolkit> {
    let mut toolkit = Toolkit::new();
    toolkit
        .register(FunctionTool::new("echo", |a: Args| async move {
            a.n.to_string()
        }))
        .unwrap();
    Arc::new(toolkit)
}

fn state() -> AgentState {
    let mut state = AgentState::default();
    state.permission_context.add_rule(PermissionRule::new(
        "echo",
        None,
        PermissionBehavior::Allow,
        "session",
    ));
    state
}

fn agent(turns: Vec<ScriptedTurn>, toolkit: Arc<Toolkit>) -> Agent {
    let model: Arc<dyn DynChatModel> = Arc::new(ScriptedModel::new(turns));
    Agent::builder("bench", model)
        .toolkit(toolkit)
        .react_config(ReActConfig {
            max_iters: 100,
            ..ReActConfig::default()
        })
        .injection_config(InjectionConfig {
            inject_runtime_state: false,
            ..InjectionConfig::default()
        })
        .state(state())
        .build()
        .unwrap()
}

fn text_turn(deltas: usize) -> ScriptedTurn {
    ScriptedTurn::deltas(
        (0..deltas)
            .map(|i| ModelDelta::Text(format!("t{} ", i % 10)))
            .collect(),
    )
}

fn tool_rounds(rounds: usize) -> Vec<ScriptedTurn> {
    let mut turns: Vec<ScriptedTurn> = (0..rounds)
        .map(|i| ScriptedTurn::tool_call(format!("c{i}"), "echo", format!("{{\"n\": {i}}}")))
        .collect();
    turns.push(ScriptedTurn::text("done"));
    turns
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn run(agent: &Agent) -> usize {
    agent
        .reply_stream(Msg::user("u", "go").unwrap())
        .count()
        .await
}

#[divan::bench]
fn reply_with_1000_text_deltas(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let tools = toolkit();
    bencher
        .with_inputs(|| agent(vec![text_turn(1000)], tools.clone()))
        .bench_local_values(|a| rt.block_on(run(&a)));
}

#[divan::bench]
fn reply_with_20_tool_rounds(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let tools = toolkit();
    bencher
        .with_inputs(|| agent(tool_rounds(20), tools.clone()))
        .bench_local_values(|a| rt.block_on(run(&a)));
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn concurrent_1000_agents_with_20_tool_rounds(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let tools = toolkit();
    bencher
        .with_inputs(|| {
            (0..1000)
                .map(|_| agent(tool_rounds(20), tools.clone()))
                .collect::<Vec<_>>()
        })
        .bench_local_values(|agents| {
            rt.block_on(async {
                let tasks: Vec<_> = agents
                    .into_iter()
                    .map(|a| tokio::spawn(async move { run(&a).await }))
                    .collect();
                for t in tasks {
                    black_box(t.await.unwrap());
                }
            });
        });
}

/// An idle agent holding a 50-message context (25 questions, 25 answers of
/// ~200 characters). The allocation profile of building it bounds its
/// memory from above.
#[divan::bench]
fn idle_agent_with_50_messages() -> Agent {
    let mut state = state();
    for i in 0..25 {
        state
            .context
            .push(Msg::user("user", format!("Question {i}: {}", "word ".repeat(40))).unwrap());
        state
            .context
            .push(Msg::assistant("bench", format!("Answer {i}: {}", "word ".repeat(40))).unwrap());
    }
    let model: Arc<dyn DynChatModel> = Arc::new(ScriptedModel::new([]));
    Agent::builder("bench", model).state(state).build().unwrap()
}
