//! Credential values: wire shape, masking, the storage view, errors.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::fixtures::load;
use oxiscope_model::{
    AnthropicCredential, Credential, CredentialType, DashScopeCredential, Error, ModelClass,
    OllamaCredential, OpenAiCredential, SECRET_MASK, XaiCredential,
};

/// A payload for `kind` holding `secret` in every field the type requires.
fn payload(kind: CredentialType, secret: &str) -> Value {
    let mut value = json!({"type": kind.as_str(), "name": "test"});
    for field in kind.json_schema()["required"]
        .as_array()
        .into_iter()
        .flatten()
    {
        value[field.as_str().unwrap()] = json!(secret);
    }
    value
}

#[test]
fn agentscope_examples_read_and_write_back_unchanged() {
    for example in load("wire/credential.examples.json").as_array().unwrap() {
        let value = &example["value"];
        let credential = Credential::from_json_value(value.clone()).unwrap();
        assert_eq!(
            serde_json::to_string_pretty(&credential).unwrap(),
            serde_json::to_string_pretty(value).unwrap(),
            "{}",
            example["label"]
        );
    }
}

#[test]
fn every_type_masks_its_secrets_in_debug_and_default_serde() {
    for kind in CredentialType::ALL {
        let secret = format!("sk-very-secret-{}", kind.as_str());
        let credential = Credential::from_json_value(payload(kind, &secret)).unwrap();
        assert_eq!(credential.credential_type(), kind);

        let public = serde_json::to_string(&credential).unwrap();
        assert!(!public.contains(&secret), "{public}");
        assert!(!format!("{credential:?}").contains(&secret));
        assert!(!format!("{credential:#?}").contains(&secret));
        for (field, value) in credential.secrets() {
            assert_eq!(value.expose(), secret);
            assert_eq!(
                serde_json::to_value(&credential).unwrap()[field],
                SECRET_MASK
            );
        }
    }
}

#[test]
fn storage_view_round_trips_the_real_secret() {
    for kind in CredentialType::ALL {
        let secret = format!("sk-{}-42", kind.as_str());
        let credential = Credential::from_json_value(payload(kind, &secret)).unwrap();
        let stored = credential.to_storage_json().unwrap();
        for (field, _) in credential.secrets() {
            assert_eq!(stored[field], json!(secret));
        }
        // The storage view has exactly the public view's keys, in order.
        let public = serde_json::to_value(&credential).unwrap();
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&stored), keys(&public));

        let restored: Credential = serde_json::from_value(stored).unwrap();
        assert_eq!(restored, credential);
    }
}

#[test]
fn serialised_fields_are_the_schema_properties_in_order() {
    for kind in CredentialType::ALL {
        let credential = Credential::from_json_value(payload(kind, "k")).unwrap();
        let value = serde_json::to_value(&credential).unwrap();
        let fields: Vec<_> = value.as_object().unwrap().keys().collect();
        let schema = kind.json_schema();
        let properties: Vec<_> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(fields, properties, "{kind}");
    }
}

#[test]
fn missing_fields_take_their_defaults_and_unknown_fields_are_ignored() {
    let credential = Credential::from_json_value(json!({
        "type": "dashscope_credential",
        "api_key": "sk-1",
        "region": "ignored",
    }))
    .unwrap();
    let Credential::DashScope(dashscope) = &credential else {
        panic!("wrong variant: {credential:?}");
    };
    assert_eq!(dashscope.base_url, DashScopeCredential::DEFAULT_BASE_URL);
    assert_eq!(dashscope.name, "");
    assert_eq!(dashscope.id.len(), 32);
    assert!(
        dashscope
            .id
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    assert!(
        serde_json::to_value(&credential)
            .unwrap()
            .get("region")
            .is_none()
    );
}

#[test]
fn unknown_or_missing_type_is_a_typed_error() {
    let unknown = Credential::from_json_value(json!({"type": "acme_credential", "api_key": "k"}));
    assert_eq!(
        unknown.unwrap_err(),
        Error::UnknownCredentialType {
            type_name: "acme_credential".into()
        }
    );
    let missing = Credential::from_json_value(json!({"api_key": "k"}));
    assert_eq!(missing.unwrap_err(), Error::MissingCredentialType);
    let not_a_string = Credential::from_json_value(json!({"type": 7}));
    assert_eq!(not_a_string.unwrap_err(), Error::MissingCredentialType);
    let not_an_object = Credential::from_json_value(json!(["openai_credential"]));
    assert_eq!(not_an_object.unwrap_err(), Error::MissingCredentialType);

    let serde_err = serde_json::from_str::<Credential>(r#"{"type":"acme_credential"}"#);
    assert!(
        serde_err
            .unwrap_err()
            .to_string()
            .contains("acme_credential")
    );
}

#[test]
fn bad_fields_are_a_typed_error_naming_the_type() {
    let no_key = Credential::from_json_value(json!({"type": "openai_credential"})).unwrap_err();
    assert!(
        matches!(&no_key, Error::InvalidCredential { type_name, message }
            if type_name == "openai_credential" && message.contains("api_key")),
        "{no_key}"
    );
    let wrong_type =
        Credential::from_json_value(json!({"type": "ollama_credential", "host": 11434}));
    assert!(matches!(wrong_type, Err(Error::InvalidCredential { .. })));
    // A struct read on its own still insists on its own `type`.
    let mismatched = serde_json::from_value::<AnthropicCredential>(
        json!({"type": "openai_credential", "api_key": "k"}),
    );
    assert!(mismatched.is_err());
}

#[test]
fn builders_produce_the_wire_shape() {
    let credential = Credential::from(
        OpenAiCredential::new("sk-x")
            .with_id("e2cec5250e844354ac755009f5e2bb28")
            .with_name("My OpenAI")
            .with_base_url("https://api.example.com/v1"),
    );
    assert_eq!(
        serde_json::to_value(&credential).unwrap(),
        load("wire/credential.examples.json")[0]["value"]
    );
    assert_eq!(credential.id(), "e2cec5250e844354ac755009f5e2bb28");
    assert_eq!(credential.name(), "My OpenAI");
}

#[test]
fn base_url_falls_back_to_the_type_default() {
    let openai = Credential::from(OpenAiCredential::new("k"));
    assert_eq!(openai.base_url(), "https://api.openai.com/v1");
    let custom = Credential::from(OpenAiCredential::new("k").with_base_url("http://vllm:8000/v1"));
    assert_eq!(custom.base_url(), "http://vllm:8000/v1");
    assert_eq!(
        Credential::from(OllamaCredential::new()).base_url(),
        "http://localhost:11434"
    );
    let xai = Credential::from(XaiCredential::new("k").with_api_host("grok.internal"));
    assert_eq!(xai.base_url(), "https://grok.internal");
    for kind in CredentialType::ALL {
        assert!(kind.default_base_url().starts_with("http"), "{kind}");
    }
}

#[test]
fn each_type_drives_its_model_classes_and_lists_their_cards() {
    for kind in CredentialType::ALL {
        let classes = kind.chat_model_classes();
        assert!(!classes.is_empty());
        for class in classes {
            assert_eq!(class.credential_type(), kind);
        }
        let cards = kind.list_models().unwrap();
        assert!(!cards.is_empty(), "{kind} ships cards");
        for card in &cards {
            let class: ModelClass = card.model_class.parse().unwrap();
            assert!(classes.contains(&class));
        }
    }
    assert_eq!(
        CredentialType::OpenAi.chat_model_classes(),
        [ModelClass::OpenAiChat, ModelClass::OpenAiResponse]
    );
    assert!(CredentialType::Anthropic.embedding_family().is_none());
    assert_eq!(
        CredentialType::DashScope
            .embedding_family()
            .map(|f| f.as_str()),
        Some("dashscope_embedding")
    );
}
