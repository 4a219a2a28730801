//! Token-counting benchmarks: a 2,000-message agent context counted whole,
//! and the per-step cost when per-message counts are cached.

#![allow(missing_docs, clippy::unwrap_used)]

use divan::{Bencher, black_box};
use oxiscope_message::{
    ContentBlock, Msg, TextBlock, ToolCallBlock, ToolResultBlock, ToolResultState,
};
use oxiscope_model::{ApproxCounter, BpeCounter, BpeEncoding, REPLY_PRIMING, TokenCounter};

fn main() {
    divan::main();
}

/// A coding-agent context: user turns, assistant text with tool calls, and
/// tool results of source text, about 200 bytes to 2 KB per message.
fn context(n: usize) -> Vec<Msg> {
    let source = "fn main() {\n    let x = compute(42);\n    println!(\"{x}\");\n}\n";
    (0..n)
        .map(|i| match i % 3 {
            0 => Msg::user(
                "user",
                format!("Please look at src/file_{i}.rs and fix the bug in line {i}."),
            )
            .unwrap(),
            1 => Msg::assistant(
                "Friday",
                vec![
                    ContentBlock::Text(TextBlock::new(
                        "I will read the file first, then patch it.",
                    )),
                    ToolCallBlock::new(
                        format!("call_{i}"),
                        "Read",
                        format!("{{\"file_path\": \"src/file_{i}.rs\"}}"),
                    )
                    .into(),
                ],
            )
            .unwrap(),
            _ => Msg::assistant(
                "Friday",
                vec![
                    ToolResultBlock::new(
                        format!("call_{i}"),
                        "Read",
                        source.repeat(1 + i % 25),
                        ToolResultState::Success,
                    )
                    .into(),
                ],
            )
            .unwrap(),
        })
        .collect()
}

const N: usize = 2_000;

#[divan::bench(args = ["o200k_base", "cl100k_base", "approx"])]
fn count_2000_messages(bencher: Bencher<'_, '_>, counter: &str) {
    let counter: Box<dyn TokenCounter> = match counter {
        "o200k_base" => Box::new(BpeCounter::new(BpeEncoding::O200kBase)),
        "cl100k_base" => Box::new(BpeCounter::new(BpeEncoding::Cl100kBase)),
        _ => Box::new(ApproxCounter::new()),
    };
    let msgs = context(N);
    black_box(counter.count_messages(&msgs)); // load the vocabulary outside the timing
    bencher
        .counter(divan::counter::ItemsCount::new(N))
        .bench(|| black_box(counter.count_messages(black_box(&msgs))));
}

/// One reasoning step with cached per-message counts: count the newest
/// message and add it to the running total.
#[divan::bench]
fn step_with_cached_counts(bencher: Bencher<'_, '_>) {
    let counter = BpeCounter::new(BpeEncoding::O200kBase);
    let msgs = context(N);
    let cached: Vec<usize> = msgs.iter().map(|m| counter.count_message(m)).collect();
    let newest = msgs.last().unwrap();
    bencher.bench(|| {
        let known: usize = black_box(&cached[..N - 1]).iter().sum();
        black_box(REPLY_PRIMING + known + counter.count_message(black_box(newest)))
    });
}
