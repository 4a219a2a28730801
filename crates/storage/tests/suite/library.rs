//! Users' libraries of MCP servers and skills: owner scoping, unique
//! names, ordering.

use oxiscope_storage::{Error, LibraryCard, McpLibraryRecord, SkillLibraryRecord, new_id, now};
use pretty_assertions::assert_eq;

use super::backends::{Site, storage_tests};

storage_tests!(
    library_mcps_are_scoped_to_their_owner_and_ordered_by_name,
    a_library_name_is_unique_per_owner,
    library_skills_are_scoped_to_their_owner_and_survive_a_reopen,
);

fn card() -> LibraryCard {
    LibraryCard {
        hub_id: Some("local".into()),
        card_id: Some("weather".into()),
        version: Some("1.0".into()),
        display_name: Some("Weather ☀".into()),
        description: "Forecasts".into(),
        tags: vec!["web".into(), "weather".into()],
        author: None,
        icon_url: Some("https://example.com/i.png".into()),
        url: None,
    }
}

fn mcp(user: &str, name: &str) -> McpLibraryRecord {
    McpLibraryRecord {
        id: new_id(),
        user_id: user.into(),
        name: name.into(),
        card: card(),
        is_stateful: true,
        enabled: true,
        sealed: "v1:opaque".into(),
        created_at: now(),
        updated_at: now(),
    }
}

fn skill(user: &str, name: &str) -> SkillLibraryRecord {
    SkillLibraryRecord {
        id: new_id(),
        user_id: user.into(),
        name: name.into(),
        card: LibraryCard::default(),
        source: Some("skills/x".into()),
        markdown: "---\nname: x\n---\nbody".into(),
        enabled: true,
        created_at: now(),
        updated_at: now(),
    }
}

async fn library_mcps_are_scoped_to_their_owner_and_ordered_by_name(site: &Site) {
    let db = site.open().await;
    let b = mcp("alice", "beta");
    let a = mcp("alice", "alpha");
    db.create_library_mcp(&b).await.unwrap();
    db.create_library_mcp(&a).await.unwrap();
    // Another user may use the same name.
    let other = mcp("bob", "alpha");
    db.create_library_mcp(&other).await.unwrap();

    assert_eq!(
        db.list_library_mcps("alice").await.unwrap(),
        vec![a.clone(), b.clone()]
    );
    assert_eq!(
        db.get_library_mcp("alice", &a.id).await.unwrap(),
        Some(a.clone())
    );
    assert_eq!(db.get_library_mcp("bob", &a.id).await.unwrap(), None);
    assert!(!db.delete_library_mcp("bob", &a.id).await.unwrap());

    let mut stolen = a.clone();
    stolen.user_id = "bob".into();
    stolen.name = "mine".into();
    assert!(matches!(
        db.update_library_mcp(&stolen).await,
        Err(Error::NotFound { .. })
    ));
    assert_eq!(
        db.get_library_mcp("alice", &a.id).await.unwrap(),
        Some(a.clone())
    );

    let mut changed = a.clone();
    changed.enabled = false;
    changed.name = "gamma".into();
    changed.sealed = "v1:other".into();
    db.update_library_mcp(&changed).await.unwrap();
    assert_eq!(
        db.list_library_mcps("alice").await.unwrap(),
        vec![b.clone(), changed.clone()]
    );
    assert!(db.delete_library_mcp("alice", &a.id).await.unwrap());
    assert_eq!(db.list_library_mcps("alice").await.unwrap(), vec![b]);
    assert_eq!(db.list_library_mcps("bob").await.unwrap(), vec![other]);
}

async fn a_library_name_is_unique_per_owner(site: &Site) {
    let db = site.open().await;
    let first = mcp("alice", "x");
    db.create_library_mcp(&first).await.unwrap();
    assert!(matches!(
        db.create_library_mcp(&mcp("alice", "x")).await,
        Err(Error::AlreadyExists { .. })
    ));
    let second = mcp("alice", "y");
    db.create_library_mcp(&second).await.unwrap();
    let mut renamed = second.clone();
    renamed.name = "x".into();
    assert!(matches!(
        db.update_library_mcp(&renamed).await,
        Err(Error::AlreadyExists { .. })
    ));

    db.create_library_skill(&skill("alice", "s")).await.unwrap();
    assert!(matches!(
        db.create_library_skill(&skill("alice", "s")).await,
        Err(Error::AlreadyExists { .. })
    ));
    db.create_library_skill(&skill("bob", "s")).await.unwrap();
}

async fn library_skills_are_scoped_to_their_owner_and_survive_a_reopen(site: &Site) {
    let s2 = skill("alice", "zeta");
    let s1 = skill("alice", "eta");
    {
        let db = site.open().await;
        db.create_library_skill(&s2).await.unwrap();
        db.create_library_skill(&s1).await.unwrap();
        drop(db);
    }
    let db = site.open().await;
    assert_eq!(
        db.list_library_skills("alice").await.unwrap(),
        vec![s1.clone(), s2.clone()]
    );
    assert_eq!(
        db.get_library_skill("alice", &s1.id).await.unwrap(),
        Some(s1.clone())
    );
    assert_eq!(db.get_library_skill("bob", &s1.id).await.unwrap(), None);
    assert!(db.list_library_skills("bob").await.unwrap().is_empty());
    assert!(!db.delete_library_skill("bob", &s1.id).await.unwrap());
    assert!(db.delete_library_skill("alice", &s1.id).await.unwrap());
    assert!(!db.delete_library_skill("alice", &s1.id).await.unwrap());
    assert_eq!(db.list_library_skills("alice").await.unwrap(), vec![s2]);
}
