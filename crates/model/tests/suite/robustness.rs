//! Bad input gets an error, never a panic.

use proptest::prelude::*;
use serde_json::{Map, Value};

use oxiscope_model::{Credential, CredentialType, ModelCard, ModelClass, merge_parameter_schema};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z_*]{0,12}".prop_map(Value::from),
        prop::sample::select(CredentialType::ALL.map(|kind| kind.as_str()).to_vec())
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "type",
                        "id",
                        "name",
                        "api_key",
                        "base_url",
                        "host",
                        "api_host",
                        "organization",
                        "properties",
                        "maximum",
                        "hidden",
                        "max_tokens",
                        "thinking_enable",
                        "required",
                    ]),
                    inner,
                ),
                0..6,
            )
            .prop_map(|entries| {
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            }),
        ]
    })
}

proptest! {
    #[test]
    fn any_json_is_a_credential_or_an_error(value in json_value()) {
        if let Ok(credential) = Credential::from_json_value(value) {
            let public = serde_json::to_value(&credential).unwrap();
            for (field, secret) in credential.secrets() {
                if !secret.is_empty() {
                    prop_assert_eq!(&public[field], "**********");
                }
            }
        }
    }

    #[test]
    fn any_text_is_a_card_or_an_error(
        text in "(name|label|status|context_size|output_size|[:{}\\[\\]\n -]|[a-z0-9]){0,80}"
    ) {
        let _ = ModelCard::from_yaml(&text, ModelClass::OpenAiChat);
    }

    #[test]
    fn merging_any_json_never_panics(
        base in json_value(),
        overrides in prop::collection::vec(("[a-z_]{1,16}", json_value()), 0..4),
        output_size in any::<u64>(),
    ) {
        let overrides: Map<String, Value> = overrides.into_iter().collect();
        let merged = merge_parameter_schema(&base, &overrides, &[], output_size);
        prop_assert!(merged.is_object());
    }
}
