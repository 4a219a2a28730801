//! MiniMax's recorded stream through the Anthropic family's decoder, cut
//! and corrupted at random: the decoder never panics, and a stream decodes
//! the same however its bytes are split.

use oxiscope_http::SseDecoder;
use oxiscope_model::{ModelDelta, ModelError};
use proptest::prelude::*;

use crate::anthropic::stream::Decoder;

/// A MiniMax-M3 reply as its Anthropic-compatible API streams it: thinking
/// with a signature, text, a tool call whose input arrives in fragments,
/// usage at the start and the end.
const RECORDED: &str = concat!(
    "event: message_start\n",
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"05a1b2\",\"type\":\"message\",",
    "\"role\":\"assistant\",\"model\":\"MiniMax-M3\",\"content\":[],\"stop_reason\":null,",
    "\"usage\":{\"input_tokens\":57,\"output_tokens\":0}}}\n\n",
    "event: ping\ndata: {\"type\":\"ping\"}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,",
    "\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,",
    "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"The user wants \u{5929}\u{6c14}.\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,",
    "\"delta\":{\"type\":\"signature_delta\",\"signature\":\"c2lnLW1t\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":1,",
    "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,",
    "\"delta\":{\"type\":\"text_delta\",\"text\":\"Checking \u{1f326}\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",",
    "\"id\":\"call_function_x1\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":2,",
    "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \\\"Pa\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":2,",
    "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ris\\\"}\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
    "event: message_delta\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",",
    "\"stop_sequence\":null},\"usage\":{\"output_tokens\":41}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
);

/// What decoding `chunks` gives: the deltas, whether `message_stop` came,
/// and the first error.
fn decode<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> (Vec<ModelDelta>, bool, Option<ModelError>) {
    let mut sse = SseDecoder::new();
    let mut decoder = Decoder::default();
    let mut deltas = Vec::new();
    let mut drain = |sse: &mut SseDecoder, deltas: &mut Vec<ModelDelta>| {
        while let Some(event) = sse.next_event() {
            match decoder.event(&event) {
                Ok(more) => deltas.extend(more),
                Err(e) => return Some(e),
            }
        }
        None
    };
    for chunk in chunks {
        if let Err(e) = sse.feed(chunk) {
            return (
                deltas,
                false,
                Some(ModelError::Stream {
                    message: e.to_string(),
                }),
            );
        }
        if let Some(e) = drain(&mut sse, &mut deltas) {
            return (deltas, false, Some(e));
        }
    }
    sse.finish();
    let error = drain(&mut sse, &mut deltas);
    (deltas, decoder.finished(), error)
}

#[test]
fn the_recorded_stream_decodes_to_thinking_text_a_tool_call_and_usage() {
    let (deltas, finished, error) = decode([RECORDED.as_bytes()]);
    assert_eq!(error, None);
    assert!(finished);
    let thinking: String = deltas
        .iter()
        .filter_map(|d| match d {
            ModelDelta::Thinking(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "The user wants \u{5929}\u{6c14}.");
    let arguments: String = deltas
        .iter()
        .filter_map(|d| match d {
            ModelDelta::ToolCall { arguments, .. } => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(arguments, "{\"city\": \"Paris\"}");
    let last_usage = deltas.iter().rev().find_map(|d| match d {
        ModelDelta::Usage(u) => Some((u.input_tokens, u.output_tokens)),
        _ => None,
    });
    assert_eq!(last_usage, Some((57, 41)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_split_of_the_bytes_decodes_the_same(cuts in proptest::collection::vec(0..RECORDED.len(), 0..40)) {
        let bytes = RECORDED.as_bytes();
        let mut cuts = cuts;
        cuts.sort_unstable();
        cuts.dedup();
        let mut chunks = Vec::new();
        let mut start = 0;
        for cut in cuts {
            chunks.push(&bytes[start..cut]);
            start = cut;
        }
        chunks.push(&bytes[start..]);
        let whole = decode([bytes]);
        prop_assert_eq!(decode(chunks), whole);
    }

    #[test]
    fn a_stream_cut_anywhere_never_panics_and_finishes_only_after_message_stop(cut in 0..RECORDED.len()) {
        let bytes = &RECORDED.as_bytes()[..cut];
        let (_, finished, _) = decode([bytes]);
        let stop_at = RECORDED.find("event: message_stop").unwrap_or(RECORDED.len());
        prop_assert!(!finished || cut > stop_at);
    }

    #[test]
    fn garbage_spliced_into_the_stream_never_panics(
        at in 0..RECORDED.len(),
        garbage in proptest::collection::vec(any::<u8>(), 0..64),
        flips in proptest::collection::vec((0..RECORDED.len(), any::<u8>()), 0..8),
    ) {
        let mut bytes = RECORDED.as_bytes().to_vec();
        for (i, b) in flips {
            bytes[i] = b;
        }
        bytes.splice(at..at, garbage);
        let _ = decode([bytes.as_slice()]);
    }

    #[test]
    fn arbitrary_event_data_never_panics(name in "[a-z_]{0,20}", data in ".{0,200}") {
        let body = format!("event: {name}\ndata: {data}\n\n");
        let _ = decode([body.as_bytes()]);
    }

    #[test]
    fn well_formed_events_with_odd_fields_never_panic(
        kind in prop_oneof![
            Just("message_start"), Just("content_block_start"), Just("content_block_delta"),
            Just("message_delta"), Just("error"), Just("message_stop"),
        ],
        index in prop_oneof![Just(serde_json::json!(0)), Just(serde_json::json!(-1)),
            Just(serde_json::json!(u64::MAX)), Just(serde_json::json!("1")), Just(serde_json::Value::Null)],
        payload in prop_oneof![Just(serde_json::json!({})), Just(serde_json::json!([])),
            Just(serde_json::json!({"type": "tool_use"})), Just(serde_json::json!({"type": "input_json_delta"})),
            Just(serde_json::json!({"usage": {"input_tokens": -5}})), Just(serde_json::json!(null))],
    ) {
        let data = serde_json::json!({
            "type": kind, "index": index, "content_block": payload, "delta": payload,
            "message": payload, "usage": payload, "error": payload,
        });
        let body = format!("event: {kind}\ndata: {data}\n\n");
        let _ = decode([body.as_bytes()]);
    }
}
