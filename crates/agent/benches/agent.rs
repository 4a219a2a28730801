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

/// A 2,000-message context (1,000 questions and answers of ~50 tokens,
/// each different) counted with GPT-4o's real tokenizer.
fn long_agent(context_size: u64, turns: Vec<ScriptedTurn>) -> Agent {
    let mut state = state();
    for i in 0..1000 {
        let words: String = (0..40)
            .map(|w| format!("w{} ", (i * 7 + w) % 997))
            .collect();
        state
            .context
            .push(Msg::user("user", format!("Question {i}: {words}")).unwrap());
        state
            .context
            .push(Msg::assistant("bench", format!("Answer {i}: {words}")).unwrap());
    }
    let model = ScriptedModel::new(turns)
        .with_model_name("gpt-4o")
        .with_context_size(context_size);
    let model: Arc<dyn DynChatModel> = Arc::new(model);
    Agent::builder("bench", model).state(state).build().unwrap()
}

/// Token accounting and the compression decision over 2,000 messages with
/// nothing cached yet (a fresh agent): every message is counted.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn context_check_2000_messages_uncached(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    bencher
        .with_inputs(|| long_agent(400_000, vec![]))
        .bench_local_values(|a| rt.block_on(a.compress_context(None, None)).unwrap());
}

/// The same check once the counts are cached, as every reasoning step
/// after the first sees it.
#[divan::bench]
fn context_check_2000_messages_cached(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let a = long_agent(400_000, vec![]);
    let warm = rt.block_on(a.compress_context(None, None)).unwrap();
    assert!(!warm.compressed && warm.tokens_before > 100_000, "{warm:?}");
    bencher.bench_local(|| rt.block_on(a.compress_context(None, None)).unwrap());
}

/// A compression of the 2,000 messages (the scripted model answers the
/// summary at once): choosing the cut, building the summary request,
/// applying the summary, recounting.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn compress_2000_messages(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let summary = r#"{"task_overview": "t", "current_state": "c", "important_discoveries": "i", "next_steps": "n", "context_to_preserve": "p"}"#;
    bencher
        .with_inputs(|| {
            long_agent(
                100_000,
                vec![ScriptedTurn::tool_call(
                    "s",
                    oxiscope_model::STRUCTURED_OUTPUT_TOOL,
                    summary,
                )],
            )
        })
        .bench_local_values(|a| {
            let outcome = rt.block_on(a.compress_context(None, None)).unwrap();
            assert!(outcome.compressed);
            outcome
        });
}
