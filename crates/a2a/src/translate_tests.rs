#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use oxiscope_message::{AgentEvent, ContentBlock, DataSource, Msg};
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::wire::{ArtifactUpdate, StatusUpdate, Task};

fn text_part(t: &str) -> Part {
    Part::text(t)
}

fn chunk(artifact: &str, text: &str, append: bool, last: bool) -> Payload {
    Payload::ArtifactUpdate(ArtifactUpdate {
        task_id: "t1".into(),
        context_id: "c1".into(),
        artifact: Artifact {
            artifact_id: artifact.into(),
            name: String::new(),
            parts: vec![text_part(text)],
        },
        append,
        last_chunk: last,
    })
}

fn status(state: TaskState, text: Option<&str>) -> Payload {
    Payload::StatusUpdate(StatusUpdate {
        task_id: "t1".into(),
        context_id: "c1".into(),
        status: TaskStatus {
            state,
            message: text.map(|t| Message {
                message_id: format!("m-{t}"),
                parts: vec![text_part(t)],
                ..Message::default()
            }),
        },
    })
}

/// Applies payloads, finishes, and rebuilds the reply message (which must
/// accept every event).
fn translate(payloads: Vec<Payload>) -> (Vec<AgentEvent>, Msg, Translator, Option<Error>) {
    let mut tr = Translator::new("r1", Ids::default());
    let mut events = Vec::new();
    let mut error = None;
    for p in payloads {
        if let Err(e) = tr.apply(p, &mut events) {
            error = Some(e);
            break;
        }
    }
    tr.finish(&mut events);
    let mut msg = Msg::reply("remote", "r1");
    for e in &events {
        msg.append_event(e).unwrap();
    }
    (events, msg, tr, error)
}

fn texts(msg: &Msg) -> Vec<String> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn appended_artifact_chunks_flow_into_one_text_block() {
    let (events, msg, tr, error) = translate(vec![
        status(TaskState::Working, Some("Working...")),
        chunk("echo", "Echo: ", false, false),
        chunk("echo", "hel", true, false),
        chunk("echo", "lo", true, true),
        status(TaskState::Completed, None),
    ]);
    assert!(error.is_none());
    assert_eq!(texts(&msg), vec!["Working...", "Echo: hello"]);
    assert!(msg.content.iter().all(|b| match b {
        ContentBlock::Text(t) => t.finished_at.is_some(),
        _ => false,
    }));
    let ends: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextBlockEnd(end) => Some(Value::Object(end.metadata.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        ends,
        vec![
            json!({"a2a": {"task_id": "t1", "message_id": "m-Working..."}}),
            json!({"a2a": {"task_id": "t1", "artifact_id": "echo"}}),
        ]
    );
    assert_eq!(tr.ending(), Ending::Status(TaskState::Completed));
    assert_eq!(
        tr.ids(),
        &Ids {
            context_id: Some("c1".into()),
            task_id: Some("t1".into()),
            task_state: Some(TaskState::Completed),
        }
    );
}

#[test]
fn a_chunk_without_append_starts_a_new_block() {
    let (_, msg, _, _) = translate(vec![
        chunk("a", "one", false, false),
        chunk("a", "two", false, true),
    ]);
    assert_eq!(texts(&msg), vec!["one", "two"]);
}

#[test]
fn message_parts_become_text_and_data_blocks_and_clear_the_task() {
    let message = Message {
        message_id: "m1".into(),
        context_id: "c9".into(),
        parts: vec![
            text_part("a"),
            text_part("b"),
            Part {
                raw: Some("aGk=".into()),
                media_type: Some("image/png".into()),
                filename: Some("x.png".into()),
                ..Part::default()
            },
            Part {
                url: Some("https://example.com/a.pdf".into()),
                ..Part::default()
            },
            text_part("c"),
        ],
        ..Message::default()
    };
    let mut tr = Translator::new(
        "r1",
        Ids {
            context_id: None,
            task_id: Some("old".into()),
            task_state: Some(TaskState::InputRequired),
        },
    );
    let mut events = Vec::new();
    tr.apply(Payload::Message(message), &mut events).unwrap();
    tr.finish(&mut events);
    let mut msg = Msg::reply("remote", "r1");
    for e in &events {
        msg.append_event(e).unwrap();
    }
    assert_eq!(msg.content.len(), 4);
    assert_eq!(texts(&msg), vec!["ab", "c"]);
    match &msg.content[1] {
        ContentBlock::Data(d) => {
            assert_eq!(d.name.as_deref(), Some("x.png"));
            assert_eq!(
                d.source,
                DataSource::Base64(oxiscope_message::Base64Source {
                    data: "aGk=".into(),
                    media_type: "image/png".into()
                })
            );
        }
        other => panic!("not data: {other:?}"),
    }
    match &msg.content[2] {
        ContentBlock::Data(d) => assert_eq!(
            d.source,
            DataSource::Url(oxiscope_message::UrlSource {
                url: "https://example.com/a.pdf".into(),
                media_type: DEFAULT_MEDIA_TYPE.into()
            })
        ),
        other => panic!("not data: {other:?}"),
    }
    let data_end = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::DataBlockEnd(end) => Some(Value::Object(end.metadata.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(data_end, json!({"a2a": {"message_id": "m1"}}));
    assert_eq!(tr.ending(), Ending::Message);
    assert_eq!(
        tr.ids(),
        &Ids {
            context_id: Some("c9".into()),
            task_id: None,
            task_state: None
        }
    );
}

#[test]
fn a_structured_data_part_is_a_typed_error_and_open_blocks_still_close() {
    let payload = Payload::ArtifactUpdate(ArtifactUpdate {
        artifact: Artifact {
            artifact_id: "a".into(),
            name: String::new(),
            parts: vec![
                text_part("before"),
                Part {
                    data: Some(json!({"k": 1})),
                    ..Part::default()
                },
            ],
        },
        ..ArtifactUpdate::default()
    });
    let (_, msg, _, error) = translate(vec![payload]);
    assert!(matches!(error, Some(Error::UnsupportedPart { .. })));
    assert_eq!(texts(&msg), vec!["before"]);
}

#[test]
fn a_task_snapshot_translates_new_artifacts_then_the_status_message() {
    let task = Task {
        id: "t1".into(),
        context_id: "c1".into(),
        status: TaskStatus {
            state: TaskState::InputRequired,
            message: Some(Message {
                message_id: "q".into(),
                parts: vec![text_part("Your name?")],
                ..Message::default()
            }),
        },
        artifacts: vec![
            Artifact {
                artifact_id: "streamed".into(),
                name: String::new(),
                parts: vec![text_part("streamed text")],
            },
            Artifact {
                artifact_id: "new".into(),
                name: String::new(),
                parts: vec![text_part("new text")],
            },
        ],
    };
    let (_, msg, tr, error) = translate(vec![
        chunk("streamed", "streamed text", false, false),
        Payload::Task(task),
    ]);
    assert!(error.is_none());
    assert_eq!(texts(&msg), vec!["streamed text", "new text", "Your name?"]);
    assert_eq!(tr.status_text(), Some("Your name?"));
    assert_eq!(tr.ending(), Ending::Status(TaskState::InputRequired));
}

#[test]
fn payload_json_is_read_leniently_and_checked() {
    let p = Payload::from_value(json!({"statusUpdate": {
        "taskId": "t", "status": {"state": "input-required"}, "extra": 1}}))
    .unwrap();
    assert_eq!(
        p,
        Payload::StatusUpdate(StatusUpdate {
            task_id: "t".into(),
            context_id: String::new(),
            status: TaskStatus {
                state: TaskState::InputRequired,
                message: None
            },
        })
    );
    assert!(matches!(
        Payload::from_value(json!({})),
        Err(Error::Protocol(_))
    ));
    assert!(matches!(
        Payload::from_value(json!({"task": {}, "message": {}})),
        Err(Error::Protocol(_))
    ));
    assert!(matches!(
        Payload::from_value(json!({"task": {"status": {"state": 7}}})),
        Ok(Payload::Task(Task {
            status: TaskStatus {
                state: TaskState::Rejected,
                ..
            },
            ..
        }))
    ));
}

fn arb_part() -> impl Strategy<Value = Part> {
    prop_oneof![
        6 => ".{0,8}".prop_map(Part::text),
        1 => "[A-Za-z0-9+/]{0,8}".prop_map(|r| Part { raw: Some(r), ..Part::default() }),
        1 => prop_oneof![Just("https://e.com/x"), Just("not a url"), Just("file:///tmp/a")]
            .prop_map(|u| Part { url: Some(u.to_owned()), ..Part::default() }),
        1 => Just(Part { data: Some(json!(1)), ..Part::default() }),
        1 => Just(Part::default()),
    ]
}

fn arb_state() -> impl Strategy<Value = TaskState> {
    prop_oneof![
        Just(TaskState::Working),
        Just(TaskState::Completed),
        Just(TaskState::InputRequired),
        Just(TaskState::Failed),
        Just(TaskState::Canceled),
        Just(TaskState::Unknown),
    ]
}

fn arb_message() -> impl Strategy<Value = Message> {
    ("[a-c]{0,1}", prop::collection::vec(arb_part(), 0..4)).prop_map(|(id, parts)| Message {
        message_id: id,
        parts,
        ..Message::default()
    })
}

fn arb_artifact() -> impl Strategy<Value = Artifact> {
    ("[a-c]{0,1}", prop::collection::vec(arb_part(), 0..4)).prop_map(|(artifact_id, parts)| {
        Artifact {
            artifact_id,
            name: String::new(),
            parts,
        }
    })
}

fn arb_payload() -> impl Strategy<Value = Payload> {
    prop_oneof![
        (arb_artifact(), any::<bool>(), any::<bool>()).prop_map(
            |(artifact, append, last_chunk)| {
                Payload::ArtifactUpdate(ArtifactUpdate {
                    task_id: "t".into(),
                    context_id: "c".into(),
                    artifact,
                    append,
                    last_chunk,
                })
            }
        ),
        (arb_state(), prop::option::of(arb_message())).prop_map(|(state, message)| {
            Payload::StatusUpdate(StatusUpdate {
                task_id: "t".into(),
                context_id: "c".into(),
                status: TaskStatus { state, message },
            })
        }),
        arb_message().prop_map(Payload::Message),
        (arb_state(), prop::collection::vec(arb_artifact(), 0..3)).prop_map(
            |(state, artifacts)| {
                Payload::Task(Task {
                    id: "t".into(),
                    context_id: "c".into(),
                    status: TaskStatus {
                        state,
                        message: None,
                    },
                    artifacts,
                })
            }
        ),
    ]
}

fn of(parts: &[Part]) -> Vec<&str> {
    parts.iter().filter_map(|p| p.text.as_deref()).collect()
}

fn text_only(p: &Payload) -> Vec<&str> {
    match p {
        Payload::ArtifactUpdate(u) => of(&u.artifact.parts),
        Payload::StatusUpdate(u) => u
            .status
            .message
            .as_ref()
            .map(|m| of(&m.parts))
            .unwrap_or_default(),
        Payload::Message(m) => of(&m.parts),
        Payload::Task(_) => Vec::new(),
    }
}

proptest! {
    #[test]
    fn any_payload_sequence_rebuilds_into_a_consistent_message(
        payloads in prop::collection::vec(arb_payload(), 0..12)
    ) {
        // `translate` unwraps every append: the events are always consistent.
        let (events, msg, _, _) = translate(payloads);
        for block in &msg.content {
            let finished = match block {
                ContentBlock::Text(t) => t.finished_at.is_some(),
                ContentBlock::Data(d) => d.finished_at.is_some(),
                _ => false,
            };
            prop_assert!(finished, "a block was left open or is not text/data");
        }
        for e in &events {
            prop_assert!(e.validate().is_ok());
        }
    }

    #[test]
    fn streamed_text_is_never_lost_or_duplicated(
        payloads in prop::collection::vec(arb_payload(), 0..12)
    ) {
        let mut expected = String::new();
        let mut kept = Vec::new();
        let mut seen_messages = std::collections::HashSet::new();
        for p in payloads {
            let all_text = match &p {
                Payload::ArtifactUpdate(u) => u.artifact.parts.iter().all(|x| x.text.is_some()),
                Payload::StatusUpdate(u) => u.status.message.as_ref()
                    .is_none_or(|m| m.parts.iter().all(|x| x.text.is_some())),
                Payload::Message(m) => m.parts.iter().all(|x| x.text.is_some()),
                Payload::Task(_) => false,
            };
            if !all_text {
                continue;
            }
            // A status message shown once is not shown again.
            if let Payload::StatusUpdate(u) = &p
                && let Some(m) = &u.status.message
                && !m.message_id.is_empty()
                && !seen_messages.insert(m.message_id.clone())
            {
                continue;
            }
            if let Payload::Message(m) = &p {
                seen_messages.insert(m.message_id.clone());
            }
            expected.extend(text_only(&p));
            kept.push(p);
        }
        let (events, msg, _, error) = translate(kept);
        prop_assert!(error.is_none());
        let deltas: String = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::TextBlockDelta(d) => Some(d.delta.as_str()),
                _ => None,
            })
            .collect();
        prop_assert_eq!(&deltas, &expected);
        // Blocks group text per artifact, so only the order may differ.
        let mut got: Vec<char> = texts(&msg).concat().chars().collect();
        let mut want: Vec<char> = expected.chars().collect();
        got.sort_unstable();
        want.sort_unstable();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn arbitrary_json_never_panics_the_payload_reader(value in arb_json()) {
        let _ = Payload::from_value(value.clone());
        let _ = crate::client::parse_envelope(value.to_string().as_bytes());
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        ".{0,6}".prop_map(Value::String),
        prop_oneof![
            Just("TASK_STATE_WORKING"),
            Just("text"),
            Just("task"),
            Just("statusUpdate")
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("task".to_owned()),
                    Just("message".to_owned()),
                    Just("statusUpdate".to_owned()),
                    Just("artifactUpdate".to_owned()),
                    Just("status".to_owned()),
                    Just("state".to_owned()),
                    Just("parts".to_owned()),
                    Just("artifact".to_owned()),
                    Just("result".to_owned()),
                    Just("error".to_owned()),
                    "[a-z]{1,4}",
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
