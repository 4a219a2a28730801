#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::inbound::{ChatKind, Sender};

fn message(chat: &str, user: &str, chat_type: &str) -> Inbound {
    let mut metadata = serde_json::Map::new();
    metadata.insert("chat_type".into(), json!(chat_type));
    metadata.insert("tenant".into(), json!("acme"));
    Inbound {
        message_id: "m".into(),
        chat_id: chat.into(),
        chat_name: None,
        kind: if chat_type == "private" {
            ChatKind::Private
        } else {
            ChatKind::Group
        },
        chat_type: chat_type.into(),
        sender: Sender {
            id: user.into(),
            name: None,
        },
        text: "hi".into(),
        images: vec![],
        files: vec![],
        mentions: vec![],
        mentions_bot: false,
        metadata,
    }
}

fn routing(value: serde_json::Value) -> Routing {
    serde_json::from_value(value).unwrap()
}

#[test]
fn the_first_matching_rule_wins_and_the_catch_all_takes_the_rest() {
    let r = routing(json!({"bindings": [
        {"match_key": "chat_id", "match_value": "oc_product_team", "agent_id": "product-expert"},
        {"match_key": "user_id", "match_value": "ou_alice", "agent_id": "alice-bot"},
        {"match_key": "chat_type", "match_value": "group", "agent_id": "friday",
         "session_scope": "per_chat_user"},
        {"match_key": "tenant", "match_value": "acme", "agent_id": "acme-bot"},
        {"agent_id": "friday"},
    ]}));
    r.validate().unwrap();
    let agent = |m: &Inbound| r.route(m).unwrap().agent_id;
    // Alice in the product group: the chat rule comes first.
    assert_eq!(
        agent(&message("oc_product_team", "ou_alice", "group")),
        "product-expert"
    );
    assert_eq!(
        agent(&message("oc_other", "ou_alice", "group")),
        "alice-bot"
    );
    assert_eq!(agent(&message("oc_other", "ou_bob", "group")), "friday");
    // A metadata key other than chat_type.
    assert_eq!(agent(&message("dm_bob", "ou_bob", "private")), "acme-bot");
    let mut plain = message("dm_bob", "ou_bob", "private");
    plain.metadata.remove("tenant");
    assert_eq!(r.route(&plain).unwrap().scope, SessionScope::PerChat);
    // Exact matches only: no prefix, no case folding.
    assert_eq!(
        agent(&message("oc_product_team2", "ou_bob", "Group")),
        "acme-bot"
    );
}

#[test]
fn scopes_give_one_session_per_chat_or_per_member_and_agents_never_share() {
    let per_member = routing(json!({"bindings": [
        {"match_key": "chat_type", "match_value": "group", "agent_id": "friday",
         "session_scope": "per_chat_user"},
        {"agent_id": "friday"},
    ]}));
    let key = |r: &Routing, m: &Inbound| r.route(m).unwrap().session_key;
    let alice = message("g1", "alice", "group");
    let bob = message("g1", "bob", "group");
    assert_ne!(key(&per_member, &alice), key(&per_member, &bob));
    assert_eq!(
        key(&per_member, &alice),
        key(&per_member, &message("g1", "alice", "group"))
    );
    let per_chat = routing(json!({"bindings": [{"agent_id": "friday"}]}));
    assert_eq!(key(&per_chat, &alice), key(&per_chat, &bob));
    // The same chat under per_chat and per_chat_user: different sessions.
    let dm = message("g1", "g1", "group");
    assert_ne!(key(&per_chat, &dm), key(&per_member, &dm));
    let other_agent = routing(json!({"bindings": [{"agent_id": "jarvis"}]}));
    assert_ne!(key(&per_chat, &alice), key(&other_agent, &alice));
    // Ids with separators cannot collide.
    let tricky = message("a\",\"b", "c", "private");
    let plain = message("a", "b\",\"c", "private");
    assert_ne!(key(&per_member, &tricky), key(&per_member, &plain));
}

#[test]
fn a_routing_without_one_last_catch_all_or_with_a_duplicate_is_refused() {
    let refused = [
        json!({"bindings": []}),
        json!({"bindings": [{"match_value": "c1", "agent_id": "a"}]}),
        json!({"bindings": [{"agent_id": "a"}, {"match_value": "c1", "agent_id": "b"}]}),
        json!({"bindings": [{"agent_id": "a"}, {"match_key": "user_id", "agent_id": "b"}]}),
        json!({"bindings": [{"match_value": "c1", "agent_id": "a"},
                            {"match_value": "c1", "agent_id": "b"}, {"agent_id": "c"}]}),
        json!({"bindings": [{"agent_id": " "}]}),
    ];
    for value in refused {
        let e = routing(value.clone()).validate().unwrap_err();
        assert!(matches!(e, Error::Invalid(_)), "{value}: {e:?}");
    }
    // The same value under two keys is no duplicate.
    routing(
        json!({"bindings": [{"match_key": "chat_id", "match_value": "x", "agent_id": "a"},
                                {"match_key": "user_id", "match_value": "x", "agent_id": "b"},
                                {"agent_id": "c"}]}),
    )
    .validate()
    .unwrap();
    // Defaults as AgentScope's: chat_id, "*", per_chat.
    let b: Binding = serde_json::from_value(json!({"agent_id": "a"})).unwrap();
    assert_eq!(
        (b.match_key.as_str(), b.match_value.as_str()),
        ("chat_id", "*")
    );
    assert_eq!(b.session_scope, SessionScope::PerChat);
    assert!(
        serde_json::from_value::<Binding>(json!({"agent_id": "a", "session_scope": "x"})).is_err()
    );
}
