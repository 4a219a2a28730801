//! The `ModelCard` wire shape and building cards from YAML.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::fixtures::load;
use oxiscope_model::{CardSpec, Error, ModelCard, ModelClass, ModelStatus, THINKING_OUTPUT_TYPE};

#[test]
fn agentscope_card_examples_round_trip_byte_for_byte() {
    for example in load("wire/model_card.examples.json").as_array().unwrap() {
        let value = &example["value"];
        let card: ModelCard = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(
            serde_json::to_string_pretty(&card).unwrap(),
            serde_json::to_string_pretty(value).unwrap()
        );
    }
}

#[test]
fn serialised_fields_follow_the_model_card_schema() {
    let schema = load("wire/model_card.schema.json");
    let expected: Vec<_> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let card = &ModelClass::GeminiChat.list_models().unwrap()[0];
    let value = serde_json::to_value(card).unwrap();
    let fields: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
    assert_eq!(fields, expected);
    assert_eq!(value["type"], "chat_model");
}

#[test]
fn a_card_in_agentscope_yaml_form_is_merged_with_its_class_schema() {
    let yaml = r#"
name: my-qwen
label: My Qwen
status: deprecated
deprecated_at: 2027-01-31
input_types: [text/plain, image/png]
output_types: [text/plain]
context_size: 32768
output_size: 8192
parameter_overrides:
  top_k: null
  voice: {hidden: true}
  temperature: {default: 0.7}
"#;
    let card = ModelCard::from_yaml(yaml, ModelClass::DashScopeChat).unwrap();
    assert_eq!(card.model_class, "dashscope_chat");
    assert_eq!(card.status, ModelStatus::Deprecated);
    assert!(card.accepts("image/png") && !card.has_thinking());
    let value = serde_json::to_value(&card).unwrap();
    assert_eq!(value["deprecated_at"], "2027-01-31T00:00:00");

    let properties: Vec<_> = card.parameter_schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    // top_k removed (null), voice hidden, thinking parameters dropped.
    assert_eq!(
        properties,
        ["max_tokens", "temperature", "top_p", "parallel_tool_calls"]
    );
    assert_eq!(
        card.parameter_schema["properties"]["temperature"]["default"],
        json!(0.7)
    );
    assert_eq!(
        card.parameter_schema["properties"]["max_tokens"]["maximum"],
        json!(8192)
    );
    // The raw overrides are kept as written.
    assert_eq!(card.parameters_overrides["top_k"], json!(null));
}

#[test]
fn thinking_models_keep_their_thinking_parameters() {
    let yaml = format!(
        "name: t\nlabel: T\nstatus: active\noutput_types: [text/plain, {THINKING_OUTPUT_TYPE}]\n\
         context_size: 10\noutput_size: 5\n"
    );
    let card = ModelCard::from_yaml(&yaml, ModelClass::GeminiChat).unwrap();
    assert!(card.has_thinking());
    let properties = card.parameter_schema["properties"].as_object().unwrap();
    assert!(
        properties.contains_key("thinking_enable") && properties.contains_key("thinking_budget")
    );
}

#[test]
fn bad_card_yaml_is_a_typed_error_never_a_panic() {
    let cases = [
        "",
        "name: [unclosed",
        "name: x\nlabel: X\nstatus: retired\ncontext_size: 1\noutput_size: 1\n",
        "name: x\nlabel: X\nstatus: active\ncontext_size: 0\noutput_size: 1\n",
        "name: x\nlabel: X\nstatus: active\ncontext_size: -5\noutput_size: 1\n",
        "name: x\nlabel: X\nstatus: active\ncontext_size: 1\noutput_size: 1\ndeprecated_at: soon\n",
        "- just\n- a list\n",
    ];
    for yaml in cases {
        let err = ModelCard::from_yaml(yaml, ModelClass::OpenAiChat).unwrap_err();
        assert!(
            matches!(err, Error::InvalidCardYaml { .. }),
            "{yaml:?}: {err}"
        );
    }

    let bad_override = "name: x\nlabel: X\nstatus: active\ncontext_size: 1\noutput_size: 1\n\
         parameter_overrides:\n  temperature: 3\n";
    let err = ModelCard::from_yaml(bad_override, ModelClass::OpenAiChat).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidCard {
            card: "x".into(),
            reason: "the override of `temperature` is neither a mapping nor null".into()
        }
    );
}

#[test]
fn custom_classes_can_build_cards_against_their_own_schema() {
    let spec: CardSpec = serde_json::from_value(json!({
        "name": "local-llm",
        "label": "Local LLM",
        "status": "active",
        "context_size": 4096,
        "output_size": 1024,
        "parameters_overrides": {"seed": {"default": 7}},
    }))
    .unwrap();
    let base = json!({
        "type": "object",
        "properties": {
            "max_tokens": {"type": "integer"},
            "seed": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
        },
        "required": [],
    });
    let card = spec.into_card("my_provider_chat", &base).unwrap();
    assert_eq!(card.model_class, "my_provider_chat");
    assert_eq!(
        serde_json::to_value(&card.parameter_schema).unwrap(),
        json!({
            "type": "object",
            "properties": {
                "max_tokens": {"type": "integer", "maximum": 1024},
                "seed": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 7},
            },
            "required": [],
        })
    );
}

#[test]
fn model_class_names_round_trip_and_unknown_names_are_errors() {
    for class in ModelClass::ALL {
        assert_eq!(class.as_str().parse::<ModelClass>().unwrap(), class);
        assert_eq!(serde_json::to_value(class).unwrap(), json!(class.as_str()));
        let schema = class.parameter_schema();
        assert_eq!(schema["type"], "object");
        assert!(
            schema["properties"]
                .as_object()
                .unwrap()
                .contains_key("max_tokens")
        );
    }
    assert_eq!(
        "acme_chat".parse::<ModelClass>().unwrap_err(),
        Error::UnknownModelClass {
            name: "acme_chat".into()
        }
    );
}
