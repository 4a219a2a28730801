//! The bus contract, run on every backend (`memory::*`, `redis::*`).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_storage::{Cursor, Release};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::suite::bus_backend::{TestBus, on_every_bus};

const TTL: Duration = Duration::from_secs(60);

on_every_bus!(
    the_lock_has_one_owner_until_released_or_expired,
    a_late_subscriber_gets_the_replay_then_live_events_without_gaps,
    a_slow_subscriber_catches_up_from_the_log,
    the_inbox_queues_inputs_and_wakes_a_worker,
    a_subscriber_without_a_cursor_starts_after_the_checkpoint_one_with_a_cursor_does_not,
    sessions_do_not_see_each_others_events,
);

async fn next_payload(stream: &mut oxiscope_storage::EventStream) -> String {
    let event = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("an event in time")
        .expect("stream open");
    event.payload.to_string()
}

async fn the_lock_has_one_owner_until_released_or_expired(bus: TestBus) {
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

    // A lease that ran out still renews while nobody took the lock.
    let late = bus
        .try_lock("late", Duration::from_millis(50))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert!(!bus.is_locked("late").await.unwrap());
    assert!(bus.renew(&late, TTL).await.unwrap());
    assert!(bus.is_locked("late").await.unwrap());
    assert!(bus.try_lock("late", TTL).await.unwrap().is_none());
    assert_eq!(bus.release(&late).await.unwrap(), Release::Released);

    // A lease that is not renewed runs out; once taken by another, it
    // cannot be renewed.
    let brief = bus
        .try_lock("brief", Duration::from_millis(50))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert!(!bus.is_locked("brief").await.unwrap());
    let taker = bus.try_lock("brief", TTL).await.unwrap().unwrap();
    assert!(!bus.renew(&brief, TTL).await.unwrap());
    assert!(bus.renew(&taker, TTL).await.unwrap());
}

async fn a_late_subscriber_gets_the_replay_then_live_events_without_gaps(bus: TestBus) {
    bus.begin_run("s").await.unwrap();
    let c1 = bus.publish("s", Arc::from("e1"), 1000).await.unwrap();
    let c2 = bus.publish("s", Arc::from("e2"), 1000).await.unwrap();
    assert!(c1 < c2);
    assert_eq!(c2.seq, c1.seq + 1);
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
    assert_eq!(n1.seq, 1);
    let mut old_cursor = bus.subscribe("s", Some(c2)).await.unwrap();
    assert_eq!(next_payload(&mut old_cursor).await, "n1");
    // A cursor from beyond the current run: nothing to replay.
    let ahead = Cursor {
        run: n1.run + 1,
        seq: 1,
    };
    let mut future = bus.subscribe("s", Some(ahead)).await.unwrap();
    let nothing = tokio::time::timeout(Duration::from_millis(50), future.next()).await;
    assert!(nothing.is_err(), "nothing replays: {nothing:?}");
}

async fn a_slow_subscriber_catches_up_from_the_log(bus: TestBus) {
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

async fn the_inbox_queues_inputs_and_wakes_a_worker(bus: TestBus) {
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

async fn a_subscriber_without_a_cursor_starts_after_the_checkpoint_one_with_a_cursor_does_not(
    bus: TestBus,
) {
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

async fn sessions_do_not_see_each_others_events(bus: TestBus) {
    bus.begin_run("a").await.unwrap();
    bus.begin_run("a:b").await.unwrap();
    let mut a = bus.subscribe("a", None).await.unwrap();
    let mut ab = bus.subscribe("a:b", None).await.unwrap();
    bus.publish("a:b", Arc::from("for a:b"), 10).await.unwrap();
    bus.publish("a", Arc::from("for a"), 10).await.unwrap();
    assert_eq!(next_payload(&mut a).await, "for a");
    assert_eq!(next_payload(&mut ab).await, "for a:b");
    // Payloads are carried byte for byte, spaces and newlines included.
    let odd = "! 1 {\"x\": \"y z\"}\n\u{e9}";
    bus.publish("a", Arc::from(odd), 10).await.unwrap();
    assert_eq!(next_payload(&mut a).await, odd);
}
