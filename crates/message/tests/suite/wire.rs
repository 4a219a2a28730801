//! Every example of the types this crate owns parses and serialises back to
//! the same JSON value — and to the same key order, which the service's SSE
//! frames depend on.

use oxiscope_message::{
    AgentEvent, ContentBlock, ErrorInfo, EventType, Msg, PermissionRule, Usage, normalize_url,
};
use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use oxiscope_test_support::fixtures::assert_round_trips;

use super::fixtures::{examples, load};

/// Parses every example of `file` as `T`, checks it serialises back to the
/// identical JSON text (same values, same key order), and counts them.
fn round_trips<T: DeserializeOwned + Serialize>(file: &str) -> usize {
    assert_round_trips::<T>(file).len()
}

#[test]
fn msg_examples_round_trip() {
    assert_eq!(round_trips::<Msg>("msg.examples.json"), 10);
}

#[test]
fn content_block_examples_round_trip() {
    assert_eq!(
        round_trips::<ContentBlock>("content_block.examples.json"),
        25
    );
}

#[test]
fn event_examples_round_trip_and_cover_every_event_type() {
    assert_eq!(round_trips::<AgentEvent>("events.examples.json"), 36);
    let mut seen: Vec<EventType> = examples("events.examples.json")
        .into_iter()
        .map(|(_, v)| {
            serde_json::from_value::<AgentEvent>(v)
                .unwrap()
                .event_type()
        })
        .collect();
    seen.sort_by_key(|t| t.as_str());
    seen.dedup();
    assert_eq!(seen.len(), EventType::ALL.len());
}

#[test]
fn small_type_examples_round_trip() {
    round_trips::<Usage>("usage.examples.json");
    round_trips::<ErrorInfo>("error_info.examples.json");
    round_trips::<PermissionRule>("permission_rule.examples.json");
}

#[test]
fn event_type_tags_match_the_reference_enum() {
    let enums = load("wire/enums.json");
    let reference: Vec<&str> = enums["EventType"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_str().unwrap())
        .collect();
    let ours: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
    assert_eq!(ours, reference);
}

/// The wire spellings of a list of enum values.
fn spellings<T: Serialize>(values: &[T]) -> Vec<String> {
    let mut out: Vec<String> = values
        .iter()
        .map(|v| {
            serde_json::to_value(v)
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    out.sort();
    out
}

#[test]
fn enum_spellings_match_the_reference() {
    use oxiscope_message::{
        ErrorType as E, FinishedReason as F, PermissionBehavior as P, ReplyFinishedReason as R,
        ToolCallState as C, ToolResultState as S,
    };
    let enums = load("wire/enums.json");
    let reference = |name: &str| {
        let mut v: Vec<String> = enums[name]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        spellings(&[C::Pending, C::Asking, C::Allowed, C::Submitted, C::Finished]),
        reference("ToolCallState")
    );
    assert_eq!(
        spellings(&[S::Success, S::Error, S::Interrupted, S::Denied, S::Running]),
        reference("ToolResultState")
    );
    assert_eq!(
        spellings(&[R::Completed, R::Interrupted, R::ExceedMaxIters, R::Error]),
        reference("ReplyFinishedReason")
    );
    assert_eq!(
        spellings(&[F::Interrupted, F::Completed]),
        reference("FinishedReason")
    );
    assert_eq!(
        spellings(&[
            E::Authentication,
            E::Permission,
            E::RateLimit,
            E::InvalidRequest,
            E::Upstream,
            E::Connection,
            E::Internal,
            E::Setup,
            E::Unknown,
        ]),
        reference("ErrorType")
    );
    assert_eq!(
        spellings(&[P::Allow, P::Deny, P::Ask, P::Passthrough]),
        reference("PermissionBehavior")
    );
}

/// `msg.validation.json`: what parsing accepts and rejects. Accepted inputs
/// get fresh ids and timestamps, so those are compared by shape only.
#[test]
fn msg_validation_cases_agree() {
    let Value::Array(cases) = load("wire/msg.validation.json") else {
        panic!()
    };
    for case in cases {
        let label = case["label"].as_str().unwrap();
        let result = serde_json::from_value::<Msg>(case["input"].clone());
        let accepted = case["accepted"].as_bool().unwrap();
        assert_eq!(result.is_ok(), accepted, "{label}: {result:?}");
        if let Ok(msg) = result {
            let mut ours = serde_json::to_value(&msg).unwrap();
            let mut theirs = case["parsed"].clone();
            mask_generated(&mut ours);
            mask_generated(&mut theirs);
            assert_eq!(ours, theirs, "{label}");
        }
    }
}

/// `events.validation.json`: tag spelling, data/url exclusivity, enum values.
#[test]
fn event_validation_cases_agree() {
    let Value::Array(cases) = load("wire/events.validation.json") else {
        panic!()
    };
    for case in cases {
        let label = case["label"].as_str().unwrap();
        let result = serde_json::from_value::<AgentEvent>(case["input"].clone());
        assert_eq!(
            result.is_ok(),
            case["accepted"].as_bool().unwrap(),
            "{label}: {result:?}"
        );
        if let Ok(event) = result {
            let mut ours = serde_json::to_value(&event).unwrap();
            let mut theirs = case["parsed"].clone();
            mask_generated(&mut ours);
            mask_generated(&mut theirs);
            assert_eq!(ours, theirs, "{label}");
        }
    }
}

/// `url_source.normalization.json`: URL sources are normalised the same way.
#[test]
fn url_normalisation_agrees() {
    let file = load("wire/url_source.normalization.json");
    let cases = file["cases"].as_array().unwrap();
    assert!(cases.len() >= 9);
    for case in cases {
        let input = case["input"].as_str().unwrap();
        match case.get("serialized").and_then(Value::as_str) {
            Some(expected) => assert_eq!(normalize_url(input).unwrap(), expected, "{input}"),
            None => assert!(normalize_url(input).is_err(), "{input} should be rejected"),
        }
    }
}

/// Replaces generated ids (32 hex digits) and timestamps with placeholders.
fn mask_generated(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), &*value) {
                    ("id", Value::String(_)) => *value = Value::from("<id>"),
                    ("created_at" | "finished_at", Value::String(s)) if s.starts_with("20") => {
                        *value = Value::from("<time>");
                    }
                    _ => mask_generated(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_generated),
        _ => {}
    }
}
