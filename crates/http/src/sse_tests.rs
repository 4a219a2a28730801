use pretty_assertions::assert_eq;
use proptest::prelude::*;

use super::*;

/// Decodes `input` fed in chunks cut at `cuts` (byte offsets, any order, may repeat).
fn decode_split(input: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    cuts.sort_unstable();
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain([input.len()]) {
        decoder.feed(&input[start..cut]).unwrap();
        start = cut;
        while let Some(event) = decoder.next_event() {
            events.push(event);
        }
    }
    decoder.finish();
    while let Some(event) = decoder.next_event() {
        events.push(event);
    }
    events
}

fn decode(input: &str) -> Vec<SseEvent> {
    decode_split(input.as_bytes(), &[])
}

#[test]
fn multi_line_data_is_joined_with_newlines() {
    assert_eq!(
        decode("data: a\ndata:b\ndata:  c\n\n"),
        [SseEvent::new("a\nb\n c")]
    );
}

#[test]
fn event_id_and_retry_fields_are_read() {
    assert_eq!(
        decode("event: delta\nid: 7\nretry: 1500\ndata: x\n\n"),
        [SseEvent::new("x")
            .with_event("delta")
            .with_id("7")
            .with_retry(Duration::from_millis(1500))]
    );
}

#[test]
fn comments_and_unknown_fields_are_ignored() {
    assert_eq!(
        decode(": keep-alive\nfoo: bar\ndata: x\n:\n\n"),
        [SseEvent::new("x")]
    );
}

#[test]
fn field_without_colon_has_empty_value() {
    assert_eq!(
        decode("data\n\ndata\ndata\n\n"),
        [SseEvent::new(""), SseEvent::new("\n")]
    );
}

#[test]
fn only_one_space_after_the_colon_is_dropped() {
    assert_eq!(decode("data:   x  \n\n"), [SseEvent::new("  x  ")]);
}

#[test]
fn crlf_cr_and_lf_line_endings_mix() {
    assert_eq!(
        decode("data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r"),
        [SseEvent::new("a\nb\nc"), SseEvent::new("d")]
    );
}

#[test]
fn blank_lines_without_data_dispatch_nothing() {
    assert_eq!(
        decode("\n\nevent: ping\nid: 1\n\n\ndata: x\n\n"),
        [SseEvent::new("x")]
    );
}

#[test]
fn missing_final_newline_still_delivers_last_event() {
    assert_eq!(
        decode("data: a\n\ndata: b"),
        [SseEvent::new("a"), SseEvent::new("b")]
    );
    assert_eq!(decode("data: a\n"), [SseEvent::new("a")]);
}

#[test]
fn leading_bom_is_dropped() {
    assert_eq!(decode("\u{feff}data: x\n\n"), [SseEvent::new("x")]);
}

#[test]
fn invalid_retry_and_id_with_nul_are_ignored() {
    assert_eq!(
        decode("retry: 1s\nid: a\0b\ndata: x\n\n"),
        [SseEvent::new("x")]
    );
}

#[test]
fn utf8_char_split_across_chunks_is_kept_whole() {
    let input = "data: héllo 👋\n\n".as_bytes();
    for cut in 0..=input.len() {
        assert_eq!(
            decode_split(input, &[cut]),
            [SseEvent::new("héllo 👋")],
            "cut at {cut}"
        );
    }
}

#[test]
fn invalid_utf8_becomes_replacement_character() {
    assert_eq!(
        decode_split(b"data: a\xFFb\n\n", &[]),
        [SseEvent::new("a\u{fffd}b")]
    );
}

#[test]
fn event_type_defaults_to_message() {
    assert_eq!(SseEvent::new("x").event_type(), "message");
    assert_eq!(SseEvent::new("x").with_event("ping").event_type(), "ping");
}

#[test]
fn over_long_event_is_a_decode_error() {
    let mut decoder = SseDecoder::with_max_event_bytes(8);
    decoder.feed(b"data: 1234\n").unwrap();
    let err = decoder.feed(b"data: 5678\n").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Decode {
                kind: DecodeError::TooLong { limit: 8 }
            }
        ),
        "{err}"
    );
}

/// One event as an SSE writer could frame it, with a choice of line endings.
fn arb_event() -> impl Strategy<Value = (SseEvent, String)> {
    let text = "[a-z0-9 é👋:{}\"]{0,12}";
    (
        proptest::option::of("[a-z_]{1,8}"),
        proptest::collection::vec(text, 1..4),
        proptest::option::of("[a-z0-9]{1,6}"),
        proptest::option::of(0u64..100_000),
        prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
        any::<bool>(),
    )
        .prop_map(|(event, data, id, retry, eol, comment)| {
            let mut framed = String::new();
            if comment {
                framed.push_str(&format!(": note{eol}"));
            }
            if let Some(event) = &event {
                framed.push_str(&format!("event: {event}{eol}"));
            }
            for line in &data {
                framed.push_str(&format!("data: {line}{eol}"));
            }
            if let Some(id) = &id {
                framed.push_str(&format!("id:{id}{eol}"));
            }
            if let Some(retry) = retry {
                framed.push_str(&format!("retry: {retry}{eol}"));
            }
            framed.push_str(eol);
            let expected = SseEvent {
                event,
                data: data.join("\n"),
                id,
                retry: retry.map(Duration::from_millis),
            };
            (expected, framed)
        })
}

proptest! {
    #[test]
    fn any_split_of_a_valid_stream_yields_the_same_events(
        events in proptest::collection::vec(arb_event(), 0..8),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        bom in any::<bool>(),
        drop_final_blank_line in any::<bool>(),
    ) {
        let mut input = if bom { "\u{feff}".to_owned() } else { String::new() };
        let expected: Vec<SseEvent> = events.iter().map(|(e, _)| e.clone()).collect();
        for (_, framed) in &events {
            input.push_str(framed);
        }
        if drop_final_blank_line && !events.is_empty() {
            // A stream whose last event lacks the blank line still delivers it.
            let trimmed = input.len() - if input.ends_with("\r\n") { 2 } else { 1 };
            input.truncate(trimmed);
        }
        prop_assert_eq!(&decode_split(input.as_bytes(), &[]), &expected);
        prop_assert_eq!(&decode_split(input.as_bytes(), &cuts), &expected);
    }
}

proptest! {
    /// Bad input never panics, and however it is split the result is the same.
    #[test]
    fn arbitrary_bytes_decode_the_same_however_split(
        input in proptest::collection::vec(
            prop_oneof![
                4 => any::<u8>(),
                2 => Just(b'\n'),
                2 => Just(b'\r'),
                2 => Just(b':'),
                1 => Just(b' '),
            ],
            0..300,
        ),
        prefix in prop_oneof![Just(&b""[..]), Just(&b"data"[..]), Just(&b"\xEF\xBB\xBF"[..])],
        cuts in proptest::collection::vec(any::<usize>(), 0..20),
    ) {
        let mut bytes = prefix.to_vec();
        bytes.extend_from_slice(&input);
        prop_assert_eq!(&decode_split(&bytes, &cuts), &decode_split(&bytes, &[]));
    }
}
