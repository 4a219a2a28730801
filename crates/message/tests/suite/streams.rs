//! Rebuilding every recorded reply from its events, phase by phase (resume
//! phases start from the previous phase's message plus the input event), as
//! the reference README describes.
//!
//! Two checks per phase:
//! - with ids and clocks replaced by `"<new-id>"` / `"<now>"`, the rebuilt
//!   message equals `*.msg_replay.json` exactly (same JSON text);
//! - with the real clock, it equals `*.msg.json` everywhere except the
//!   values that come from the clock or the id generator at rebuild time,
//!   which are exactly the places the replay file shows as placeholders.

use oxiscope_message::{AgentEvent, FixedStamper, Msg, Stamper, SystemStamper};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::fixtures::load;

struct Phase {
    name: String,
    input_kind: String,
}

fn scenarios() -> Vec<(String, Vec<Phase>)> {
    let Value::Array(items) = load("streams/index.json") else {
        panic!("index is not a list")
    };
    items
        .iter()
        .map(|s| {
            let phases = s["phases"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| Phase {
                    name: p["phase"].as_str().unwrap().to_owned(),
                    input_kind: p["input_kind"].as_str().unwrap().to_owned(),
                })
                .collect();
            (s["scenario"].as_str().unwrap().to_owned(), phases)
        })
        .collect()
}

fn events(file: &str) -> Vec<AgentEvent> {
    serde_json::from_value(load(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Rebuilds every phase of `scenario`; yields (phase file prefix, message).
fn rebuild(scenario: &str, phases: &[Phase], stamper: &dyn Stamper) -> Vec<(String, Msg)> {
    let mut out: Vec<(String, Msg)> = Vec::new();
    let mut msg: Option<Msg> = None;
    for phase in phases {
        let prefix = format!("streams/{scenario}.{}", phase.name);
        let input = load(&format!("{prefix}.input.json"));
        let stream = events(&format!("{prefix}.events.json"));
        let mut rest = stream.as_slice();
        let mut current = if phase.input_kind == "Msg" {
            // A new reply: the input is the user's message, the stream opens
            // with REPLY_START.
            let _user: Msg = serde_json::from_value(input)
                .unwrap_or_else(|e| panic!("{prefix}: input is not a Msg: {e}"));
            let Some((AgentEvent::ReplyStart(start), tail)) = stream.split_first() else {
                panic!("{prefix}: stream does not open with REPLY_START")
            };
            rest = tail;
            Msg::reply_stamped(&start.name, &start.reply_id, stamper)
        } else {
            // A resume: the previous message, then the input event.
            let mut m = msg
                .clone()
                .unwrap_or_else(|| panic!("{prefix}: resume without a pause"));
            let input: AgentEvent = serde_json::from_value(input)
                .unwrap_or_else(|e| panic!("{prefix}: input is not an event: {e}"));
            assert_eq!(
                input.event_type().as_str(),
                input_tag(&phase.input_kind),
                "{prefix}"
            );
            m.append_event_with(&input, stamper)
                .unwrap_or_else(|e| panic!("{prefix}: input event: {e}"));
            m
        };
        for (i, event) in rest.iter().enumerate() {
            current
                .append_event_with(event, stamper)
                .unwrap_or_else(|e| panic!("{prefix}: event {i}: {e}"));
        }
        out.push((prefix, current.clone()));
        msg = Some(current);
    }
    out
}

fn input_tag(kind: &str) -> &'static str {
    match kind {
        "UserConfirmResultEvent" => "USER_CONFIRM_RESULT",
        "ExternalExecutionResultEvent" => "EXTERNAL_EXECUTION_RESULT",
        "UserInterruptEvent" => "USER_INTERRUPT",
        other => panic!("unknown input kind {other}"),
    }
}

#[test]
fn every_stream_rebuilds_to_the_replay_message_exactly() {
    let stamper = FixedStamper::new("<new-id>", "<now>");
    let mut phases_checked = 0;
    for (scenario, phases) in scenarios() {
        for (prefix, msg) in rebuild(&scenario, &phases, &stamper) {
            let expected = load(&format!("{prefix}.msg_replay.json"));
            assert_eq!(
                serde_json::to_string_pretty(&msg).unwrap(),
                serde_json::to_string_pretty(&expected).unwrap(),
                "{prefix}"
            );
            phases_checked += 1;
        }
    }
    assert_eq!(phases_checked, 17, "every recorded phase is checked");
}

#[test]
fn every_stream_rebuilds_to_the_recorded_message_with_the_real_clock() {
    for (scenario, phases) in scenarios() {
        for (prefix, msg) in rebuild(&scenario, &phases, &SystemStamper) {
            let mut ours = serde_json::to_value(&msg).unwrap();
            let mut recorded = load(&format!("{prefix}.msg.json"));
            let replay = load(&format!("{prefix}.msg_replay.json"));
            mask_like(&mut ours, &replay, &prefix);
            mask_like(&mut recorded, &replay, &prefix);
            assert_eq!(ours, recorded, "{prefix}");
        }
    }
}

/// Where `template` holds a placeholder, checks that `v` holds a fresh id or
/// a timestamp and replaces it with the placeholder.
fn mask_like(v: &mut Value, template: &Value, at: &str) {
    match (v, template) {
        (Value::Object(map), Value::Object(t)) => {
            for (key, value) in map.iter_mut() {
                if let Some(tv) = t.get(key) {
                    mask_like(value, tv, at);
                }
            }
        }
        (Value::Array(items), Value::Array(t)) => {
            for (value, tv) in items.iter_mut().zip(t) {
                mask_like(value, tv, at);
            }
        }
        (value, Value::String(p)) if p == "<now>" || p == "<new-id>" => {
            let s = value
                .as_str()
                .unwrap_or_else(|| panic!("{at}: {p} slot is not a string"));
            if p == "<now>" {
                assert!(
                    s.len() >= 19 && s.as_bytes()[10] == b'T',
                    "{at}: {s:?} is not a time"
                );
            } else {
                assert_eq!(s.len(), 32, "{at}: {s:?} is not a fresh id");
            }
            *value = Value::from(p.as_str());
        }
        _ => {}
    }
}
