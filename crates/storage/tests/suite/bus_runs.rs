//! The open-run registry a surviving replica reads to end runs whose
//! runner died, on every backend.

use std::time::Duration;

use oxiscope_storage::MessageBus;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::suite::bus_backend::{TestBus, on_every_bus};

on_every_bus!(
    an_open_run_is_listed_until_closed_and_shared_by_every_handle,
    a_forgotten_session_leaves_no_open_run,
    an_orphaned_run_is_found_unlocked_once_its_lease_expires,
);

/// Another replica's handle on a Redis bus; `None` in process (the bus
/// itself is the only handle).
async fn other_replica(bus: &TestBus) -> Option<TestBus> {
    match bus.server_url() {
        Some(_) => Some(bus.replica().await),
        None => None,
    }
}

async fn sorted_runs(bus: &TestBus) -> Vec<(String, serde_json::Value)> {
    let mut runs = bus.open_runs().await.unwrap();
    runs.sort_by(|a, b| a.0.cmp(&b.0));
    runs
}

async fn an_open_run_is_listed_until_closed_and_shared_by_every_handle(bus: TestBus) {
    assert_eq!(sorted_runs(&bus).await, Vec::new());
    bus.open_run("s1", json!({"reply_id": "r1"})).await.unwrap();
    bus.open_run("s2", json!({"reply_id": "r2"})).await.unwrap();
    // A later reply of the same session replaces its record.
    bus.open_run("s1", json!({"reply_id": "r3"})).await.unwrap();
    assert_eq!(
        sorted_runs(&bus).await,
        vec![
            ("s1".to_owned(), json!({"reply_id": "r3"})),
            ("s2".to_owned(), json!({"reply_id": "r2"})),
        ]
    );
    // Another handle on the same backend (another replica) sees them.
    let other = other_replica(&bus).await;
    let other: &dyn MessageBus = other.as_deref().unwrap_or(&*bus);
    assert_eq!(other.open_runs().await.unwrap().len(), 2);
    // One session's record is read without listing them all.
    assert_eq!(
        other.open_run_info("s1").await.unwrap(),
        Some(json!({"reply_id": "r3"}))
    );
    assert_eq!(other.open_run_info("s9").await.unwrap(), None);
    assert!(other.close_run("s1").await.unwrap());
    assert_eq!(bus.open_run_info("s1").await.unwrap(), None);
    assert!(!bus.close_run("s1").await.unwrap());
    assert_eq!(
        sorted_runs(&bus).await,
        vec![("s2".to_owned(), json!({"reply_id": "r2"}))]
    );
}

async fn a_forgotten_session_leaves_no_open_run(bus: TestBus) {
    bus.open_run("gone", json!({"reply_id": "r"}))
        .await
        .unwrap();
    bus.open_run("kept", json!({"reply_id": "k"}))
        .await
        .unwrap();
    bus.forget_session("gone").await.unwrap();
    assert_eq!(
        sorted_runs(&bus).await,
        vec![("kept".to_owned(), json!({"reply_id": "k"}))]
    );
}

async fn an_orphaned_run_is_found_unlocked_once_its_lease_expires(bus: TestBus) {
    let lease = bus
        .try_lock("s", Duration::from_millis(100))
        .await
        .unwrap()
        .unwrap();
    bus.begin_run("s").await.unwrap();
    bus.open_run("s", json!({"reply_id": "r"})).await.unwrap();
    // The runner dies: nobody renews. While the lease lives the run is
    // not an orphan.
    assert!(bus.is_locked("s").await.unwrap());
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(!bus.is_locked("s").await.unwrap());
    let survivor = other_replica(&bus).await;
    let survivor: &dyn MessageBus = survivor.as_deref().unwrap_or(&*bus);
    let taken = survivor
        .try_lock("s", Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(survivor.open_runs().await.unwrap().len(), 1);
    assert!(survivor.close_run("s").await.unwrap());
    // The dead runner's lease is worthless now.
    assert!(!bus.renew(&lease, Duration::from_secs(60)).await.unwrap());
    assert!(survivor.unlock(&taken).await.unwrap());
}
