//! SSE decoding throughput: OpenAI-style text deltas and tool-call argument fragments,
//! split into ~1 KiB and 7-byte chunks, through the decoder and through `SseStream`.

#![allow(missing_docs, clippy::unwrap_used)]

use std::pin::pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use divan::counter::{BytesCount, ItemsCount};
use divan::{Bencher, black_box};
use futures_util::{Stream, stream};
use oxiscope_http::{Error, SseDecoder, SseStream};

fn main() {
    divan::main();
}

const TEXT_DELTA: &str = "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n";

fn text_deltas(n: usize) -> Vec<u8> {
    let mut body = TEXT_DELTA.repeat(n);
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

fn tool_call_fragments(n: usize) -> Vec<u8> {
    let fragments = [
        "{\\\"pa",
        "th\\\": \\\"/src/",
        "lib.rs\\\", \\\"li",
        "mit\\\": 20",
        "0}",
    ];
    let mut body = String::new();
    for i in 0..n {
        let args = fragments[i % fragments.len()];
        body.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\
             \"function\":{{\"arguments\":\"{args}\"}}}}]}}}}]}}\r\n\r\n"
        ));
    }
    body.into_bytes()
}

fn chunked(body: &[u8], size: usize) -> Vec<Bytes> {
    body.chunks(size).map(Bytes::copy_from_slice).collect()
}

/// Feeds all chunks to a fresh decoder and counts the events.
fn decode(chunks: &[Bytes]) -> usize {
    let mut decoder = SseDecoder::new();
    let mut events = 0;
    for chunk in chunks {
        decoder.feed(chunk).unwrap();
        while let Some(event) = decoder.next_event() {
            black_box(&event);
            events += 1;
        }
    }
    decoder.finish();
    while decoder.next_event().is_some() {
        events += 1;
    }
    events
}

/// Drives an `SseStream` over in-memory chunks (always ready) and counts the events.
fn decode_stream(chunks: &[Bytes]) -> usize {
    let bytes = stream::iter(chunks.iter().cloned().map(Ok::<_, Error>));
    let mut events = pin!(SseStream::new(bytes));
    let mut cx = Context::from_waker(Waker::noop());
    let mut count = 0;
    while let Poll::Ready(Some(event)) = events.as_mut().poll_next(&mut cx) {
        black_box(event.unwrap());
        count += 1;
    }
    count
}

fn run(bencher: Bencher<'_, '_>, body: &[u8], chunk: usize, via_stream: bool) {
    let chunks = chunked(body, chunk);
    let expected = decode(&chunks);
    bencher
        .counter(ItemsCount::new(expected))
        .counter(BytesCount::new(body.len()))
        .bench(|| {
            let n = if via_stream {
                decode_stream(&chunks)
            } else {
                decode(&chunks)
            };
            assert_eq!(n, expected);
            n
        });
}

#[divan::bench(args = [10_000, 100_000])]
fn text_deltas_1k_chunks(bencher: Bencher<'_, '_>, n: usize) {
    run(bencher, &text_deltas(n), 1024, false);
}

#[divan::bench(args = [10_000, 100_000])]
fn text_deltas_7_byte_chunks(bencher: Bencher<'_, '_>, n: usize) {
    run(bencher, &text_deltas(n), 7, false);
}

#[divan::bench(args = [100_000])]
fn text_deltas_1k_chunks_via_stream(bencher: Bencher<'_, '_>, n: usize) {
    run(bencher, &text_deltas(n), 1024, true);
}

#[divan::bench(args = [1_000])]
fn tool_call_fragments_1k_chunks(bencher: Bencher<'_, '_>, n: usize) {
    run(bencher, &tool_call_fragments(n), 1024, false);
}

#[divan::bench(args = [1_000])]
fn tool_call_fragments_7_byte_chunks(bencher: Bencher<'_, '_>, n: usize) {
    run(bencher, &tool_call_fragments(n), 7, false);
}

/// One event whose data line is 1 MiB, in 7-byte chunks: a line spanning many chunks
/// must cost linear time, not a rescan per chunk.
#[divan::bench]
fn one_mebibyte_event_7_byte_chunks(bencher: Bencher<'_, '_>) {
    let mut body = b"data: ".to_vec();
    body.extend(std::iter::repeat_n(b'x', 1 << 20));
    body.extend_from_slice(b"\n\n");
    run(bencher, &body, 7, false);
}
