use oxiscope_storage::{
    ChannelChatRecord, ChannelRecord, ChannelSessionRecord, ChannelStore, Error, new_id, now,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::backends::{Site, storage_tests};

storage_tests!(
    channels_are_owner_scoped_updated_and_deleted_with_what_they_saw,
    a_session_key_is_claimed_once_and_an_inbound_message_taken_once
);

fn channel(user: &str, enabled: bool) -> ChannelRecord {
    ChannelRecord {
        id: new_id(),
        user_id: user.to_owned(),
        channel_type: "telegram".to_owned(),
        name: Some("bot ü".to_owned()),
        platform_bot_id: "12345".to_owned(),
        enabled,
        sealed_credentials: "sealed:abc".to_owned(),
        data: json!({"platform_config": {"only_at_reply": true}, "routing": {"bindings": []}}),
        created_at: now(),
        updated_at: now(),
    }
}

fn claim(channel_id: &str, key: &str, session_id: &str) -> ChannelSessionRecord {
    ChannelSessionRecord {
        channel_id: channel_id.to_owned(),
        session_key: key.to_owned(),
        session_id: session_id.to_owned(),
        user_id: "u".to_owned(),
        agent_id: "a".to_owned(),
        chat_id: "c1".to_owned(),
        created_at: now(),
    }
}

async fn channels_are_owner_scoped_updated_and_deleted_with_what_they_saw(site: &Site) {
    let db = site.open().await;
    let store: &dyn ChannelStore = db.channels().unwrap();
    let on = channel("u", true);
    let off = channel("u", false);
    let theirs = channel("v", true);
    for c in [&on, &off, &theirs] {
        store.create_channel(c).await.unwrap();
    }
    assert_eq!(
        store.get_channel("u", &on.id).await.unwrap(),
        Some(on.clone())
    );
    assert_eq!(
        store.get_channel("v", &on.id).await.unwrap(),
        None,
        "owner-scoped"
    );
    assert_eq!(
        store.list_channels("u").await.unwrap().len(),
        2,
        "the user's two"
    );
    let mut enabled: Vec<String> = store
        .enabled_channels()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    enabled.sort();
    let mut want = vec![on.id.clone(), theirs.id.clone()];
    want.sort();
    assert_eq!(enabled, want);

    let mut changed = off.clone();
    changed.enabled = true;
    changed.name = None;
    changed.data["routing"] = json!({"bindings": [{"agent_id": "a"}]});
    changed.updated_at = now();
    store.update_channel(&changed).await.unwrap();
    assert_eq!(
        store.get_channel("u", &off.id).await.unwrap(),
        Some(changed.clone())
    );
    let mut foreign = changed.clone();
    foreign.user_id = "v".into();
    assert!(matches!(
        store.update_channel(&foreign).await,
        Err(Error::NotFound { .. })
    ));

    // What a channel saw goes with it.
    let chat = ChannelChatRecord {
        channel_id: on.id.clone(),
        chat_id: "c1".into(),
        name: "Product Team".into(),
        chat_type: "group".into(),
        last_seen: now(),
    };
    store.record_channel_chat(&chat).await.unwrap();
    let renamed = ChannelChatRecord {
        name: "Product".into(),
        last_seen: now(),
        ..chat.clone()
    };
    store.record_channel_chat(&renamed).await.unwrap();
    assert_eq!(store.channel_chats(&on.id).await.unwrap(), vec![renamed]);
    store
        .claim_channel_session(&claim(&on.id, "a:c1", "s1"))
        .await
        .unwrap();
    assert!(store.take_inbound(&on.id, "m1", &now()).await.unwrap());

    assert!(!store.delete_channel("v", &on.id).await.unwrap(), "not v's");
    assert!(store.delete_channel("u", &on.id).await.unwrap());
    assert!(!store.delete_channel("u", &on.id).await.unwrap());
    assert_eq!(store.get_channel("u", &on.id).await.unwrap(), None);
    assert!(store.channel_chats(&on.id).await.unwrap().is_empty());
    assert!(store.channel_sessions(&on.id).await.unwrap().is_empty());
    assert!(store.take_inbound(&on.id, "m1", &now()).await.unwrap());
}

async fn a_session_key_is_claimed_once_and_an_inbound_message_taken_once(site: &Site) {
    let db = site.open().await;
    // A second replica over the same database.
    let other = site.open().await;
    let (a, b) = (db.channels().unwrap(), other.channels().unwrap());
    let first = a
        .claim_channel_session(&claim("ch", "a:c1", "s1"))
        .await
        .unwrap();
    assert_eq!(first.session_id, "s1");
    let second = b
        .claim_channel_session(&claim("ch", "a:c1", "s2"))
        .await
        .unwrap();
    assert_eq!(second, first, "the first claim wins");
    b.claim_channel_session(&claim("ch", "a:c1:u9", "s3"))
        .await
        .unwrap();
    let keys: Vec<String> = a
        .channel_sessions("ch")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.session_key)
        .collect();
    assert_eq!(keys.len(), 2);
    a.release_channel_session("ch", "a:c1").await.unwrap();
    let again = b
        .claim_channel_session(&claim("ch", "a:c1", "s4"))
        .await
        .unwrap();
    assert_eq!(again.session_id, "s4");

    assert!(
        a.take_inbound("ch", "m1", "2026-01-01T00:00:00Z")
            .await
            .unwrap()
    );
    assert!(
        !b.take_inbound("ch", "m1", "2026-01-01T00:00:01Z")
            .await
            .unwrap()
    );
    assert!(
        b.take_inbound("other", "m1", "2026-01-01T00:00:01Z")
            .await
            .unwrap()
    );
    assert_eq!(a.prune_inbound("2026-01-01T00:00:01Z").await.unwrap(), 1);
    assert!(
        b.take_inbound("ch", "m1", "2026-01-02T00:00:00Z")
            .await
            .unwrap()
    );
}
