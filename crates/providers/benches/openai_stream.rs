//! Decoding and accumulating a streamed Chat Completions response from memory:
//! the real SSE framing, chunk decoder and accumulator, no HTTP.
//!
//! `text_deltas` streams N one-word content chunks; `tool_call_fragments`
//! streams one tool call whose arguments arrive in N fragments. Run both at
//! 10k and 100k (text) / 100 and 1,000 (tool) to see the cost per event stay
//! flat.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream;
use oxiscope_model::accumulate;
use oxiscope_providers::openai_chat::decode_sse_stream;
use tokio_util::sync::CancellationToken;

fn main() {
    divan::main();
}

/// Bytes of an SSE body, cut into 16 KiB network-sized chunks.
fn body(events: impl Iterator<Item = String>) -> Vec<Bytes> {
    let mut all = String::new();
    for e in events {
        all.push_str("data: ");
        all.push_str(&e);
        all.push_str("\n\n");
    }
    all.push_str("data: [DONE]\n\n");
    all.into_bytes()
        .chunks(16 * 1024)
        .map(Bytes::copy_from_slice)
        .collect()
}

fn text_body(n: usize) -> Vec<Bytes> {
    let chunk = |content: &str, finish: &str| {
        format!(
            r#"{{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{{"content":"{content}"}},"finish_reason":{finish}}}]}}"#
        )
    };
    body((0..n).map(|i| chunk("word ", if i + 1 == n { "\"stop\"" } else { "null" })))
}

fn tool_body(n: usize) -> Vec<Bytes> {
    let first = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write","arguments":""}}]},"finish_reason":null}]}"#.to_owned();
    let frag = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"k\": 1} "}}]},"finish_reason":null}]}"#;
    let last = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":7}}"#.to_owned();
    body(
        std::iter::once(first)
            .chain((0..n).map(|_| frag.to_owned()))
            .chain(std::iter::once(last)),
    )
}

fn run(chunks: Vec<Bytes>) -> usize {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async move {
        let bytes = stream::iter(chunks.into_iter().map(Ok::<_, oxiscope_http::Error>));
        let mut out = accumulate(decode_sse_stream(bytes), CancellationToken::new());
        let mut n = 0;
        while let Some(item) = out.next().await {
            let chunk = item.unwrap();
            n += 1;
            if chunk.is_last {
                divan::black_box(&chunk);
            }
        }
        n
    })
}

/// Decoding only: SSE framing and chunk decoding, deltas counted.
fn decode(chunks: Vec<Bytes>) -> usize {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async move {
        let bytes = stream::iter(chunks.into_iter().map(Ok::<_, oxiscope_http::Error>));
        let mut deltas = decode_sse_stream(bytes);
        let mut n = 0;
        while let Some(delta) = deltas.next().await {
            divan::black_box(delta.unwrap());
            n += 1;
        }
        n
    })
}

/// The whole path: decoder and accumulator. Few samples: each 100k run is
/// slow while the accumulator copies the growing block for every chunk.
#[divan::bench(args = [10_000, 100_000], sample_count = 3, sample_size = 1)]
fn text_deltas(bencher: divan::Bencher<'_, '_>, n: usize) {
    bencher
        .counter(divan::counter::ItemsCount::new(n))
        .with_inputs(|| text_body(n))
        .bench_values(|chunks| assert_eq!(run(chunks), n + 1));
}

#[divan::bench(args = [100, 1_000])]
fn tool_call_fragments(bencher: divan::Bencher<'_, '_>, n: usize) {
    bencher
        .counter(divan::counter::ItemsCount::new(n))
        .with_inputs(|| tool_body(n))
        .bench_values(|chunks| assert_eq!(run(chunks), n + 2));
}

#[divan::bench(args = [10_000, 100_000])]
fn decode_text_deltas(bencher: divan::Bencher<'_, '_>, n: usize) {
    bencher
        .counter(divan::counter::ItemsCount::new(n))
        .with_inputs(|| text_body(n))
        .bench_values(|chunks| assert_eq!(decode(chunks), n));
}

#[divan::bench(args = [100, 1_000])]
fn decode_tool_call_fragments(bencher: divan::Bencher<'_, '_>, n: usize) {
    bencher
        .counter(divan::counter::ItemsCount::new(n))
        .with_inputs(|| tool_body(n))
        .bench_values(|chunks| assert_eq!(decode(chunks), n + 2));
}
