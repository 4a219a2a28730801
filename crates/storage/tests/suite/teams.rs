use oxiscope_storage::{Error, SessionRecord, TeamRecord, new_id, now};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::backends::{Site, storage_tests};

storage_tests!(
    teams_are_owner_scoped_updated_and_deleted,
    a_session_remembers_its_team_until_the_team_goes
);

fn session(user: &str, agent: &str) -> SessionRecord {
    SessionRecord {
        id: new_id(),
        user_id: user.to_owned(),
        agent_id: agent.to_owned(),
        workspace_id: "w".to_owned(),
        created_at: now(),
        updated_at: now(),
        config: json!({"name": "s"}),
        state: json!({"context": []}),
        revision: 0,
    }
}

fn team(user: &str, leader_session: &str) -> TeamRecord {
    TeamRecord {
        id: new_id(),
        user_id: user.to_owned(),
        session_id: leader_session.to_owned(),
        leader_agent_id: Some("lead".to_owned()),
        data: json!({"name": "crew ü", "description": "d", "member_ids": [], "members": []}),
        created_at: now(),
        updated_at: now(),
    }
}

async fn teams_are_owner_scoped_updated_and_deleted(site: &Site) {
    let db = site.open().await;
    let t = team("u", "s1");
    db.create_team(&t).await.unwrap();
    assert_eq!(db.get_team("u", &t.id).await.unwrap(), Some(t.clone()));
    assert_eq!(db.get_team("v", &t.id).await.unwrap(), None, "owner-scoped");

    let mut changed = t.clone();
    changed.data["members"] =
        json!([{"owner_id": "u", "agent_id": "a", "session_id": "s2", "role": "created"}]);
    changed.updated_at = now();
    db.update_team(&changed).await.unwrap();
    assert_eq!(
        db.get_team("u", &t.id).await.unwrap(),
        Some(changed.clone())
    );

    let mut foreign = changed.clone();
    foreign.user_id = "v".into();
    assert!(matches!(
        db.update_team(&foreign).await,
        Err(Error::NotFound { .. })
    ));
    assert!(!db.delete_team("v", &t.id).await.unwrap(), "not v's team");
    assert!(db.delete_team("u", &t.id).await.unwrap());
    assert!(!db.delete_team("u", &t.id).await.unwrap());
    assert_eq!(db.get_team("u", &t.id).await.unwrap(), None);

    let none = TeamRecord {
        leader_agent_id: None,
        ..team("u", "s3")
    };
    db.create_team(&none).await.unwrap();
    assert_eq!(db.get_team("u", &none.id).await.unwrap(), Some(none));
}

async fn a_session_remembers_its_team_until_the_team_goes(site: &Site) {
    let db = site.open().await;
    let leader = session("u", "lead");
    let worker = session("u", "work");
    let other = session("v", "lead");
    for s in [&leader, &worker, &other] {
        db.create_session(s).await.unwrap();
    }
    let t = team("u", &leader.id);
    db.create_team(&t).await.unwrap();
    assert_eq!(db.session_team("u", &leader.id).await.unwrap(), None);
    assert!(
        db.set_session_team("u", &leader.id, Some(&t.id))
            .await
            .unwrap()
    );
    assert!(
        db.set_session_team("u", &worker.id, Some(&t.id))
            .await
            .unwrap()
    );
    assert!(
        !db.set_session_team("u", &other.id, Some(&t.id))
            .await
            .unwrap(),
        "another user's session is not touched"
    );
    assert!(
        !db.set_session_team("u", "missing", Some(&t.id))
            .await
            .unwrap()
    );
    assert_eq!(
        db.session_team("u", &worker.id).await.unwrap(),
        Some(t.id.clone())
    );
    assert_eq!(db.session_team("v", &other.id).await.unwrap(), None);
    assert_eq!(
        db.session_team("v", &worker.id).await.unwrap(),
        None,
        "owner-scoped"
    );

    // The session record itself reads as before.
    assert_eq!(
        db.get_session("u", &worker.id).await.unwrap(),
        Some(worker.clone())
    );

    assert!(db.set_session_team("u", &worker.id, None).await.unwrap());
    assert_eq!(db.session_team("u", &worker.id).await.unwrap(), None);
    assert!(
        db.set_session_team("u", &worker.id, Some(&t.id))
            .await
            .unwrap()
    );

    assert!(db.delete_team("u", &t.id).await.unwrap());
    assert_eq!(db.session_team("u", &leader.id).await.unwrap(), None);
    assert_eq!(db.session_team("u", &worker.id).await.unwrap(), None);

    // Reopening keeps the schema (migrations run once).
    drop(db);
    let db = site.open().await;
    assert_eq!(db.session_team("u", &leader.id).await.unwrap(), None);
}
