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

#[tokio::test]
async fn a_slow_workspace_delays_no_other_and_is_made_once() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures_util::FutureExt;
    use oxiscope_workspace::{LocalWorkspace, Workspace, WorkspaceFactory};

    let tmp = tempfile::tempdir().unwrap();
    let made = Arc::new(AtomicUsize::new(0));
    // The slow workspace is held until the fast one has been handed out.
    let release = Arc::new(tokio::sync::Notify::new());
    let (counter, gate) = (Arc::clone(&made), Arc::clone(&release));
    let factory: WorkspaceFactory = Arc::new(move |spec| {
        let (counter, gate) = (Arc::clone(&counter), Arc::clone(&gate));
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            if spec.workspace_id == "slow" {
                gate.notified().await;
            }
            let ws = LocalWorkspace::new(spec.workspace_id, spec.dir)?;
            ws.initialize().await?;
            Ok(Arc::new(ws) as Arc<dyn Workspace>)
        }
        .boxed()
    });
    let manager = Arc::new(WorkspaceManager::new(
        tmp.path(),
        Isolation::PerAgent,
        factory,
    ));
    let slow =
        |m: Arc<WorkspaceManager>| async move { m.get("u", "a", "s", Some("slow")).await.unwrap() };
    let first = tokio::spawn(slow(Arc::clone(&manager)));
    let second = tokio::spawn(slow(Arc::clone(&manager)));
    while made.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }
    // Were it made under one lock for all, this would wait forever.
    tokio::time::timeout(
        Duration::from_secs(30),
        manager.get("u", "a", "s", Some("fast")),
    )
    .await
    .expect("another workspace waited for the slow one")
    .unwrap();
    release.notify_one();
    let (a, b) = (first.await.unwrap(), second.await.unwrap());
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(made.load(Ordering::SeqCst), 2, "slow once, fast once");
}

#[tokio::test]
async fn a_user_may_have_only_so_many_workspaces_live() {
    let tmp = tempfile::tempdir().unwrap();
    let manager = WorkspaceManager::local(tmp.path(), Isolation::PerAgent)
        .with_max_live_per_user(2)
        .with_ttl(Duration::from_secs(3600));
    let one = manager.get("alice", "a1", "s", None).await.unwrap();
    let two = manager.get("alice", "a2", "s", None).await.unwrap();
    let err = manager.get("alice", "a3", "s", None).await.err().unwrap();
    assert!(
        matches!(err, oxiscope_workspace::Error::TooManyLive { limit: 2 }),
        "{err}"
    );
    assert!(err.to_string().contains("2 workspaces open"), "{err}");
    // A live one is still handed out, and other users are not affected.
    let again = manager.get("alice", "a1", "s2", None).await.unwrap();
    assert!(std::sync::Arc::ptr_eq(&one, &again));
    manager.get("bob", "a3", "s", None).await.unwrap();
    // Many requests at once cannot pass the limit together.
    let agents: Vec<String> = (0..8).map(|i| format!("c{i}")).collect();
    let tries =
        futures_util::future::join_all(agents.iter().map(|a| manager.get("carol", a, "s", None)))
            .await;
    assert_eq!(tries.iter().filter(|r| r.is_ok()).count(), 2);
    drop((one, two, again, tries));
    // Once closed, room is made again.
    manager.close("alice", "a1").await;
    manager.get("alice", "a3", "s", None).await.unwrap();
}
