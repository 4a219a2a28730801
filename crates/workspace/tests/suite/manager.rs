//! The workspace manager: directories per user, caching, idle eviction.

use std::time::Duration;

use oxiscope_workspace::{Isolation, WorkspaceManager};

#[tokio::test]
async fn two_users_with_the_same_workspace_id_get_different_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let manager = WorkspaceManager::local(tmp.path(), Isolation::PerAgent);
    let alice = manager
        .get("alice", "agent", "s1", Some("shared"))
        .await
        .unwrap();
    let bob = manager
        .get("bob", "agent", "s1", Some("shared"))
        .await
        .unwrap();
    assert_ne!(alice.workdir(), bob.workdir());
    assert!(alice.workdir().starts_with(tmp.path().join("alice")));
    assert!(bob.workdir().starts_with(tmp.path().join("bob")));
    let again = manager
        .get("alice", "agent", "s2", Some("shared"))
        .await
        .unwrap();
    assert!(
        std::sync::Arc::ptr_eq(&alice, &again),
        "the live workspace is reused"
    );
    assert!(
        manager
            .get("alice", "agent", "s1", Some("../bob/shared"))
            .await
            .is_err()
    );
    assert!(
        manager
            .get("../bob", "agent", "s1", Some("shared"))
            .await
            .unwrap()
            .workdir()
            .starts_with(tmp.path().join("=2e2e2f626f62"))
    );
}

#[tokio::test]
async fn the_isolation_grain_decides_who_shares() {
    let tmp = tempfile::tempdir().unwrap();
    let per_session = WorkspaceManager::local(tmp.path(), Isolation::PerSession);
    let a = per_session.get("u", "agent", "s1", None).await.unwrap();
    let b = per_session.get("u", "agent", "s2", None).await.unwrap();
    assert_ne!(a.workdir(), b.workdir());
    let per_agent = WorkspaceManager::local(tmp.path(), Isolation::PerAgent);
    let a = per_agent.get("u", "agent", "s1", None).await.unwrap();
    let b = per_agent.get("u", "agent", "s2", None).await.unwrap();
    assert_eq!(a.workdir(), b.workdir());
}

#[tokio::test]
async fn idle_workspaces_are_closed_unless_someone_holds_them() {
    let tmp = tempfile::tempdir().unwrap();
    let manager = WorkspaceManager::local(tmp.path(), Isolation::PerAgent).with_ttl(Duration::ZERO);
    let held = manager.get("u", "a", "s", None).await.unwrap();
    assert_eq!(manager.evict_idle().await, 0, "a held workspace stays");
    drop(held);
    assert_eq!(manager.evict_idle().await, 1);
    assert_eq!(manager.live().await, 0);
    // The directory stays; the next request opens it again.
    let again = manager.get("u", "a", "s", None).await.unwrap();
    assert!(again.workdir().is_dir());
}
