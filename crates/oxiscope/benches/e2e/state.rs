//! Saved state: the resident memory of an idle agent restored from a
//! 50-message state, and the time of a save + load of a 200-message state,
//! against the floor: the same JSON held in plain derived structs (every
//! field, strings as `String`, the non-conversation parts as
//! `serde_json::Value`) — and, for memory, as one `serde_json::Value`.

use std::sync::Arc;

use oxiscope_agent::{Agent, AgentState};
use oxiscope_message::{
    ContentBlock, Msg, PermissionBehavior, PermissionRule, ReplyFinishedReason, TextBlock,
    ToolCallBlock, ToolCallState, ToolResultBlock, ToolResultState, Usage,
};
use oxiscope_model::DynChatModel;
use oxiscope_test_support::ScriptedModel;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Agents (or states) held per memory run.
pub const AGENTS: usize = 1_000;

/// The floor's state: the conversation typed, the rest as JSON values.
#[derive(Debug, Serialize, Deserialize)]
pub struct FloorState {
    session_id: String,
    summary: Value,
    context: Vec<FloorMsg>,
    reply_context: Value,
    permission_context: Value,
    tool_context: Value,
    tasks_context: Value,
    middle_context: Value,
}

#[derive(Debug, Serialize, Deserialize)]
struct FloorMsg {
    name: String,
    content: Vec<FloorBlock>,
    role: String,
    id: String,
    metadata: Map<String, Value>,
    created_at: String,
    usage: Option<FloorUsage>,
    finished_at: Option<String>,
    finished_reason: Option<String>,
    structured_output: Option<Value>,
    error: Option<Value>,
}

#[derive(Debug, Serialize, Deserialize)]
struct FloorUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_input_tokens: u64,
    cache_creation_input_tokens: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum FloorBlock {
    Text {
        text: String,
        id: String,
        created_at: String,
        finished_at: Option<String>,
    },
    Thinking {
        thinking: String,
        id: String,
        created_at: String,
        finished_at: Option<String>,
    },
    ToolCall {
        id: String,
        name: String,
        input: String,
        state: String,
        suggested_rules: Vec<Value>,
        created_at: String,
        finished_at: Option<String>,
    },
    ToolResult {
        id: String,
        name: String,
        output: Value,
        state: String,
        metadata: Map<String, Value>,
        created_at: String,
        finished_at: Option<String>,
    },
    Hint {
        hint: Value,
        id: String,
        source: String,
        created_at: String,
        finished_at: Option<String>,
    },
}

fn words(seed: usize, n: usize) -> String {
    (0..n)
        .map(|w| format!("w{} ", (seed * 31 + w * 7) % 997))
        .collect()
}

/// A conversation of `messages` messages: questions, answers, and on every
/// other answer a tool call with its result, as a reply leaves them (the
/// conversation of `oxiscope-agent`'s state bench).
pub fn conversation(messages: usize) -> AgentState {
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
        answer.finished_reason = Some(ReplyFinishedReason::Completed);
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

/// Resident-set growth per item of holding `AGENTS` items made by `make`
/// (one made first, so lazily made shared parts are not counted).
fn growth_per_item<T>(make: impl Fn() -> T) -> usize {
    let warm = make();
    let before = resident_bytes();
    let items: Vec<T> = (0..AGENTS).map(|_| make()).collect();
    let after = resident_bytes();
    std::hint::black_box((&items, &warm));
    after.saturating_sub(before) / AGENTS
}

/// One memory run (in a fresh process): `agents`, `floor` or `values`.
pub fn rss_per_item(mode: &str) -> usize {
    let saved = serde_json::to_vec(&conversation(50)).unwrap();
    match mode {
        "agents" => {
            let model: Arc<dyn DynChatModel> = Arc::new(ScriptedModel::new([]));
            let tools = super::oxi::toolkit();
            let prompt: Arc<str> = Arc::from(super::SYSTEM_PROMPT);
            growth_per_item(|| {
                let state: AgentState = serde_json::from_slice(&saved).unwrap();
                Agent::builder("Friday", Arc::clone(&model))
                    .system_prompt(Arc::clone(&prompt))
                    .toolkit(Arc::clone(&tools))
                    .state(state)
                    .build()
                    .unwrap()
            })
        }
        "floor" => growth_per_item(|| serde_json::from_slice::<FloorState>(&saved).unwrap()),
        _ => growth_per_item(|| serde_json::from_slice::<Value>(&saved).unwrap()),
    }
}

/// The JSON of a 200-message state, and the same parsed by the floor.
pub fn saved_200() -> (AgentState, FloorState) {
    let state = conversation(200);
    let bytes = serde_json::to_vec(&state).unwrap();
    (state, serde_json::from_slice(&bytes).unwrap())
}

/// Save + load of `state` by Oxiscope.
pub fn round_trip(state: &AgentState) -> AgentState {
    let bytes = serde_json::to_vec(state).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// Save + load of `state` by the floor.
pub fn floor_round_trip(state: &FloorState) -> FloorState {
    let bytes = serde_json::to_vec(state).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// AgentScope's populated reference state (written by AgentScope 2.0.11)
/// grown to 200 messages: (bytes as AgentScope wrote it, bytes as Oxiscope
/// saves it after loading it).
pub fn agentscope_sizes() -> (usize, usize) {
    let examples = oxiscope_test_support::fixtures::load("wire/agent_state.examples.json");
    let mut state = examples[1]["value"].clone();
    let pair = state["context"].as_array().unwrap().clone();
    let context: Vec<Value> = (0..100).flat_map(|_| pair.clone()).collect();
    state["context"] = Value::Array(context);
    let theirs = serde_json::to_vec(&state).unwrap().len();
    let ours: AgentState = serde_json::from_value(state).unwrap();
    (theirs, serde_json::to_vec(&ours).unwrap().len())
}
