//! Building the request body of one model call over a long agent
//! conversation: 2,000 messages (user turns, assistant turns with thinking,
//! text, tool calls and their results), formatted by the model's own
//! formatter and encoded to JSON bytes as the model's call does, for the
//! OpenAI chat family and for Anthropic. No HTTP. The bodies are about
//! 5.2 MB (OpenAI) and 5.4 MB (Anthropic).
//!
//! - `format_only`: the formatter alone, over the whole conversation.
//! - `body_uncached`: the request bytes with the message cache off (every
//!   message formatted and encoded on every call).
//! - `body_cold`: the first call of a model with the cache.
//! - `body_warm_one_new_message`: the agent-loop call, one message more
//!   than the previous call.
//! - `body_warm_unchanged`: the same conversation again.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use divan::{Bencher, black_box};
use oxiscope_message::{
    ContentBlock, Msg, Role, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock,
    ToolResultState,
};
use oxiscope_model::{ChatRequest, ToolSchema};
use oxiscope_providers::anthropic::AnthropicChatModel;
use oxiscope_providers::openai_chat::OpenAiChatModel;
use serde_json::json;

const MESSAGES: usize = 2_000;

fn main() {
    divan::main();
}

/// Prose of about `len` bytes, varied by `seed`.
fn prose(seed: usize, len: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "agent",
        "reads",
        "file",
        "and",
        "edits",
        "a",
        "function",
        "called",
        "parse",
        "returns",
        "error",
        "when",
        "input",
        "is",
        "empty",
        "\"quoted\"",
        "line\n",
        "über",
        "tests",
        "pass",
        "tool",
        "result",
        "{json}",
    ];
    let mut out = String::with_capacity(len + 16);
    let mut i = seed;
    while out.len() < len {
        out.push_str(WORDS[i % WORDS.len()]);
        out.push(' ');
        i = i.wrapping_mul(31).wrapping_add(7);
    }
    out
}

/// A size in `200..=2000`, varied by `seed`.
fn size(seed: usize) -> usize {
    200 + (seed.wrapping_mul(7919) % 1801)
}

/// The conversation: a user turn, then assistant turns of thinking (one in
/// four), text, one or two tool calls and their results.
fn conversation(n: usize) -> Vec<Msg> {
    let mut msgs = vec![Msg::from_text(
        "system",
        Role::System,
        "You are a careful coding agent.",
    )];
    let mut i = 0;
    while msgs.len() < n {
        if i % 8 == 0 {
            msgs.push(Msg::from_text("user", Role::User, prose(i, size(i))));
        } else {
            let mut content = Vec::new();
            if i % 4 == 1 {
                let mut t = ThinkingBlock::new(prose(i + 1, size(i + 1) / 2));
                t.extra
                    .insert("signature".into(), json!(format!("sig-{i}")));
                content.push(ContentBlock::Thinking(t));
            }
            content.push(ContentBlock::Text(TextBlock::new(prose(i + 2, 300))));
            for c in 0..=(i % 2) {
                let id = format!("call_{i}_{c}");
                let input = json!({"path": format!("src/m{i}.rs"), "query": prose(i + c, 150)});
                content.push(ContentBlock::ToolCall(ToolCallBlock::new(
                    id.clone(),
                    "read_file",
                    input.to_string(),
                )));
                content.push(ContentBlock::ToolResult(ToolResultBlock::new(
                    id,
                    "read_file",
                    prose(i + 3 + c, size(i + 3 + c)),
                    ToolResultState::Success,
                )));
            }
            msgs.push(Msg::new("agent", Role::Assistant, content).unwrap());
        }
        i += 1;
    }
    msgs
}

fn tools() -> Vec<ToolSchema> {
    ["read_file", "write_file", "search", "run"]
        .iter()
        .map(|name| {
            ToolSchema::function(
                *name,
                format!("The {name} tool."),
                json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            )
        })
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

fn openai(cache_bytes: usize) -> OpenAiChatModel {
    OpenAiChatModel::builder("gpt-4.1")
        .with_api_key("sk-test")
        .with_message_cache_bytes(cache_bytes)
        .build()
        .unwrap()
}

fn anthropic(cache_bytes: usize) -> AnthropicChatModel {
    AnthropicChatModel::new("sk-test", "claude-sonnet-4-5")
        .unwrap()
        .with_message_cache_bytes(cache_bytes)
}

const CACHE: usize = 256 * 1024 * 1024;

/// What a call of either model sends, as bytes.
trait Sends {
    fn bytes(&self, rt: &tokio::runtime::Runtime, msgs: &[Msg], tools: &[ToolSchema]) -> usize;
    fn format_only(&self, rt: &tokio::runtime::Runtime, msgs: &[Msg]) -> usize;
}

impl Sends for OpenAiChatModel {
    fn bytes(&self, rt: &tokio::runtime::Runtime, msgs: &[Msg], tools: &[ToolSchema]) -> usize {
        let request = ChatRequest {
            messages: msgs,
            tools,
            tool_choice: None,
        };
        rt.block_on(self.request_bytes(request)).unwrap().len()
    }

    fn format_only(&self, rt: &tokio::runtime::Runtime, msgs: &[Msg]) -> usize {
        rt.block_on(self.formatter().format(msgs)).unwrap().len()
    }
}

impl Sends for AnthropicChatModel {
    fn bytes(&self, rt: &tokio::runtime::Runtime, msgs: &[Msg], tools: &[ToolSchema]) -> usize {
        let request = ChatRequest {
            messages: msgs,
            tools,
            tool_choice: None,
        };
        rt.block_on(self.request_bytes(request)).unwrap().len()
    }

    fn format_only(&self, rt: &tokio::runtime::Runtime, msgs: &[Msg]) -> usize {
        rt.block_on(self.formatter().format(msgs)).unwrap().len()
    }
}

fn make(provider: &str, cache_bytes: usize) -> Box<dyn Sends> {
    match provider {
        "openai" => Box::new(openai(cache_bytes)),
        _ => Box::new(anthropic(cache_bytes)),
    }
}

const PROVIDERS: &[&str] = &["openai", "anthropic"];

/// The formatter alone (the whole conversation, as a custom formatter would
/// do on every call).
#[divan::bench(args = PROVIDERS)]
fn format_only(bencher: Bencher<'_, '_>, provider: &str) {
    let rt = runtime();
    let model = make(provider, 0);
    let msgs = conversation(MESSAGES);
    bencher.bench_local(|| model.format_only(&rt, black_box(&msgs)));
}

/// The request bytes with nothing kept between calls: the cost of every
/// call without the cache.
#[divan::bench(args = PROVIDERS)]
fn body_uncached(bencher: Bencher<'_, '_>, provider: &str) {
    let rt = runtime();
    let model = make(provider, 0);
    let msgs = conversation(MESSAGES);
    let tools = tools();
    bencher.bench_local(|| model.bytes(&rt, black_box(&msgs), &tools));
}

/// The first call of a model with the cache: everything is formatted and
/// kept.
#[divan::bench(args = PROVIDERS, sample_count = 30)]
fn body_cold(bencher: Bencher<'_, '_>, provider: &str) {
    let rt = runtime();
    let msgs = conversation(MESSAGES);
    let tools = tools();
    bencher
        .with_inputs(|| make(provider, CACHE))
        .bench_local_refs(|model| model.bytes(&rt, black_box(&msgs), &tools));
}

/// The agent-loop call: the conversation was sent before and one new
/// message was added.
#[divan::bench(args = PROVIDERS)]
fn body_warm_one_new_message(bencher: Bencher<'_, '_>, provider: &str) {
    let rt = runtime();
    let model = make(provider, CACHE);
    let msgs = conversation(MESSAGES);
    let tools = tools();
    model.bytes(&rt, &msgs, &tools);
    let mut round = 0;
    bencher
        .with_inputs(|| {
            round += 1;
            let mut msgs = msgs.clone();
            msgs.push(Msg::from_text("user", Role::User, prose(round, 500)));
            msgs
        })
        .bench_local_refs(|msgs| model.bytes(&rt, black_box(msgs), &tools));
}

/// The same conversation again: every message kept.
#[divan::bench(args = PROVIDERS)]
fn body_warm_unchanged(bencher: Bencher<'_, '_>, provider: &str) {
    let rt = runtime();
    let model = make(provider, CACHE);
    let msgs = conversation(MESSAGES);
    let tools = tools();
    model.bytes(&rt, &msgs, &tools);
    bencher.bench_local(|| model.bytes(&rt, black_box(&msgs), &tools));
}
