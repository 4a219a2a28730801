//! Several stores on one database (service replicas), and what every
//! backend must keep exactly.

use oxiscope_storage::{Error, PostgresStorage, SessionRecord, Storage as _, new_id, now};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::backends::{Site, storage_tests};

storage_tests!(
    two_stores_on_one_database_see_each_others_writes,
    concurrent_commits_of_one_session_let_exactly_one_win,
    documents_round_trip_exactly_even_with_nul_characters,
    a_column_a_newer_replica_adds_leaves_an_older_ones_reads_working,
);

fn session(user: &str) -> SessionRecord {
    SessionRecord {
        id: new_id(),
        user_id: user.to_owned(),
        agent_id: "a".into(),
        workspace_id: "w".into(),
        created_at: now(),
        updated_at: now(),
        config: json!({"name": "s"}),
        state: json!({}),
        revision: 0,
    }
}

async fn two_stores_on_one_database_see_each_others_writes(site: &Site) {
    let one = site.open().await;
    let two = site.open().await;
    let s = session("u");
    one.create_session(&s).await.unwrap();
    assert!(matches!(
        two.create_session(&SessionRecord {
            id: new_id(),
            ..s.clone()
        })
        .await,
        Err(Error::AlreadyExists {
            kind: "session",
            ..
        })
    ));
    let rev = two
        .commit_reply(&s.id, 0, &json!({"by": "two"}), &[json!({"id": "m1"})])
        .await
        .unwrap();
    let seen = one.get_session("u", &s.id).await.unwrap().unwrap();
    assert_eq!((seen.revision, seen.state), (rev, json!({"by": "two"})));
    assert!(matches!(
        one.commit_reply(&s.id, 0, &json!({"by": "one"}), &[]).await,
        Err(Error::StaleRevision { found: 1, .. })
    ));
    let page = one.list_messages(&s.id, None, 0, 10).await.unwrap();
    assert_eq!(page.messages.len(), 1);
}

async fn concurrent_commits_of_one_session_let_exactly_one_win(site: &Site) {
    let stores = [site.open().await, site.open().await];
    let s = session("u");
    stores[0].create_session(&s).await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let store = stores[i % 2].clone();
            let id = s.id.clone();
            tokio::spawn(async move {
                let msg = json!({"id": format!("m{i}")});
                store.commit_reply(&id, 0, &json!({"i": i}), &[msg]).await
            })
        })
        .collect();
    let mut won = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(rev) => {
                assert_eq!(rev, 1);
                won += 1;
            }
            Err(Error::StaleRevision {
                expected: 0,
                found: 1,
                ..
            }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(won, 1);
    // Only the winner's message was written.
    let page = stores[1].list_messages(&s.id, None, 0, 10).await.unwrap();
    assert_eq!(page.messages.len(), 1);
}

async fn documents_round_trip_exactly_even_with_nul_characters(site: &Site) {
    let db = site.open().await;
    let s = SessionRecord {
        config: json!({"name": "n\u{0}ul", "z": 1, "a": [1.5, null, "ü"]}),
        ..session("u")
    };
    db.create_session(&s).await.unwrap();
    let msg = json!({"id": "m1", "content": "binary \u{0} output", "big": u64::MAX});
    db.commit_reply(&s.id, 0, &json!({"k": "\u{0}"}), std::slice::from_ref(&msg))
        .await
        .unwrap();
    let stored = db.get_session("u", &s.id).await.unwrap().unwrap();
    assert_eq!(stored.config, s.config);
    assert_eq!(stored.state, json!({"k": "\u{0}"}));
    let page = db.list_messages(&s.id, None, 0, 10).await.unwrap();
    assert_eq!(page.messages[0].msg, msg);
}

#[tokio::test]
async fn postgres_replicas_starting_together_migrate_once() {
    let Some(Site::Postgres(url)) = Site::postgres() else {
        return;
    };
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { PostgresStorage::connect(&url).await })
        })
        .collect();
    let mut stores = Vec::new();
    for start in starts {
        stores.push(start.await.unwrap().unwrap());
    }
    // Each migration is recorded once, and all of them by one
    // transaction: one replica migrated, the others found it done.
    use sqlx::Connection as _;
    let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM schema_migrations ORDER BY version")
            .fetch_all(&mut c)
            .await
            .unwrap();
    let expected: Vec<i64> = (1..=i64::try_from(versions.len()).unwrap()).collect();
    assert!(versions.len() >= 9, "{versions:?}");
    assert_eq!(versions, expected);
    let writers: i64 =
        sqlx::query_scalar("SELECT count(DISTINCT xmin::text) FROM schema_migrations")
            .fetch_one(&mut c)
            .await
            .unwrap();
    assert_eq!(
        writers, 1,
        "the migrations were applied by {writers} transactions"
    );
    // And every replica works on the one schema.
    let s = session("u");
    stores[0].create_session(&s).await.unwrap();
    for store in &stores {
        assert_eq!(
            store.get_session("u", &s.id).await.unwrap().unwrap().id,
            s.id
        );
    }
    for store in stores {
        store.close().await;
    }
}

#[tokio::test]
async fn postgres_connection_failures_are_typed_errors() {
    // Nothing listens on port 1; a malformed URL never connects.
    for url in ["postgres://nobody@127.0.0.1:1/x", "postgres://[::1"] {
        match PostgresStorage::connect(url).await {
            Err(Error::Database(_)) => {}
            other => panic!("{url}: {other:?}"),
        }
    }
    assert!(oxiscope_storage::is_postgres_url("postgresql://h/db"));
    assert!(oxiscope_storage::is_postgres_url("POSTGRES://h/db"));
    assert!(!oxiscope_storage::is_postgres_url("sqlite:///tmp/x"));
    assert!(!oxiscope_storage::is_postgres_url("postgres"));
}

/// A rolling upgrade: a newer replica migrates (adds columns) while an
/// older one keeps its prepared statements. Reads that named `*` were
/// refused by PostgreSQL afterwards ("cached plan must not change result
/// type"); named columns are not.
async fn a_column_a_newer_replica_adds_leaves_an_older_ones_reads_working(site: &Site) {
    use sqlx::Connection as _;
    let store = site.open().await;
    let s = session("u");
    store.create_session(&s).await.unwrap();
    let read = || async {
        for _ in 0..4 {
            assert!(store.get_session("u", &s.id).await.unwrap().is_some());
            assert_eq!(store.list_sessions("u", "a").await.unwrap().len(), 1);
            assert!(store.list_agents("u").await.unwrap().is_empty());
            assert!(store.list_schedules("u").await.unwrap().is_empty());
            assert!(store.list_credentials("u").await.unwrap().is_empty());
        }
    };
    read().await;
    let alter = [
        "ALTER TABLE sessions ADD COLUMN newer_column TEXT",
        "ALTER TABLE agents ADD COLUMN newer_column TEXT",
        "ALTER TABLE schedules ADD COLUMN newer_column TEXT",
        "ALTER TABLE credentials ADD COLUMN newer_column TEXT",
    ];
    match site {
        Site::Postgres(url) => {
            let mut c = sqlx::PgConnection::connect(url).await.unwrap();
            for statement in alter {
                sqlx::query(statement).execute(&mut c).await.unwrap();
            }
        }
        Site::Sqlite(dir) => {
            let path = dir.path().join(oxiscope_storage::DATABASE_FILE);
            let url = format!("sqlite://{}", path.display());
            let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
            for statement in alter {
                sqlx::query(statement).execute(&mut c).await.unwrap();
            }
        }
    }
    read().await;
}
