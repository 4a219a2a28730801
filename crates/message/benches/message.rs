//! Message benchmarks: rebuilding a reply from 100,000 text deltas, and
//! serialising / parsing a 1 MB message.

#![allow(missing_docs, clippy::unwrap_used)]

use divan::{Bencher, black_box};
use oxiscope_message::{
    AgentEvent, ContentBlock, Msg, TextBlock, TextBlockDeltaEvent, TextBlockEndEvent,
    TextBlockStartEvent, ToolCallBlock, ToolResultBlock, ToolResultState,
};

fn main() {
    divan::main();
}

fn delta_stream(n: usize) -> Vec<AgentEvent> {
    let mut events = Vec::with_capacity(n + 2);
    events.push(TextBlockStartEvent::new("r".into(), "b".into()).into());
    for i in 0..n {
        events.push(
            TextBlockDeltaEvent::new("r".into(), "b".into(), format!("tok{} ", i % 10)).into(),
        );
    }
    events.push(TextBlockEndEvent::new("r".into(), "b".into(), None).into());
    events
}

#[divan::bench(args = [10_000, 100_000])]
fn rebuild_from_text_deltas(bencher: Bencher<'_, '_>, n: usize) {
    let events = delta_stream(n);
    bencher
        .counter(divan::counter::ItemsCount::new(n))
        .bench(|| {
            let mut msg = Msg::reply("Friday", "r");
            for e in &events {
                msg.append_event(e).unwrap();
            }
            black_box(msg)
        });
}

/// An assistant message of about 1 MB: text, tool calls and results.
fn big_message() -> Msg {
    let mut blocks: Vec<ContentBlock> = Vec::new();
    let para = "Lorem ipsum dolor sit amet, \"quoted\" and unicode: \u{00e9}\u{4e2d}.\n".repeat(20);
    let mut i = 0;
    while blocks
        .iter()
        .map(|b| serde_json::to_string(b).unwrap().len())
        .sum::<usize>()
        < 1_000_000
    {
        blocks.push(TextBlock::new(para.clone()).into());
        blocks.push(
            ToolCallBlock::new(
                format!("call_{i}"),
                "Read",
                r#"{"file_path": "/src/lib.rs"}"#,
            )
            .into(),
        );
        blocks.push(
            ToolResultBlock::new(
                format!("call_{i}"),
                "Read",
                para.clone(),
                ToolResultState::Success,
            )
            .into(),
        );
        i += 1;
    }
    Msg::assistant("Friday", blocks).unwrap()
}

#[divan::bench]
fn serialise_1mb(bencher: Bencher<'_, '_>) {
    let msg = big_message();
    let len = serde_json::to_string(&msg).unwrap().len();
    bencher
        .counter(divan::counter::BytesCount::new(len))
        .bench(|| serde_json::to_string(black_box(&msg)).unwrap());
}

#[divan::bench]
fn parse_1mb(bencher: Bencher<'_, '_>) {
    let json = serde_json::to_string(&big_message()).unwrap();
    bencher
        .counter(divan::counter::BytesCount::new(json.len()))
        .bench(|| serde_json::from_str::<Msg>(black_box(&json)).unwrap());
}
