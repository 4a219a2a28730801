//! Channel records: checked at the door, credentials sealed at rest and
//! never shown, owner-scoped.

#![allow(clippy::unwrap_used, clippy::panic)]

use oxiscope_channel::{ChannelUpdate, ChannelView, Error, Routing};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::world::{TOKEN, World};

#[tokio::test]
async fn credentials_are_sealed_at_rest_and_left_out_of_the_view() {
    let w = World::new().await;
    let channels = w.host.channels();
    let new = w.new_channel(
        w.to_friday(),
        json!({"only_at_reply": false}),
        json!({"bot_token": TOKEN}),
    );
    let record = channels.create("u", new).await.unwrap();
    assert_eq!(record.platform_bot_id, "4242");
    assert!(!record.sealed_credentials.contains("test-secret"));
    let stored = channels.get("u", &record.id).await.unwrap().unwrap();
    assert!(!stored.sealed_credentials.contains("test-secret"));
    assert_eq!(
        channels.credentials(&stored).unwrap(),
        json!({"bot_token": TOKEN})
    );
    let view = serde_json::to_value(ChannelView::of(&stored).unwrap()).unwrap();
    assert!(!view.to_string().contains("test-secret"), "{view}");
    let mut keys: Vec<&str> = view
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "channel_type",
            "created_at",
            "enabled",
            "id",
            "name",
            "platform_bot_id",
            "platform_config",
            "routing",
            "session",
            "updated_at",
            "user_id"
        ]
    );
    assert_eq!(view["platform_config"], json!({"only_at_reply": false}));
    // Another user sees nothing of it.
    assert!(channels.get("mallory", &record.id).await.unwrap().is_none());
    assert!(channels.list("mallory").await.unwrap().is_empty());
    assert!(!channels.delete("mallory", &record.id).await.unwrap());
    let update = ChannelUpdate {
        enabled: Some(false),
        ..ChannelUpdate::default()
    };
    assert!(
        channels
            .update("mallory", &record.id, update)
            .await
            .unwrap()
            .is_none()
    );
    assert!(channels.delete("u", &record.id).await.unwrap());
}

#[tokio::test]
async fn bad_routing_credentials_config_or_agents_are_refused() {
    let w = World::new().await;
    let channels = w.host.channels();
    let cases = [
        (
            json!({"bindings": []}),
            json!({}),
            json!({"bot_token": TOKEN}),
        ),
        (
            w.to_friday(),
            json!({}),
            json!({"bot_token": "not-a-token"}),
        ),
        (w.to_friday(), json!({}), json!({"bot_token": "1:abc/../x"})),
        (w.to_friday(), json!({}), json!({})),
        (
            w.to_friday(),
            json!({"mode": "webhook"}),
            json!({"bot_token": TOKEN}),
        ),
        (
            w.to_friday(),
            json!({"mode": "webhook", "webhook_url": "https://h/x"}),
            json!({"bot_token": TOKEN}),
        ),
        (
            w.to_friday(),
            json!({"mode": "smoke"}),
            json!({"bot_token": TOKEN}),
        ),
        (
            json!({"bindings": [{"agent_id": "someone-elses"}]}),
            json!({}),
            json!({"bot_token": TOKEN}),
        ),
    ];
    for (routing, config, credentials) in cases {
        let new = w.new_channel(routing.clone(), config.clone(), credentials.clone());
        let e = channels.create("u", new).await.unwrap_err();
        assert!(
            matches!(e, Error::Invalid(_)),
            "{routing} {config} {credentials}: {e:?}"
        );
    }
    // Session settings: a mode the server does not know, a
    // credential that is not the owner's.
    for (mode, credential) in [("bogus", None), ("default", Some("nope"))] {
        let mut new = w.new_channel(w.to_friday(), json!({}), json!({"bot_token": TOKEN}));
        new.session.permission_mode = mode.into();
        if let Some(id) = credential {
            new.session
                .chat_model_config
                .insert("credential_id".into(), json!(id));
        }
        let e = channels.create("u", new).await.unwrap_err();
        assert!(
            matches!(e, Error::Invalid(_)),
            "{mode} {credential:?}: {e:?}"
        );
    }
    let mut unknown = w.new_channel(w.to_friday(), json!({}), json!({"bot_token": TOKEN}));
    unknown.channel_type = "pager".into();
    assert!(matches!(
        channels.create("u", unknown).await,
        Err(Error::UnknownType(_))
    ));
    assert!(channels.list("u").await.unwrap().is_empty());

    // An edit is checked the same way, and a refused edit changes nothing.
    let new = w.new_channel(w.to_friday(), json!({}), json!({"bot_token": TOKEN}));
    let record = channels.create("u", new).await.unwrap();
    let bad = ChannelUpdate {
        routing: Some(
            serde_json::from_value::<Routing>(json!({"bindings": [
            {"agent_id": w.friday}, {"match_value": "x", "agent_id": w.friday}]}))
            .unwrap(),
        ),
        ..ChannelUpdate::default()
    };
    assert!(channels.update("u", &record.id, bad).await.is_err());
    assert_eq!(
        channels.get("u", &record.id).await.unwrap().unwrap(),
        record
    );
    let good = ChannelUpdate {
        name: Some("renamed".into()),
        routing: Some(
            serde_json::from_value::<Routing>(json!({"bindings": [
            {"match_value": "-1", "agent_id": w.expert}, {"agent_id": w.friday}]}))
            .unwrap(),
        ),
        ..ChannelUpdate::default()
    };
    let changed = channels
        .update("u", &record.id, good)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(changed.name.as_deref(), Some("renamed"));
    assert_eq!(ChannelView::of(&changed).unwrap().routing.bindings.len(), 2);
    assert_eq!(changed.sealed_credentials, record.sealed_credentials);
}
