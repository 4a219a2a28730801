use super::*;
use pretty_assertions::assert_eq;

fn names(cards: &[TtsModelCard]) -> Vec<&str> {
    cards.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn every_class_loads_and_each_type_lists_agentscopes_models() {
    for class in TtsModelClass::ALL {
        assert!(!class.list_models().unwrap().is_empty(), "{class}");
    }
    assert_eq!(
        names(&CredentialType::OpenAi.list_tts_models().unwrap()),
        vec!["gpt-4o-mini-tts", "tts-1", "tts-1-hd"]
    );
    assert_eq!(
        names(&CredentialType::Gemini.list_tts_models().unwrap()),
        vec!["gemini-2.5-flash-preview-tts", "gemini-2.5-pro-preview-tts"]
    );
    let dashscope = CredentialType::DashScope.list_tts_models().unwrap();
    assert_eq!(
        names(&dashscope),
        vec![
            "qwen3-tts-flash",
            "qwen3-tts-flash-realtime",
            "cosyvoice-v3-flash",
            "cosyvoice-v3-plus"
        ]
    );
    let realtime: Vec<bool> = dashscope.iter().map(|c| c.realtime).collect();
    assert_eq!(realtime, vec![false, true, false, false]);
    for kind in CredentialType::ALL {
        let expected = matches!(
            kind,
            CredentialType::OpenAi | CredentialType::Gemini | CredentialType::DashScope
        );
        assert_eq!(
            !kind.list_tts_models().unwrap().is_empty(),
            expected,
            "{kind}"
        );
    }
}

#[test]
fn a_card_serialises_in_agentscopes_field_order_with_voices_injected() {
    let card = TtsModelClass::DashScope.card("qwen3-tts-flash").unwrap();
    let wire = serde_json::to_string(&card).unwrap();
    assert_eq!(
        wire,
        r#"{"type":"tts_model","name":"qwen3-tts-flash","label":"Qwen3-TTS-Flash","status":"active","deprecated_at":null,"input_types":["text/plain"],"output_types":["audio/wav"],"realtime":false,"parameter_schema":{"type":"object","properties":{"voice":{"default":"Cherry","description":"The voice to use for synthesis.","title":"Voice","type":"string","enum":["Cherry","Serena","Ethan","Chelsie"]}},"required":[]},"parameters_overrides":{}}"#
    );
    let back: TtsModelCard = serde_json::from_str(&wire).unwrap();
    assert_eq!(back, card);
    assert_eq!(card.voices(), vec!["Cherry", "Serena", "Ethan", "Chelsie"]);
}

#[test]
fn hidden_overrides_remove_a_parameter_and_are_kept_raw() {
    let tts1 = TtsModelClass::OpenAi.card("tts-1").unwrap();
    let properties = tts1.parameter_schema["properties"].as_object().unwrap();
    let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
    assert_eq!(keys, vec!["voice", "response_format"]);
    assert_eq!(
        Value::Object(tts1.parameters_overrides.clone()),
        json!({"instructions": {"hidden": true}})
    );
    let mini = TtsModelClass::OpenAi.card("gpt-4o-mini-tts").unwrap();
    let mini_props = &mini.parameter_schema["properties"];
    assert_eq!(mini_props["instructions"]["default"], Value::Null);
    assert_eq!(mini_props["voice"]["default"], "alloy");
    assert_eq!(mini.voices().len(), 11);
    assert_eq!(mini.output_types[0], "audio/mpeg");
    let gemini = TtsModelClass::Gemini
        .card("models/gemini-2.5-pro-preview-tts")
        .unwrap();
    assert_eq!(gemini.voices().len(), 30);
    assert_eq!(gemini.voices()[0], "Zephyr");
}

#[test]
fn merging_overrides_follows_agentscopes_rules() {
    let mut overrides = Map::new();
    overrides.insert("voice".into(), json!({"title": "Speaker"}));
    overrides.insert("response_format".into(), Value::Null);
    overrides.insert("nope".into(), json!({"title": "ignored"}));
    let schema = parameter_schema(TtsModelClass::OpenAi, &["b".into(), "a".into()], &overrides);
    let properties = schema["properties"].as_object().unwrap();
    assert_eq!(properties.len(), 2);
    assert_eq!(
        properties["voice"],
        json!({"default": "b", "description": "The voice to use for synthesis.", "title": "Speaker", "type": "string", "enum": ["b", "a"]})
    );
}

#[test]
fn minimal_cards_take_defaults_and_other_types_are_refused() {
    let card: TtsModelCard = serde_json::from_value(json!({
        "name": "m", "label": "M", "parameter_schema": {}, "parameters_overrides": {},
        "deprecated_at": "2026-07-24T00:00:00",
    }))
    .unwrap();
    assert_eq!(card.output_types, vec!["audio/wav"]);
    assert!(!card.realtime);
    assert_eq!(
        serde_json::to_value(&card).unwrap()["deprecated_at"],
        "2026-07-24T00:00:00"
    );
    let wrong = json!({"type": "embedding_model", "name": "m", "label": "M",
        "parameter_schema": {}, "parameters_overrides": {}});
    assert!(serde_json::from_value::<TtsModelCard>(wrong).is_err());
}

#[test]
fn a_model_resolves_to_the_class_that_lists_it() {
    let ds = CredentialType::DashScope;
    assert_eq!(
        ds.tts_model_class("qwen3-tts-flash-realtime"),
        Some(TtsModelClass::DashScopeRealtime)
    );
    assert_eq!(
        ds.tts_model_class("cosyvoice-v3-plus"),
        Some(TtsModelClass::DashScopeCosyVoice)
    );
    assert_eq!(
        ds.tts_model_class("qwen-tts-latest"),
        Some(TtsModelClass::DashScope)
    );
    assert_eq!(CredentialType::Ollama.tts_model_class("x"), None);
    assert_eq!(
        "gemini_tts".parse::<TtsModelClass>().unwrap(),
        TtsModelClass::Gemini
    );
    assert!("chat".parse::<TtsModelClass>().is_err());
}
