//! Bad event sequences: typed errors or documented no-ops, never a panic,
//! and a failed append leaves the message as it was.

use oxiscope_message::{
    AgentEvent, AppendError, Appended, ConfirmResult, CustomEvent, DataBlockDeltaEvent,
    DataBlockStartEvent, Msg, RequireUserConfirmEvent, TextBlockDeltaEvent, TextBlockEndEvent,
    TextBlockStartEvent, ToolCallBlock, ToolCallDeltaEvent, ToolCallEndEvent, ToolCallStartEvent,
    ToolResultDataDeltaEvent, ToolResultEndEvent, ToolResultStartEvent, ToolResultState,
    ToolResultTextDeltaEvent, UserConfirmResultEvent,
};
use pretty_assertions::assert_eq;
use proptest::prelude::*;

const REPLY: &str = "r1";

fn s(v: &str) -> String {
    v.to_owned()
}

#[test]
fn a_delta_for_an_unknown_block_is_a_typed_error() {
    let mut msg = Msg::reply("Friday", REPLY);
    let delta = TextBlockDeltaEvent::new(s(REPLY), s("nope"), s("x"));
    let err = msg.append_event(&delta.into()).unwrap_err();
    assert!(
        matches!(err, AppendError::UnknownBlock { kind: "text", .. }),
        "{err}"
    );
    assert!(msg.content.is_empty());
}

#[test]
fn a_delta_after_the_end_is_a_typed_error_and_changes_nothing() {
    let mut msg = Msg::reply("Friday", REPLY);
    msg.append_event(&TextBlockStartEvent::new(s(REPLY), s("b")).into())
        .unwrap();
    msg.append_event(&TextBlockDeltaEvent::new(s(REPLY), s("b"), s("hi")).into())
        .unwrap();
    msg.append_event(&TextBlockEndEvent::new(s(REPLY), s("b"), None).into())
        .unwrap();
    let before = msg.clone();
    let err = msg
        .append_event(&TextBlockDeltaEvent::new(s(REPLY), s("b"), s("!")).into())
        .unwrap_err();
    assert!(matches!(err, AppendError::BlockFinished { .. }), "{err}");
    assert_eq!(msg, before);
}

#[test]
fn an_event_of_an_unknown_type_is_a_parse_error() {
    let err = serde_json::from_str::<AgentEvent>(r#"{"type": "TELEPORT", "reply_id": "r1"}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("TELEPORT"), "{err}");
}

#[test]
fn events_of_another_reply_and_custom_events_are_ignored() {
    let mut msg = Msg::reply("Friday", REPLY);
    let other = TextBlockStartEvent::new(s("other-reply"), s("b"));
    assert_eq!(msg.append_event(&other.into()).unwrap(), Appended::Ignored);
    let custom = CustomEvent::new(s("tasks_context"), serde_json::Map::new());
    assert_eq!(msg.append_event(&custom.into()).unwrap(), Appended::Ignored);
    assert!(msg.content.is_empty());
}

#[test]
fn a_duplicate_start_is_rejected() {
    let mut msg = Msg::reply("Friday", REPLY);
    msg.append_event(&ToolCallStartEvent::new(s(REPLY), s("c1"), s("Bash")).into())
        .unwrap();
    let err = msg
        .append_event(&ToolCallStartEvent::new(s(REPLY), s("c1"), s("Bash")).into())
        .unwrap_err();
    assert!(matches!(err, AppendError::DuplicateBlock { .. }), "{err}");
}

#[test]
fn a_confirm_result_for_an_unknown_call_changes_no_call() {
    let mut msg = Msg::reply("Friday", REPLY);
    msg.append_event(&ToolCallStartEvent::new(s(REPLY), s("c1"), s("Bash")).into())
        .unwrap();
    let before = msg.clone();
    let answers = vec![
        ConfirmResult {
            confirmed: true,
            tool_call: ToolCallBlock::new("c1", "Bash", "{}"),
            rules: None,
        },
        ConfirmResult {
            confirmed: true,
            tool_call: ToolCallBlock::new("zz", "Bash", "{}"),
            rules: None,
        },
    ];
    let err = msg
        .append_event(&UserConfirmResultEvent::new(s(REPLY), answers).into())
        .unwrap_err();
    assert!(
        matches!(
            err,
            AppendError::UnknownBlock {
                kind: "tool_call",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(msg, before, "all or nothing");
}

#[test]
fn interleaved_parallel_tool_calls_accumulate_by_id() {
    let mut msg = Msg::reply("Friday", REPLY);
    for id in ["a", "b"] {
        msg.append_event(&ToolCallStartEvent::new(s(REPLY), s(id), s("Read")).into())
            .unwrap();
    }
    for (id, frag) in [("a", "{\"p\":"), ("b", "{\"p\":"), ("a", "1}"), ("b", "2}")] {
        msg.append_event(&ToolCallDeltaEvent::new(s(REPLY), s(id), s(frag)).into())
            .unwrap();
    }
    let inputs: Vec<&str> = msg.tool_calls().map(|c| c.input.as_str()).collect();
    assert_eq!(inputs, ["{\"p\":1}", "{\"p\":2}"]);
}

#[test]
fn streamed_tool_output_joins_text_and_keeps_data_blocks_apart() {
    let mut msg = Msg::reply("Friday", REPLY);
    msg.append_event(&ToolResultStartEvent::new(s(REPLY), s("c"), s("Shot")).into())
        .unwrap();
    for d in ["one ", "two"] {
        msg.append_event(&ToolResultTextDeltaEvent::new(s(REPLY), s("c"), s(d)).into())
            .unwrap();
    }
    for chunk in ["iVBO", "Rw0K"] {
        let e = ToolResultDataDeltaEvent::new(
            s(REPLY),
            s("c"),
            s("img"),
            s("image/png"),
            Some(s(chunk)),
            None,
        );
        msg.append_event(&e.into()).unwrap();
    }
    msg.append_event(&ToolResultEndEvent::new(s(REPLY), s("c"), ToolResultState::Success).into())
        .unwrap();
    let result = msg.tool_results().next().unwrap();
    let json = serde_json::to_value(&result.output).unwrap();
    assert_eq!(json[0]["text"], "one two");
    assert_eq!(json[1]["source"]["data"], "iVBORw0K");
    assert_eq!(json.as_array().unwrap().len(), 2);
}

#[test]
fn a_data_delta_of_another_media_type_is_rejected() {
    let mut msg = Msg::reply("Friday", REPLY);
    msg.append_event(&DataBlockStartEvent::new(s(REPLY), s("d"), s("audio/wav"), None).into())
        .unwrap();
    let e = DataBlockDeltaEvent::new(s(REPLY), s("d"), s("image/png"), Some(s("AA")), None);
    assert!(matches!(
        msg.append_event(&e.into()).unwrap_err(),
        AppendError::MediaTypeMismatch { .. }
    ));
}

#[test]
fn require_user_confirm_marks_calls_asking_with_their_rules() {
    let mut msg = Msg::reply("Friday", REPLY);
    msg.append_event(&ToolCallStartEvent::new(s(REPLY), s("c"), s("Bash")).into())
        .unwrap();
    msg.append_event(&ToolCallEndEvent::new(s(REPLY), s("c")).into())
        .unwrap();
    let mut asked = ToolCallBlock::new("c", "Bash", "{}");
    asked.suggested_rules = vec![oxiscope_message::PermissionRule::new(
        "Bash",
        Some(s("git status:*")),
        oxiscope_message::PermissionBehavior::Allow,
        "suggested",
    )];
    msg.append_event(&RequireUserConfirmEvent::new(s(REPLY), vec![asked.clone()]).into())
        .unwrap();
    let call = msg.tool_calls().next().unwrap();
    assert_eq!(call.state, oxiscope_message::ToolCallState::Asking);
    assert_eq!(call.suggested_rules, asked.suggested_rules);
}

// ---------------------------------------------------------------------------
// Property test: random event sequences.

fn arb_event() -> impl Strategy<Value = AgentEvent> {
    let reply = prop_oneof![9 => Just(s(REPLY)), 1 => Just(s("other"))];
    let id = prop_oneof![Just(s("a")), Just(s("b")), Just(s("c"))];
    let text = "[a-z{}\":]{0,6}";
    (0u8..14, reply, id, text).prop_map(|(kind, r, id, t)| -> AgentEvent {
        match kind {
            0 => TextBlockStartEvent::new(r, id).into(),
            1 => TextBlockDeltaEvent::new(r, id, t).into(),
            2 => TextBlockEndEvent::new(r, id, None).into(),
            3 => ToolCallStartEvent::new(r, id, s("Bash")).into(),
            4 => ToolCallDeltaEvent::new(r, id, t).into(),
            5 => ToolCallEndEvent::new(r, id).into(),
            6 => ToolResultStartEvent::new(r, id, s("Bash")).into(),
            7 => ToolResultTextDeltaEvent::new(r, id, t).into(),
            8 => {
                ToolResultDataDeltaEvent::new(r, id, s("img"), s("image/png"), Some(t), None).into()
            }
            9 => ToolResultEndEvent::new(r, id, ToolResultState::Success).into(),
            10 => DataBlockStartEvent::new(r, id, s("image/png"), None).into(),
            11 => DataBlockDeltaEvent::new(
                r,
                id,
                s("image/png"),
                None,
                Some(format!("https://x/{t}")),
            )
            .into(),
            12 => RequireUserConfirmEvent::new(r, vec![ToolCallBlock::new(id, "Bash", t)]).into(),
            _ => CustomEvent::new(t, serde_json::Map::new()).into(),
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any sequence: no panic; a failed append leaves the message unchanged;
    /// the message always serialises and parses back to itself.
    #[test]
    fn random_event_sequences_never_panic_or_corrupt(events in prop::collection::vec(arb_event(), 0..40)) {
        let mut msg = Msg::reply("Friday", REPLY);
        for event in &events {
            let before = msg.clone();
            if msg.append_event(event).is_err() {
                prop_assert_eq!(&msg, &before);
            }
            // Events survive their own wire format too.
            let json = serde_json::to_string(event).unwrap();
            let parsed: AgentEvent = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(&parsed, event);
        }
        let json = serde_json::to_string(&msg).unwrap();
        let back: Msg = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back, msg);
    }
}
