//! What an agent's state costs at rest: the resident memory of idle agents
//! restored from a saved state, the size of a saved state, and the time of a
//! save + load round trip.
//!
//! Three measurements (issue #22):
//!
//! - **memory**: a realistic 50-message state (user questions, assistant
//!   answers, tool calls with their results, usage) saved as JSON; 1,000
//!   agents are restored from that JSON (each parses it and is built with a
//!   ~2 KB system prompt and a shared toolkit of 10 tools) and held. The
//!   resident-set growth (`/proc/self/statm`) divided by 1,000 is the memory
//!   of one idle agent. Each run is a fresh child process; the median of 3
//!   runs is printed.
//! - **size**: AgentScope's own populated reference state (written by
//!   AgentScope 2.0.11) grown to 200 messages, saved by Oxiscope, next to the
//!   same JSON as AgentScope wrote it; and the size of this bench's own
//!   200-message conversation.
//! - **round trip**: `serde_json::to_vec` + `serde_json::from_slice` of a
//!   200-message state (divan, median), and each half alone.
//!
//! Run with `cargo bench -p oxiscope-agent --bench state`.
//!
//! Numbers on the shared 2-core development machine (medians; timings are
//! noisy there, so the fastest sample is given too):
//!
//! | | first measured | session 6 | now | target |
//! |---|---|---|---|---|
//! | RSS per idle agent restored from 50 messages | 99.2 KiB | 70.3 KiB | 42.5 KiB | <= 48 KiB |
//! | the same state as a `serde_json::Value` | | 296.5 KiB | 296.5 KiB | (comparison) |
//! | saved state, AgentScope's 200 messages | 202,935 B | 202,935 B | 202,935 B | <= AgentScope's 202,935 B |
//! | saved state, this bench's 200 messages | 164,128 B | 164,128 B | 164,128 B | |
//! | save + load round trip, 200 messages | 706 µs | 425-452 µs | 466-476 µs (fastest 438) | <= 0.5 ms |
//! | load alone | 550 µs | 307-319 µs | 314-326 µs (fastest 308) | |
//! | save alone | 127 µs | 110-132 µs | 134-142 µs (fastest 132) | |
//!
//! Session 6: blocks are parsed in one pass (they went through a
//! `serde_json::Value` object each), tool outputs and summaries without
//! untagged-enum buffering, and parsed lists are trimmed to their length (a
//! one-block message kept room for four blocks; the context up to twice its
//! messages). The agent holds its system prompt as a shared `Arc<str>` and
//! takes the default toolkit, backend and configs from process-wide shared
//! values instead of making them per agent (~0.5 KiB per agent left, the
//! state is the rest).
//!
//! Session 7, the message types themselves: ids are
//! [`oxiscope_message::Id`] (kept inline up to 38 bytes: a 32-hex id was a
//! 24-byte `String` plus a 48-byte allocation), timestamps
//! [`oxiscope_message::Stamp`] (8 packed bytes for the canonical form, which
//! is what both AgentScope and Oxiscope write; any other text kept as
//! written), empty `metadata` / thinking `extra` objects one null pointer
//! ([`oxiscope_message::Metadata`], a 72-byte order-preserving map before),
//! and the rare `structured_output` and `error` of a message boxed.
//! `Msg` went from 344 to 192 bytes, `ContentBlock` from 208 to 160, and
//! ~330 of a 50-message state's heap allocations are gone. Saving writes
//! each timestamp from its fields (~10 ns), which is why save is a few
//! microseconds slower than when it copied strings.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout
)]

use std::process::Command;
use std::sync::Arc;

use divan::{Bencher, black_box};
use oxiscope_agent::{Agent, AgentState};
use oxiscope_message::{
    ContentBlock, Msg, PermissionBehavior, PermissionRule, TextBlock, ToolCallBlock, ToolCallState,
    ToolResultBlock, ToolResultState, Usage,
};
use oxiscope_model::DynChatModel;
use oxiscope_test_support::ScriptedModel;
use oxiscope_tool::{FunctionTool, Toolkit};
use schemars::JsonSchema;
use serde::Deserialize;

/// The variable that turns the binary into one memory-measuring run.
const CHILD: &str = "OXISCOPE_STATE_BENCH_CHILD";
const AGENTS: usize = 1_000;
const RUNS: usize = 3;

fn main() {
    match std::env::var(CHILD).as_deref() {
        Ok("agents") => return println!("{}", restore_agents_rss_per_agent()),
        Ok("values") => return println!("{}", values_rss_per_state()),
        _ => {}
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` only checks
    // that the timed benches run, without the slower reports.
    if std::env::args().any(|a| a == "--bench") {
        report_memory();
        report_size();
    }
    divan::main();
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Args {
    /// The path to work on.
    path: String,
    /// How many lines, at most.
    limit: Option<u32>,
}

/// Ten tools with typed arguments, shared by every agent.
fn toolkit() -> Arc<Toolkit> {
    let mut toolkit = Toolkit::new();
    for name in [
        "Read", "Write", "Edit", "Glob", "Grep", "Bash", "List", "Fetch", "Search", "Todo",
    ] {
        let tool = FunctionTool::new(name, |a: Args| async move { a.path }).with_description(
            format!("{name} something at a path; {}", "detail ".repeat(20)),
        );
        toolkit.register(tool).unwrap();
    }
    Arc::new(toolkit)
}

/// A ~2 KB system prompt, held once for all agents.
fn system_prompt() -> Arc<str> {
    let line = "You are a careful assistant working in a software repository. ";
    Arc::from(line.repeat(2048 / line.len() + 1))
}

fn words(seed: usize, n: usize) -> String {
    (0..n)
        .map(|w| format!("w{} ", (seed * 31 + w * 7) % 997))
        .collect()
}

/// A conversation of `messages` messages: questions, answers, and on every
/// other answer a tool call with its result, as a reply leaves them.
fn conversation(messages: usize) -> AgentState {
    let mut state = AgentState::default();
    state.permission_context.add_rule(PermissionRule::new(
        "Read",
        None,
        PermissionBehavior::Allow,
        "session",
    ));
    for i in 0..messages / 2 {
        state
            .context
            .push(Msg::user("user", format!("Question {i}: {}", words(i, 30))).unwrap());
        let mut blocks: Vec<ContentBlock> = Vec::new();
        if i % 2 == 0 {
            let id = format!("call_{i:08}");
            let mut call = ToolCallBlock::new(
                id.clone(),
                "Read",
                format!(r#"{{"path": "src/file_{i}.rs", "limit": 200}}"#),
            );
            call.state = ToolCallState::Finished;
            call.finished_at = Some(call.created_at.clone());
            blocks.push(TextBlock::new(format!("Let me look: {}", words(i + 1, 8))).into());
            blocks.push(call.into());
            blocks.push(
                ToolResultBlock::new(id, "Read", words(i + 2, 60), ToolResultState::Success).into(),
            );
        }
        blocks.push(TextBlock::new(format!("Answer {i}: {}", words(i + 3, 30))).into());
        let mut answer = Msg::assistant("Friday", blocks).unwrap();
        answer.usage = Some(Usage {
            input_tokens: 1_000 + i as u64,
            output_tokens: 100,
            cache_input_tokens: 0,
            cache_creation_input_tokens: 0,
        });
        answer.finished_at = Some(answer.created_at.clone());
        answer.finished_reason = Some(oxiscope_message::ReplyFinishedReason::Completed);
        state.reply_context.reply_id = answer.id.to_string();
        state.reply_context.cur_iter = 2;
        state.context.push(answer);
    }
    state
}

fn resident_bytes() -> usize {
    // statm: size resident shared text lib data dt, in pages (4 KiB here).
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// One run: restores 1,000 agents from the saved JSON of a 50-message
/// state and returns the resident-set growth per agent, in bytes.
fn restore_agents_rss_per_agent() -> usize {
    let saved = serde_json::to_vec(&conversation(50)).unwrap();
    let model: Arc<dyn DynChatModel> = Arc::new(ScriptedModel::new([]));
    let tools = toolkit();
    let prompt = system_prompt();
    // Warm-up: one agent, so lazily made shared parts are not counted.
    let warm = restore(&saved, &model, &tools, &prompt);
    let before = resident_bytes();
    let agents: Vec<Agent> = (0..AGENTS)
        .map(|_| restore(&saved, &model, &tools, &prompt))
        .collect();
    let after = resident_bytes();
    black_box((&agents, &warm));
    after.saturating_sub(before) / AGENTS
}

/// The comparison: the same saved state held as 1,000 `serde_json::Value`s.
fn values_rss_per_state() -> usize {
    let saved = serde_json::to_vec(&conversation(50)).unwrap();
    let warm: serde_json::Value = serde_json::from_slice(&saved).unwrap();
    let before = resident_bytes();
    let values: Vec<serde_json::Value> = (0..AGENTS)
        .map(|_| serde_json::from_slice(&saved).unwrap())
        .collect();
    let after = resident_bytes();
    black_box((&values, &warm));
    after.saturating_sub(before) / AGENTS
}

fn restore(
    saved: &[u8],
    model: &Arc<dyn DynChatModel>,
    tools: &Arc<Toolkit>,
    prompt: &Arc<str>,
) -> Agent {
    let state: AgentState = serde_json::from_slice(saved).unwrap();
    Agent::builder("Friday", Arc::clone(model))
        .system_prompt(Arc::clone(prompt))
        .toolkit(Arc::clone(tools))
        .state(state)
        .build()
        .unwrap()
}

fn median(mut values: Vec<usize>) -> usize {
    values.sort_unstable();
    values[values.len() / 2]
}

/// Runs `mode` in `RUNS` fresh processes: the growth per item of each run.
fn child_runs(mode: &str) -> Vec<usize> {
    let exe = std::env::current_exe().unwrap();
    (0..RUNS)
        .map(|_| {
            let out = Command::new(&exe).env(CHILD, mode).output().unwrap();
            assert!(out.status.success(), "{out:?}");
            String::from_utf8(out.stdout)
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect()
}

fn report_memory() {
    for (mode, what) in [
        ("agents", "idle agent restored from a 50-message state"),
        (
            "values",
            "the same state held as a serde_json::Value (comparison)",
        ),
    ] {
        let runs = child_runs(mode);
        let each: Vec<String> = runs.iter().map(|b| format!("{:.1}", kib(*b))).collect();
        println!(
            "{what}: {:.1} KiB each, RSS (median of {RUNS} runs of {AGENTS}: {})",
            kib(median(runs.clone())),
            each.join(", ")
        );
    }
}

#[allow(clippy::cast_precision_loss)]
fn kib(bytes: usize) -> f64 {
    bytes as f64 / 1024.0
}

/// AgentScope's own 200-message state: the populated reference state
/// (written by AgentScope 2.0.11) with its question and its answer (thinking,
/// text, tool call, tool result, hint, usage) repeated 100 times.
fn agentscope_200_messages() -> serde_json::Value {
    let examples = oxiscope_test_support::fixtures::load("wire/agent_state.examples.json");
    let mut state = examples[1]["value"].clone();
    let pair = state["context"].as_array().unwrap().clone();
    assert_eq!(pair.len(), 2);
    let context: Vec<serde_json::Value> = (0..100).flat_map(|_| pair.clone()).collect();
    state["context"] = serde_json::Value::Array(context);
    state
}

fn report_size() {
    let theirs = agentscope_200_messages();
    let theirs_bytes = serde_json::to_vec(&theirs).unwrap();
    let ours: AgentState = serde_json::from_value(theirs).unwrap();
    let ours_bytes = serde_json::to_vec(&ours).unwrap();
    println!(
        "saved state of AgentScope's 200-message reference conversation: {} bytes as Oxiscope \
         saves it, {} bytes as AgentScope 2.0.11 wrote it (both compact JSON)",
        ours_bytes.len(),
        theirs_bytes.len()
    );
    let bench = serde_json::to_vec(&conversation(200)).unwrap();
    println!(
        "saved state of the bench's 200-message conversation: {} bytes",
        bench.len()
    );
}

/// Save + load of a 200-message state.
#[divan::bench(sample_count = 200)]
fn save_and_load_200_messages(bencher: Bencher<'_, '_>) {
    let state = conversation(200);
    bencher.bench_local(|| {
        let bytes = serde_json::to_vec(black_box(&state)).unwrap();
        let back: AgentState = serde_json::from_slice(&bytes).unwrap();
        back
    });
}

/// Load alone, from bytes.
#[divan::bench(sample_count = 200)]
fn load_200_messages(bencher: Bencher<'_, '_>) {
    let bytes = serde_json::to_vec(&conversation(200)).unwrap();
    bencher.bench_local(|| serde_json::from_slice::<AgentState>(black_box(&bytes)).unwrap());
}

/// Save alone, to bytes.
#[divan::bench(sample_count = 200)]
fn save_200_messages(bencher: Bencher<'_, '_>) {
    let state = conversation(200);
    bencher.bench_local(|| serde_json::to_vec(black_box(&state)).unwrap());
}
