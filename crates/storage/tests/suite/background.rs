//! Background tasks: recorded when offloaded, finished once (not after a
//! takeover), heartbeats keep a live owner's tasks, stale ones are taken
//! over by one process only (a running task becomes lost), delivered
//! once, pruned after delivery, and all of it survives reopening.

use oxiscope_storage::{BackgroundTaskRecord, BackgroundTaskState};
use pretty_assertions::assert_eq;

use super::backends::{Site, storage_tests};

storage_tests!(
    a_background_task_finishes_once_and_is_delivered_once,
    stale_tasks_are_taken_over_by_one_process_and_running_ones_are_lost,
);

async fn a_background_task_finishes_once_and_is_delivered_once(site: &Site) {
    let store = site.open().await;
    let task = BackgroundTaskRecord::start("u", "s1", "Bash", "call_1", "boot_a");
    store.create_background_task(&task).await.unwrap();
    let other = BackgroundTaskRecord::start("u", "s2", "Read", "call_9", "boot_a");
    store.create_background_task(&other).await.unwrap();
    assert!(store.create_background_task(&task).await.is_err());

    assert!(
        store
            .finish_background_task(&task.id, BackgroundTaskState::Done, "done\n")
            .await
            .unwrap()
    );
    // A second finish changes nothing.
    assert!(
        !store
            .finish_background_task(&task.id, BackgroundTaskState::Failed, "again")
            .await
            .unwrap()
    );
    drop(store);
    let store = site.open().await;
    let listed = store.list_background_tasks("s1").await.unwrap();
    assert_eq!(listed.len(), 1);
    let got = &listed[0];
    assert_eq!(got.state, BackgroundTaskState::Done);
    assert_eq!(got.result.as_deref(), Some("done\n"));
    assert_eq!(got.tool_name, "Bash");
    assert_eq!(got.tool_call_id, "call_1");
    assert!(got.finished_at.is_some());
    assert_eq!(got.delivered_at, None);

    assert!(
        store
            .mark_background_task_delivered(&task.id)
            .await
            .unwrap()
    );
    assert!(
        !store
            .mark_background_task_delivered(&task.id)
            .await
            .unwrap()
    );
    // Heartbeats touch the owner's undelivered tasks only.
    assert_eq!(
        store
            .heartbeat_background_tasks("boot_a", 42)
            .await
            .unwrap(),
        1
    );
    // Pruning drops delivered tasks older than the cut only.
    assert_eq!(
        store
            .prune_background_tasks("2000-01-01T00:00:00")
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        store
            .prune_background_tasks("9999-01-01T00:00:00")
            .await
            .unwrap(),
        1
    );
    assert_eq!(store.list_background_tasks("s1").await.unwrap(), Vec::new());
    assert_eq!(store.list_background_tasks("s2").await.unwrap().len(), 1);
}

async fn stale_tasks_are_taken_over_by_one_process_and_running_ones_are_lost(site: &Site) {
    let store = site.open().await;
    let mut running = BackgroundTaskRecord::start("u", "s", "Bash", "call_1", "dead");
    running.heartbeat_at = 1_000;
    store.create_background_task(&running).await.unwrap();
    let mut finished = BackgroundTaskRecord::start("u", "s", "Bash", "call_2", "dead");
    finished.heartbeat_at = 1_000;
    store.create_background_task(&finished).await.unwrap();
    store
        .finish_background_task(&finished.id, BackgroundTaskState::Failed, "exit 1")
        .await
        .unwrap();
    let mut alive = BackgroundTaskRecord::start("u", "s", "Bash", "call_3", "alive");
    alive.heartbeat_at = 5_000;
    store.create_background_task(&alive).await.unwrap();

    // Stale: older than 2 000, not our own.
    let stale = store.stale_background_tasks("me", 2_000, 10).await.unwrap();
    let ids: Vec<&str> = stale.iter().map(|t| t.tool_call_id.as_str()).collect();
    assert_eq!(ids, ["call_1", "call_2"]);
    assert_eq!(
        store
            .stale_background_tasks("me", 2_000, 1)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store
            .stale_background_tasks("dead", 2_000, 10)
            .await
            .unwrap(),
        Vec::new()
    );

    // One claimer wins each task.
    assert!(
        store
            .claim_background_task(&stale[0], "me", 9_000)
            .await
            .unwrap()
    );
    assert!(
        !store
            .claim_background_task(&stale[0], "rival", 9_000)
            .await
            .unwrap()
    );
    assert!(
        store
            .claim_background_task(&stale[1], "me", 9_000)
            .await
            .unwrap()
    );
    // The dead owner's late finish does not overwrite the lost task.
    assert!(
        !store
            .finish_background_task(&running.id, BackgroundTaskState::Done, "late")
            .await
            .unwrap()
    );
    let all = store.list_background_tasks("s").await.unwrap();
    let states: Vec<(&str, BackgroundTaskState, &str)> = all
        .iter()
        .map(|t| (t.tool_call_id.as_str(), t.state, t.owner.as_str()))
        .collect();
    assert_eq!(
        states,
        [
            ("call_1", BackgroundTaskState::Lost, "me"),
            ("call_2", BackgroundTaskState::Failed, "me"),
            ("call_3", BackgroundTaskState::Running, "alive"),
        ]
    );
    assert!(all[0].finished_at.is_some());
    assert_eq!(all[0].result, None);
    assert_eq!(all[1].result.as_deref(), Some("exit 1"));
    assert_eq!(all[0].heartbeat_at, 9_000);
}
