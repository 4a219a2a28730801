//! The Responses API stream decoder on cut, re-chunked and corrupted
//! recordings: it never panics, chunking never changes what it decodes, and
//! a body cut before `response.completed` always ends with an error item.

use futures_util::StreamExt;
use oxiscope_model::{ModelDelta, ModelError};
use oxiscope_providers::openai_response::decode_sse_stream;
use proptest::prelude::*;
use serde_json::json;

use super::openai_response_model::Events;

fn recording() -> Vec<u8> {
    Events::new()
        .reasoning(0, "rs_1", &["Think", "ing \u{e9}"], "enc==")
        .text(1, "msg_1", &["Hel", "lo \u{1f600}"])
        .call_added(2, "fc_1", "call_1", "Read")
        .args(2, "fc_1", "{\"file_path\":")
        .args(2, "fc_1", " \"a.rs\"}")
        .call_done(2, "fc_1", "call_1", "Read", "{\"file_path\": \"a.rs\"}")
        .event(json!({"type": "response.completed", "response": {"usage": {"input_tokens": 3, "output_tokens": 4}}}))
        .body()
        .into_bytes()
}

/// Everything the decoder yields for `chunks`.
fn decode(chunks: Vec<Vec<u8>>) -> Vec<Result<ModelDelta, ModelError>> {
    let items: Vec<Result<Vec<u8>, oxiscope_http::Error>> = chunks.into_iter().map(Ok).collect();
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(decode_sse_stream(futures_util::stream::iter(items)).collect())
}

/// `bytes` cut at the (sorted, deduplicated) positions.
fn split(bytes: &[u8], mut cuts: Vec<usize>) -> Vec<Vec<u8>> {
    cuts.iter_mut().for_each(|c| *c %= bytes.len() + 1);
    cuts.sort_unstable();
    cuts.dedup();
    let mut chunks = Vec::new();
    let mut start = 0;
    for cut in cuts {
        chunks.push(bytes[start..cut].to_vec());
        start = cut;
    }
    chunks.push(bytes[start..].to_vec());
    chunks
}

#[test]
fn the_whole_recording_decodes_to_a_clean_end() {
    let items = decode(vec![recording()]);
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    assert!(matches!(items.last(), Some(Ok(ModelDelta::Usage(_)))));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn chunking_never_changes_the_decoded_deltas(cuts in proptest::collection::vec(any::<usize>(), 0..40)) {
        let whole = decode(vec![recording()]);
        let chunked = decode(split(&recording(), cuts));
        prop_assert_eq!(format!("{chunked:?}"), format!("{whole:?}"));
    }

    #[test]
    fn a_body_cut_anywhere_before_the_end_ends_with_an_error_item(cut in any::<usize>()) {
        let bytes = recording();
        let completed = bytes
            .windows(b"event: response.completed".len())
            .position(|w| w == b"event: response.completed")
            .unwrap();
        let cut = cut % completed;
        let items = decode(vec![bytes[..cut].to_vec()]);
        let errors = items.iter().filter(|i| i.is_err()).count();
        prop_assert_eq!(errors, 1);
        prop_assert!(items.last().unwrap().is_err());
    }

    #[test]
    fn corrupted_bytes_never_panic_and_an_error_is_always_last(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..20),
        cuts in proptest::collection::vec(any::<usize>(), 0..10),
    ) {
        let mut bytes = recording();
        let len = bytes.len();
        for (at, byte) in flips {
            bytes[at % len] = byte;
        }
        let items = decode(split(&bytes, cuts));
        if let Some(at) = items.iter().position(Result::is_err) {
            prop_assert_eq!(at, items.len() - 1, "nothing follows an error");
        }
    }

    #[test]
    fn arbitrary_garbage_never_panics(garbage in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let items = decode(vec![garbage]);
        prop_assert!(items.last().is_some_and(Result::is_err), "garbage never ends cleanly");
    }

    #[test]
    fn arbitrary_json_events_never_panic(
        kinds in proptest::collection::vec(0usize..9, 1..30),
        text in ".{0,12}",
        index in any::<u64>(),
    ) {
        const KINDS: [&str; 9] = [
            "response.output_text.delta",
            "response.reasoning_summary_text.delta",
            "response.function_call_arguments.delta",
            "response.output_item.added",
            "response.output_item.done",
            "response.completed",
            "response.failed",
            "error",
            "response.refusal.delta",
        ];
        let mut body = String::new();
        for (n, kind) in kinds.iter().enumerate() {
            let item_type = ["function_call", "reasoning", "message", "x"][n % 4];
            let data = json!({
                "type": KINDS[*kind],
                "item_id": if n % 2 == 0 { "fc_1" } else { "x" },
                "output_index": index,
                "summary_index": n,
                "delta": text,
                "item": {"id": "fc_1", "type": item_type,
                    "call_id": text, "name": text, "arguments": text, "summary": [{"text": text}],
                    "content": [{"type": "output_text", "text": text}], "encrypted_content": text},
                "response": {"usage": {"input_tokens": index}, "error": {"code": text}},
            });
            body.push_str(&format!("event: {}\ndata: {data}\n\n", KINDS[*kind]));
        }
        let items = decode(vec![body.into_bytes()]);
        if let Some(at) = items.iter().position(Result::is_err) {
            prop_assert_eq!(at, items.len() - 1);
        }
    }
}
