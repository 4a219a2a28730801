//! Our shipped cards against the cards AgentScope 2.0.11 lists.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::fixtures::{descriptions, load, without_descriptions};
use oxiscope_model::{CredentialType, ModelCard};

/// The reference file keys its lists by AgentScope's credential class names.
fn credential_type(class_name: &str) -> CredentialType {
    match class_name {
        "AnthropicCredential" => CredentialType::Anthropic,
        "DashScopeCredential" => CredentialType::DashScope,
        "DeepSeekCredential" => CredentialType::DeepSeek,
        "GeminiCredential" => CredentialType::Gemini,
        "MiniMaxCredential" => CredentialType::MiniMax,
        "MoonshotCredential" => CredentialType::Moonshot,
        "OllamaCredential" => CredentialType::Ollama,
        "OpenAICredential" => CredentialType::OpenAi,
        "XAICredential" => CredentialType::Xai,
        "VolcengineCredential" => CredentialType::Volcengine,
        other => panic!("reference lists an unexpected credential class {other}"),
    }
}

/// One card as JSON, with the card's `parameter_schema` stripped of its
/// parameter descriptions.
///
/// That is the only normalisation, and the only deliberate difference: the
/// parameter descriptions are written in our own words. Everything else is
/// compared as JSON text, so names, labels, status, `deprecated_at`, MIME
/// types, sizes, the raw overrides, and each parameter's type, bounds,
/// defaults, enums and title — and the order of cards, fields, parameters and
/// keys — must all be identical.
///
/// Not visible in the comparison, so free choices of ours: the base values of
/// parameters that every card overrides or hides (Anthropic `thinking_mode`'s
/// base enum and default, the `voice` default of DashScope and OpenAI chat).
fn normalised(card: &Value) -> String {
    let mut card = card.clone();
    card["parameter_schema"] = without_descriptions(&card["parameter_schema"]);
    serde_json::to_string_pretty(&card).unwrap()
}

#[test]
fn list_models_yields_agentscope_cards_for_every_credential() {
    let reference = load("wire/model_cards.all.json");
    let reference = reference.as_object().unwrap();
    assert_eq!(reference.len(), CredentialType::ALL.len());

    let mut compared = 0;
    for (class_name, cards) in reference {
        let kind = credential_type(class_name);
        let ours = kind.list_models().unwrap();
        let theirs = cards.as_array().unwrap();

        let our_names: Vec<(&str, &str)> = ours
            .iter()
            .map(|c| (c.model_class.as_str(), c.name.as_str()))
            .collect();
        let their_names: Vec<(&str, &str)> = theirs
            .iter()
            .map(|c| {
                (
                    c["model_class"].as_str().unwrap(),
                    c["name"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            our_names, their_names,
            "{class_name}: same cards in the same order"
        );
        for (our_card, their_card) in ours.iter().zip(theirs) {
            let our_json = serde_json::to_value(our_card).unwrap();
            assert_eq!(
                normalised(&our_json),
                normalised(their_card),
                "{class_name}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 118);
}

#[test]
fn every_parameter_is_described_in_our_own_words() {
    let reference = load("wire/model_cards.all.json");
    for (class_name, cards) in reference.as_object().unwrap() {
        let ours = credential_type(class_name).list_models().unwrap();
        for (our_card, their_card) in ours.iter().zip(cards.as_array().unwrap()) {
            let our_schema = serde_json::to_value(&our_card.parameter_schema).unwrap();
            let mine = descriptions(&our_schema);
            let theirs = descriptions(&their_card["parameter_schema"]);
            assert_eq!(
                mine.len(),
                theirs.len(),
                "{}: every parameter is described",
                our_card.name
            );
            for ((name, mine), (_, original)) in mine.iter().zip(&theirs) {
                assert_ne!(
                    mine, original,
                    "{}: `{name}` description is copied",
                    our_card.name
                );
            }
        }
    }
}

#[test]
fn reference_cards_parse_as_model_cards() {
    let reference = load("wire/model_cards.all.json");
    for cards in reference.as_object().unwrap().values() {
        for card in cards.as_array().unwrap() {
            let parsed: ModelCard = serde_json::from_value(card.clone()).unwrap();
            assert_eq!(serde_json::to_value(&parsed).unwrap(), *card);
        }
    }
}
