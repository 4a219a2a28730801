use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_storage::{Cursor, InMemoryBus, MessageBus};
use pretty_assertions::assert_eq;
use serde_json::json;

const TTL: Duration = Duration::from_secs(60);

async fn next_payload(stream: &mut oxiscope_storage::EventStream) -> String {
    let event = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("an event in time")
        .expect("stream open");
    event.payload.to_string()
}

#[tokio::test]
async fn the_lock_has_one_owner_until_released_or_expired() {
    let bus = InMemoryBus::new();
    let lease = bus.try_lock("s", TTL).await.unwrap().unwrap();
    assert!(bus.is_locked("s").await.unwrap());
    assert!(bus.try_lock("s", TTL).await.unwrap().is_none());
    assert!(bus.try_lock("other", TTL).await.unwrap().is_some());

    let mut forged = lease.clone();
    forged.token = "forged".into();
    assert!(!bus.unlock(&forged).await.unwrap());
    assert!(!bus.renew(&forged, TTL).await.unwrap());
    assert!(bus.renew(&lease, TTL).await.unwrap());
    assert!(bus.unlock(&lease).await.unwrap());
    assert!(!bus.is_locked("s").await.unwrap());

    // An expired lease frees the session, and its old token is worthless.
    let short = bus.try_lock("s", Duration::ZERO).await.unwrap().unwrap();
    let next = bus.try_lock("s", TTL).await.unwrap().unwrap();
    assert_ne!(short.token, next.token);
    assert!(!bus.unlock(&short).await.unwrap());
}

#[tokio::test]
async fn a_late_subscriber_gets_the_replay_then_live_events_without_gaps() {
    let bus = InMemoryBus::new();
    bus.begin_run("s").await.unwrap();
    let c1 = bus.publish("s", Arc::from("e1"), 1000).await.unwrap();
    let c2 = bus.publish("s", Arc::from("e2"), 1000).await.unwrap();
    assert!(c1 < c2);
    assert_eq!(bus.last_cursor("s").await.unwrap(), Some(c2));

    let mut all = bus.subscribe("s", None).await.unwrap();
    let mut behind = bus.subscribe("s", Some(c1)).await.unwrap();
    bus.publish("s", Arc::from("e3"), 1000).await.unwrap();
    assert_eq!(next_payload(&mut all).await, "e1");
    assert_eq!(next_payload(&mut all).await, "e2");
    assert_eq!(next_payload(&mut all).await, "e3");
    assert_eq!(next_payload(&mut behind).await, "e2");
    assert_eq!(next_payload(&mut behind).await, "e3");

    // A new run: the same connection carries it; a cursor of the old run
    // replays the whole new run.
    bus.begin_run("s").await.unwrap();
    let n1 = bus.publish("s", Arc::from("n1"), 1000).await.unwrap();
    assert_eq!(next_payload(&mut all).await, "n1");
    assert!(n1 > c2);
    let mut old_cursor = bus.subscribe("s", Some(c2)).await.unwrap();
    assert_eq!(next_payload(&mut old_cursor).await, "n1");
}

#[tokio::test]
async fn a_slow_subscriber_catches_up_from_the_log() {
    let bus = InMemoryBus::new();
    bus.begin_run("s").await.unwrap();
    let mut slow = bus.subscribe("s", None).await.unwrap();
    for i in 0..1000 {
        bus.publish("s", Arc::from(format!("e{i}")), 1000)
            .await
            .unwrap();
    }
    for i in 0..1000 {
        assert_eq!(next_payload(&mut slow).await, format!("e{i}"));
    }
}

#[tokio::test]
async fn the_inbox_queues_inputs_and_wakes_a_worker() {
    let bus = InMemoryBus::new();
    assert!(bus.push_inbox("s", json!({"n": 1}), 8).await.unwrap());
    assert!(bus.push_inbox("s", json!({"n": 2}), 8).await.unwrap());
    assert_eq!(bus.next_wakeup().await.unwrap(), "s");
    assert_eq!(bus.pop_inbox("s").await.unwrap(), Some(json!({"n": 1})));
    assert_eq!(bus.pop_inbox("s").await.unwrap(), Some(json!({"n": 2})));
    assert_eq!(bus.pop_inbox("s").await.unwrap(), None);
    assert_eq!(bus.pop_inbox("empty").await.unwrap(), None);
}

#[test]
fn cursors_render_as_run_dash_seq() {
    let c: Cursor = "7-3".parse().unwrap();
    assert_eq!(c.to_string(), "7-3");
}

#[tokio::test]
async fn a_subscriber_without_a_cursor_starts_after_the_checkpoint_one_with_a_cursor_does_not() {
    let bus = InMemoryBus::new();
    bus.begin_run("s").await.unwrap();
    let c1 = bus.publish("s", Arc::from("e1"), 1000).await.unwrap();
    bus.publish("s", Arc::from("e2"), 1000).await.unwrap();
    bus.checkpoint("s").await.unwrap();
    let c3 = bus.publish("s", Arc::from("end"), 1000).await.unwrap();
    // The cursor the messages page reports is still the last event's.
    assert_eq!(bus.last_cursor("s").await.unwrap(), Some(c3));

    let mut fresh = bus.subscribe("s", None).await.unwrap();
    assert_eq!(next_payload(&mut fresh).await, "end");
    let mut behind = bus.subscribe("s", Some(c1)).await.unwrap();
    assert_eq!(next_payload(&mut behind).await, "e2");
    assert_eq!(next_payload(&mut behind).await, "end");

    // A new run starts without a checkpoint.
    bus.begin_run("s").await.unwrap();
    bus.publish("s", Arc::from("r2"), 1000).await.unwrap();
    let mut second = bus.subscribe("s", None).await.unwrap();
    assert_eq!(next_payload(&mut second).await, "r2");
    bus.publish("s", Arc::from("r2b"), 1000).await.unwrap();
    assert_eq!(next_payload(&mut second).await, "r2b");
}
