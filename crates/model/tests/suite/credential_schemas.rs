//! `GET /credential/schemas`: our schemas against AgentScope's.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::fixtures::{descriptions, load, without_descriptions};
use oxiscope_model::CredentialType;

/// Normalisation: `description` strings are removed at the top level and in
/// every property (they are reworded). Everything else — titles, types,
/// formats, defaults, `const`, `required`, and the order of keys and
/// properties — must be identical, so the comparison is on the JSON text.
#[test]
fn credential_schemas_match_agentscope_apart_from_descriptions() {
    let reference = load("wire/credential_schemas.json");
    let ours = Value::Array(CredentialType::all_json_schemas());

    let normalise = |schemas: &Value| -> Vec<String> {
        schemas
            .as_array()
            .unwrap()
            .iter()
            .map(|schema| serde_json::to_string_pretty(&without_descriptions(schema)).unwrap())
            .collect()
    };
    assert_eq!(normalise(&ours), normalise(&reference));
}

#[test]
fn every_schema_and_field_is_described_in_our_own_words() {
    let reference = load("wire/credential_schemas.json");
    for (ours, theirs) in CredentialType::all_json_schemas()
        .iter()
        .zip(reference.as_array().unwrap())
    {
        assert!(ours["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert_ne!(
            ours["description"], theirs["description"],
            "{}",
            ours["title"]
        );
        let theirs = descriptions(theirs);
        let ours = descriptions(ours);
        assert_eq!(ours.len(), theirs.len(), "every property has a description");
        for ((name, mine), (_, original)) in ours.iter().zip(&theirs) {
            assert_ne!(mine, original, "description of `{name}` is copied");
        }
    }
}

#[test]
fn schema_order_and_type_names_follow_the_registry() {
    let names: Vec<_> = CredentialType::ALL
        .iter()
        .map(|kind| kind.as_str())
        .collect();
    let schemas = CredentialType::all_json_schemas();
    let consts: Vec<_> = schemas
        .iter()
        .map(|schema| schema["properties"]["type"]["const"].as_str().unwrap())
        .collect();
    assert_eq!(consts, names);
    for kind in CredentialType::ALL {
        assert_eq!(kind.as_str().parse::<CredentialType>().unwrap(), kind);
        assert_eq!(kind.json_schema()["title"], kind.title());
    }
}
