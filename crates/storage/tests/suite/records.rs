use oxiscope_storage::{
    AgentRecord, ApiKeyRecord, CredentialRecord, Error, ScheduleRecord, SessionRecord, new_id, now,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::backends::{Site, storage_tests};

storage_tests!(
    records_are_scoped_to_their_owner,
    credentials_schedules_and_api_keys_round_trip,
    commit_reply_checks_the_revision_and_upserts_messages,
    sessions_are_found_by_owner_agent_and_workspace_and_survive_reopen,
    concurrent_commits_on_many_sessions_all_land,
    one_session_per_user_agent_and_workspace_even_under_concurrency,
    deleting_an_agent_deletes_its_sessions_and_their_messages,
    a_session_is_named_only_while_its_name_is_automatic_and_nothing_else_changes,
);

fn agent(user: &str, name: &str) -> AgentRecord {
    AgentRecord {
        id: new_id(),
        user_id: user.to_owned(),
        created_at: now(),
        updated_at: now(),
        data: json!({"name": name, "system_prompt": "Hi ü"}),
    }
}

fn session(user: &str, agent_id: &str) -> SessionRecord {
    SessionRecord {
        id: new_id(),
        user_id: user.to_owned(),
        agent_id: agent_id.to_owned(),
        workspace_id: agent_id.to_owned(),
        created_at: now(),
        updated_at: now(),
        config: json!({"name": "s"}),
        state: json!({"context": []}),
        revision: 0,
    }
}

fn msg(id: &str, text: &str) -> Value {
    json!({"id": id, "role": "user", "content": text})
}

async fn records_are_scoped_to_their_owner(site: &Site) {
    let db = site.open().await;
    let a = agent("alice", "A");
    db.create_agent(&a).await.unwrap();
    assert_eq!(db.get_agent("alice", &a.id).await.unwrap(), Some(a.clone()));
    assert_eq!(db.get_agent("bob", &a.id).await.unwrap(), None);
    assert!(db.list_agents("bob").await.unwrap().is_empty());
    assert!(!db.delete_agent("bob", &a.id).await.unwrap());

    let mut stolen = a.clone();
    stolen.user_id = "bob".into();
    assert!(matches!(
        db.update_agent(&stolen).await,
        Err(Error::NotFound { kind: "agent", .. })
    ));

    let mut changed = a.clone();
    changed.data = json!({"name": "B"});
    db.update_agent(&changed).await.unwrap();
    assert_eq!(db.list_agents("alice").await.unwrap(), vec![changed]);
    assert!(db.delete_agent("alice", &a.id).await.unwrap());
    assert!(db.list_agents("alice").await.unwrap().is_empty());
}

async fn credentials_schedules_and_api_keys_round_trip(site: &Site) {
    let db = site.open().await;
    let c = CredentialRecord {
        id: new_id(),
        user_id: "u".into(),
        created_at: now(),
        updated_at: now(),
        sealed: "v1:opaque".into(),
    };
    db.create_credential(&c).await.unwrap();
    assert_eq!(
        db.get_credential("u", &c.id).await.unwrap(),
        Some(c.clone())
    );
    assert_eq!(db.get_credential("x", &c.id).await.unwrap(), None);
    let mut c2 = c.clone();
    c2.sealed = "v1:other".into();
    db.update_credential(&c2).await.unwrap();
    assert_eq!(db.list_credentials("u").await.unwrap(), vec![c2]);
    assert!(db.delete_credential("u", &c.id).await.unwrap());

    let s = ScheduleRecord {
        id: new_id(),
        user_id: "u".into(),
        created_at: now(),
        updated_at: now(),
        data: json!({"cron": "0 * * * *"}),
        next_check_at: None,
    };
    db.create_schedule(&s).await.unwrap();
    assert_eq!(db.list_schedules("u").await.unwrap(), vec![s.clone()]);
    assert!(!db.delete_schedule("x", &s.id).await.unwrap());
    assert!(db.delete_schedule("u", &s.id).await.unwrap());

    let k = ApiKeyRecord {
        hash: "ab".repeat(32),
        user_id: "u".into(),
        label: "ci".into(),
        created_at: now(),
    };
    db.create_api_key(&k).await.unwrap();
    assert_eq!(db.find_api_key(&k.hash).await.unwrap(), Some(k.clone()));
    assert_eq!(db.find_api_key("nope").await.unwrap(), None);
    let other = ApiKeyRecord {
        hash: "cd".repeat(32),
        user_id: "a".into(),
        ..k.clone()
    };
    db.create_api_key(&other).await.unwrap();
    // By user, then age.
    assert_eq!(
        db.list_api_keys().await.unwrap(),
        vec![other.clone(), k.clone()]
    );
    assert!(db.delete_api_key(&k.hash).await.unwrap());
    assert!(!db.delete_api_key(&k.hash).await.unwrap());
    assert_eq!(db.find_api_key(&k.hash).await.unwrap(), None);
    assert_eq!(db.list_api_keys().await.unwrap(), vec![other]);
}

async fn commit_reply_checks_the_revision_and_upserts_messages(site: &Site) {
    let db = site.open().await;
    let s = session("u", "a1");
    db.create_session(&s).await.unwrap();

    let rev = db
        .commit_reply(
            &s.id,
            0,
            &json!({"v": 1}),
            &[msg("m1", "hi"), msg("m2", "draft")],
        )
        .await
        .unwrap();
    assert_eq!(rev, 1);
    // A stale writer (still at revision 0) changes nothing.
    let stale = db
        .commit_reply(&s.id, 0, &json!({"v": "stale"}), &[msg("m3", "lost")])
        .await;
    assert!(matches!(
        stale,
        Err(Error::StaleRevision {
            expected: 0,
            found: 1,
            ..
        })
    ));
    // The same message id is replaced in place, not duplicated.
    db.commit_reply(&s.id, 1, &json!({"v": 2}), &[msg("m2", "final")])
        .await
        .unwrap();

    let stored = db.get_session("u", &s.id).await.unwrap().unwrap();
    assert_eq!(stored.state, json!({"v": 2}));
    assert_eq!(stored.revision, 2);

    let page = db.list_messages(&s.id, None, 0, 50).await.unwrap();
    let ids: Vec<_> = page.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["m2", "m1"]);
    assert_eq!(page.messages[0].msg["content"], "final");
    assert!(!page.has_more);

    let first = db.list_messages(&s.id, None, 0, 1).await.unwrap();
    assert!(first.has_more);
    let older = db.list_messages(&s.id, Some("m2"), 0, 1).await.unwrap();
    assert_eq!(older.messages[0].id, "m1");
    assert!(!older.has_more);
    assert!(matches!(
        db.commit_reply("missing", 0, &json!({}), &[]).await,
        Err(Error::NotFound { .. })
    ));
}

async fn sessions_are_found_by_owner_agent_and_workspace_and_survive_reopen(site: &Site) {
    let s = session("u", "a1");
    {
        let db = site.open().await;
        db.create_session(&s).await.unwrap();
        db.update_session_config("u", &s.id, &json!({"name": "renamed"}))
            .await
            .unwrap();
        drop(db);
    }
    let db = site.open().await;
    let found = db.find_session("u", "a1", "a1").await.unwrap().unwrap();
    assert_eq!(found.id, s.id);
    assert_eq!(found.config, json!({"name": "renamed"}));
    assert_eq!(db.find_session("other", "a1", "a1").await.unwrap(), None);
    assert_eq!(db.list_sessions("u", "a1").await.unwrap().len(), 1);
    assert!(
        db.update_session_config("x", &s.id, &json!({}))
            .await
            .is_err()
    );
    assert!(db.delete_session("u", &s.id).await.unwrap());
    assert_eq!(db.get_session("u", &s.id).await.unwrap(), None);
    db.ping().await.unwrap();
}

async fn concurrent_commits_on_many_sessions_all_land(site: &Site) {
    let db = site.open().await;
    let mut ids = Vec::new();
    for i in 0..20 {
        let s = SessionRecord {
            workspace_id: format!("w{i}"),
            ..session("u", "a")
        };
        db.create_session(&s).await.unwrap();
        ids.push(s.id);
    }
    let tasks: Vec<_> = ids
        .iter()
        .cloned()
        .map(|id| {
            let db = db.clone();
            tokio::spawn(async move {
                let mut rev = 0;
                for i in 0..5 {
                    rev = db
                        .commit_reply(&id, rev, &json!({"i": i}), &[msg(&format!("m{i}"), "x")])
                        .await
                        .unwrap();
                }
                rev
            })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap(), 5);
    }
    for id in &ids {
        let page = db.list_messages(id, None, 0, 50).await.unwrap();
        assert_eq!(page.messages.len(), 5);
    }
}

async fn one_session_per_user_agent_and_workspace_even_under_concurrency(site: &Site) {
    let db = site.open().await;
    let tasks: Vec<_> = (0..10)
        .map(|_| {
            let db = db.clone();
            tokio::spawn(async move { db.create_session(&session("u", "a")).await })
        })
        .collect();
    let mut created = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(()) => created += 1,
            Err(oxiscope_storage::Error::AlreadyExists { kind, .. }) => assert_eq!(kind, "session"),
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(created, 1);
    // Another workspace or another user is another session.
    db.create_session(&SessionRecord {
        workspace_id: "other".into(),
        ..session("u", "a")
    })
    .await
    .unwrap();
    db.create_session(&session("v", "a")).await.unwrap();
}

async fn deleting_an_agent_deletes_its_sessions_and_their_messages(site: &Site) {
    let db = site.open().await;
    let a = agent("u", "a");
    db.create_agent(&a).await.unwrap();
    let s = session("u", &a.id);
    db.create_session(&s).await.unwrap();
    db.commit_reply(&s.id, 0, &json!({}), &[msg("m1", "x")])
        .await
        .unwrap();
    let keep = session("u", "another-agent");
    db.create_session(&keep).await.unwrap();
    assert!(db.delete_agent("u", &a.id).await.unwrap());
    assert!(db.get_session("u", &s.id).await.unwrap().is_none());
    assert!(
        db.list_messages(&s.id, None, 0, 10)
            .await
            .unwrap()
            .messages
            .is_empty()
    );
    assert!(db.get_session("u", &keep.id).await.unwrap().is_some());
}

async fn a_session_is_named_only_while_its_name_is_automatic_and_nothing_else_changes(site: &Site) {
    let db = site.open().await;
    let s = session("u", "a1");
    db.create_session(&s).await.unwrap();
    let config = json!({"workspace_id": "a1", "name": "2026-12-01 09:00:00", "naming": {"auto": true}, "cwd": "sub"});
    db.update_session_config("u", &s.id, &config).await.unwrap();
    // Another user, another id: nothing.
    assert!(!db.name_session_if_auto("x", &s.id, "t").await.unwrap());
    assert!(!db.name_session_if_auto("u", "nope", "t").await.unwrap());
    assert!(
        db.name_session_if_auto("u", &s.id, "Listing files")
            .await
            .unwrap()
    );
    let named = db.get_session("u", &s.id).await.unwrap().unwrap();
    assert_eq!(
        named.config,
        json!({"workspace_id": "a1", "name": "Listing files", "naming": {"auto": false}, "cwd": "sub"})
    );
    // Settled: a second title does not land.
    assert!(!db.name_session_if_auto("u", &s.id, "Other").await.unwrap());
    assert_eq!(
        db.get_session("u", &s.id).await.unwrap().unwrap().config["name"],
        "Listing files"
    );
}
