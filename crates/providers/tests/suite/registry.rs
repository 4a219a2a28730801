//! The provider registry and the model cards against the factory: a
//! provider that is listed, and a card that is listed, can always chat.

use std::collections::{BTreeSet, HashSet};

use oxiscope_model::{
    Credential, CredentialType, DynChatModel, ModelClass, ModelError, ModelStatus,
};
use oxiscope_providers::{MediaPolicy, ModelConfig, Provider, chat_model};
use oxiscope_test_support::chat::{conversation, drain, request};
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A credential of `kind` with a dummy key and its default endpoint.
fn dummy_credential(kind: CredentialType) -> Credential {
    Credential::from_json_value(json!({"type": kind.as_str(), "api_key": "dummy-key"})).unwrap()
}

fn built(model: Result<std::sync::Arc<dyn DynChatModel>, ModelError>, what: &str) -> String {
    match model {
        Ok(model) => model.model_name().to_owned(),
        Err(e) => panic!("{what} does not build: {e}"),
    }
}

#[tokio::test]
async fn every_provider_builds_its_class_through_the_factory_with_a_dummy_credential() {
    for provider in Provider::all() {
        assert!(provider.served(), "{provider} is not served by this build");
        let credential = provider.credential(Some("dummy-key"), None).unwrap();
        assert_eq!(
            credential.credential_type(),
            provider.credential_type(),
            "{provider}"
        );
        let model = provider.default_model.unwrap_or("some-model");
        let config = ModelConfig::new(model).with_model_class(provider.model_class.as_str());
        assert_eq!(
            built(chat_model(&credential, &config), provider.name),
            model
        );
        // The same through the registry, at a base URL.
        let at = provider.chat_model(
            Some("dummy-key"),
            Some("http://127.0.0.1:9/v1"),
            &ModelConfig::new(model),
            &MediaPolicy::default(),
        );
        assert_eq!(built(at, provider.name), model);
    }
}

#[tokio::test]
async fn every_chat_class_of_every_model_card_builds_through_the_factory() {
    let mut classes = BTreeSet::new();
    let mut cards = 0;
    for kind in CredentialType::ALL {
        let credential = dummy_credential(kind);
        for card in kind.list_models().unwrap() {
            let config = ModelConfig::new(card.name.clone()).with_model_class(&card.model_class);
            let what = format!("{} card {}", card.model_class, card.name);
            assert_eq!(built(chat_model(&credential, &config), &what), card.name);
            classes.insert(card.model_class.clone());
            cards += 1;
        }
    }
    assert!(cards > 50, "only {cards} cards");
    let every: BTreeSet<String> = ModelClass::ALL.iter().map(|c| c.to_string()).collect();
    assert_eq!(classes, every, "a class without cards");
}

#[test]
fn every_model_class_has_a_provider_and_each_default_model_is_an_active_card() {
    let named: HashSet<ModelClass> = Provider::all().iter().map(|p| p.model_class).collect();
    assert_eq!(named, ModelClass::ALL.into_iter().collect::<HashSet<_>>());
    for provider in Provider::all() {
        let Some(model) = provider.default_model else {
            assert!(provider.needs_base_url, "{provider} has no default model");
            continue;
        };
        let cards = provider.model_class.list_models().unwrap();
        // An Ollama name without a tag is the library's default tag.
        let card = cards
            .iter()
            .find(|c| c.name == model || c.name.split(':').next() == Some(model));
        let card = card.unwrap_or_else(|| panic!("{provider}: {model} has no card"));
        assert_eq!(card.status, ModelStatus::Active, "{provider}: {model}");
    }
}

#[test]
fn providers_are_found_by_name_whatever_the_case() {
    let found = Provider::find(" OpenAI-Responses ").unwrap();
    assert_eq!(found.model_class, ModelClass::OpenAiResponse);
    assert_eq!(found.credential_type(), CredentialType::OpenAi);
    assert_eq!(
        Provider::find("minimax").unwrap().key_vars,
        ["MINIMAX_API_KEY"]
    );
    assert!(Provider::find("gpt").is_none());
    assert!(Provider::names().starts_with("openai, openai-responses, anthropic"));
}

#[test]
fn keys_come_from_the_vendor_variables_in_order() {
    let gemini = Provider::find("gemini").unwrap();
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    assert_eq!(
        gemini.key_from_env(&env(&[("GEMINI_API_KEY", "g")])),
        Some("g".to_owned())
    );
    // Google's SDKs prefer GOOGLE_API_KEY when both are set; a blank one
    // does not count.
    let both = env(&[("GEMINI_API_KEY", "g"), ("GOOGLE_API_KEY", "o")]);
    assert_eq!(gemini.key_from_env(&both), Some("o".to_owned()));
    let blank = env(&[("GEMINI_API_KEY", "g"), ("GOOGLE_API_KEY", " ")]);
    assert_eq!(gemini.key_from_env(&blank), Some("g".to_owned()));
    assert_eq!(gemini.key_vars_text(), "GOOGLE_API_KEY or GEMINI_API_KEY");
    let ollama = Provider::find("ollama").unwrap();
    assert_eq!(ollama.key_from_env(&env(&[("OPENAI_API_KEY", "k")])), None);
}

#[test]
fn endpoints_are_the_base_url_or_the_providers_default() {
    let cases = [
        ("openai", None, "https://api.openai.com/v1"),
        ("openai-responses", Some("http://h/v1"), "http://h/v1"),
        ("anthropic", None, "https://api.anthropic.com"),
        (
            "gemini",
            None,
            "https://generativelanguage.googleapis.com/v1beta",
        ),
        ("gemini", Some("http://h:1"), "http://h:1/v1beta"),
        ("minimax", None, "https://api.minimax.io/anthropic"),
        ("ollama", Some("http://gpu:11434"), "http://gpu:11434"),
        (
            "xai",
            Some("http://localhost:8000/v1"),
            "http://localhost:8000/v1",
        ),
        ("xai", None, "https://api.x.ai"),
    ];
    for (name, base, endpoint) in cases {
        let provider = Provider::find(name).unwrap();
        assert_eq!(provider.endpoint(base), endpoint, "{name} {base:?}");
    }
}

#[test]
fn a_config_of_another_class_is_refused_by_name() {
    let gemini = Provider::find("gemini").unwrap();
    let config = ModelConfig::new("gpt-4.1").with_model_class("openai_chat");
    match gemini.chat_model(Some("k"), None, &config, &MediaPolicy::default()) {
        Err(ModelError::InvalidRequest { message }) => {
            assert_eq!(
                message,
                "provider gemini serves gemini_chat, not openai_chat"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn gemini_at_a_base_url_without_a_version_calls_the_versioned_api() {
    let server = FakeServer::start().await.unwrap();
    let reply = json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "Hi."}]},
            "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2,
            "totalTokenCount": 7},
    });
    server.push(
        ScriptedResponse::new(200)
            .with_header("content-type", "text/event-stream")
            .with_body(format!("data: {reply}\r\n\r\n")),
    );
    let gemini = Provider::find("gemini").unwrap();
    let config = ModelConfig::new("gemini-2.5-flash").with_parameter("max_tokens", 64);
    let model = gemini
        .chat_model(
            Some("g-key"),
            Some(&server.base_url()),
            &config,
            &MediaPolicy::default(),
        )
        .unwrap();
    let msgs = conversation();
    let stream = model
        .call_boxed(request(&msgs), CancellationToken::new())
        .await
        .unwrap();
    let (chunks, error) = drain(stream).await;
    assert!(error.is_none(), "{error:?}");
    assert!(!chunks.is_empty());
    let sent = &server.requests()[0];
    assert_eq!(
        sent.path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(sent.query.as_deref(), Some("alt=sse"));
    assert_eq!(sent.header("x-goog-api-key"), Some("g-key"));
    let body = sent.body_json().unwrap();
    assert_eq!(body["generationConfig"]["maxOutputTokens"], 64);
}
