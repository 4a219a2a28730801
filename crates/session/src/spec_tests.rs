use serde_json::json;

use super::*;

fn session_config() -> serde_json::Value {
    json!({
        "workspace_id": "w1",
        "name": "Refactor",
        "naming": {"auto": true},
        "cwd": "src",
        "chat_model_config": {
            "type": "openai_credential",
            "credential_id": "c1",
            "model": "gpt-4o",
        },
        "fallback_chat_model_config": {"type": "openai_credential"},
        "tts_model_config": null,
        "knowledge_config": {"knowledge_base_ids": ["kb1"]},
        "origin": {"type": "schedule", "schedule_id": "s1"},
        "a_newer_clients_field": {"kept": [1, 2]},
    })
}

#[test]
fn a_session_config_reads_typed_and_keeps_what_it_does_not_know() {
    let spec = SessionSpec::parse(&session_config());
    assert_eq!(spec.workspace_id(), Some("w1"));
    assert_eq!(spec.name(), Some("Refactor"));
    assert!(spec.naming_auto());
    assert_eq!(spec.cwd(), Some("src"));
    let chat = spec.model(ModelSlot::Chat).get().unwrap().unwrap();
    assert_eq!(
        (chat.credential_id.as_str(), chat.model.as_str()),
        ("c1", "gpt-4o")
    );
    assert_eq!(spec.provider(), Some("openai"));
    // A fallback without its credential does not parse: the run says so.
    let fallback = spec.model(ModelSlot::Fallback).get().unwrap_err();
    assert!(fallback.contains("credential_id"), "{fallback}");
    assert_eq!(
        spec.knowledge().ok().unwrap().knowledge_base_ids,
        vec!["kb1".to_owned()]
    );
    assert_eq!(spec.schedule_id(), Some("s1"));
    // Nothing is lost or reordered on the way back.
    let back = spec.to_value();
    assert_eq!(back, session_config());
    let keys: Vec<_> = back.as_object().unwrap().keys().cloned().collect();
    let original: Vec<_> = session_config()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, original);
}

#[test]
fn edits_change_the_stored_document_and_the_view_together() {
    let mut spec = SessionSpec::parse(&session_config());
    spec.set_name("Named".into());
    spec.set_cwd(None);
    spec.set_model_value(ModelSlot::Fallback, json!(null));
    assert_eq!(spec.name(), Some("Named"));
    assert!(!spec.naming_auto(), "a name given by hand is kept");
    assert_eq!(spec.cwd(), None);
    assert_eq!(spec.model(ModelSlot::Fallback), &Parsed::Unset);
    let stored = spec.to_value();
    assert_eq!(stored["naming"], json!({"auto": false}));
    assert_eq!(stored["cwd"], json!(null));
    assert_eq!(stored["a_newer_clients_field"], json!({"kept": [1, 2]}));
}

#[test]
fn a_new_session_config_has_every_key_as_agentscope_stores_it() {
    let spec = SessionSpec::new("w9", None, || "2026-12-02 10:00:00".to_owned());
    assert_eq!(
        spec.to_value(),
        json!({
            "workspace_id": "w9",
            "name": "2026-12-02 10:00:00",
            "naming": {"auto": true},
            "cwd": null,
            "chat_model_config": null,
            "fallback_chat_model_config": null,
            "tts_model_config": null,
            "realtime_model_config": null,
            "knowledge_config": null,
        })
    );
    let named = SessionSpec::new("w9", Some("Mine".into()), || unreachable!());
    assert!(!named.naming_auto());
    assert_eq!(named.model(ModelSlot::Chat), &Parsed::Unset);
}

#[test]
fn a_config_that_is_not_an_object_reads_as_empty() {
    for odd in [json!(null), json!([1]), json!("x")] {
        let spec = SessionSpec::parse(&odd);
        assert_eq!(spec.name(), None);
        assert!(!spec.naming_auto());
        assert!(spec.origin().is_none());
    }
}

#[test]
fn an_agent_document_reads_typed() {
    let data = json!({
        "name": "Coder",
        "system_prompt": "Write code.",
        "source": "team",
        "permission_mode": "accept_edits",
        "chat_config": {
            "react_config": {"max_iters": 7},
            "context_config": "not an object",
            "invite_config": {"invitable": true, "invite_description": "  writes code  "},
        },
        "unknown": 1,
    });
    let spec = AgentSpec::parse(&data);
    assert_eq!(spec.name_or("x"), "Coder");
    assert_eq!(spec.system_prompt, "Write code.");
    assert_eq!(spec.react.max_iters, 7);
    // A context config that does not parse reads as the defaults.
    assert_eq!(
        serde_json::to_value(&spec.context).unwrap(),
        serde_json::to_value(oxiscope_agent::ContextConfig::default()).unwrap()
    );
    assert_eq!(spec.invite_description(), Some("writes code"));
    assert_eq!(
        spec.permission_mode,
        Some(oxiscope_permission::PermissionMode::AcceptEdits)
    );
    assert_eq!(spec.source.as_deref(), Some("team"));
    let wire = spec.into_wire_data();
    assert!(!wire.contains_key("source"));
    assert_eq!(wire["unknown"], json!(1));
}

#[test]
fn invitations_need_the_flag_and_a_description_and_read_the_legacy_place() {
    let legacy = AgentSpec::parse(&json!({
        "invite_config": {"invitable": true, "invite_description": "old place"},
    }));
    assert_eq!(legacy.invite_description(), Some("old place"));
    let blank = AgentSpec::parse(&json!({
        "chat_config": {"invite_config": {"invitable": true, "invite_description": "   "}},
    }));
    assert_eq!(blank.invite_description(), None);
    let off = AgentSpec::parse(&json!({
        "chat_config": {"invite_config": {"invitable": false, "invite_description": "x"}},
    }));
    assert_eq!(off.invite_description(), None);
    assert_eq!(
        AgentSpec::parse(&json!({})).name_or("Assistant"),
        "Assistant"
    );
}
