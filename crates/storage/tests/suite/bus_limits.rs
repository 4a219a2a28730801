//! What a bus keeps is bounded: replay logs, inboxes, wakeups, idle
//! sessions; and a forgotten session leaves nothing behind. Run on every
//! backend (`memory::*`, `redis::*`).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_storage::{Cursor, EventStream, Release, Retained};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::suite::bus_backend::{TestBus, on_every_bus, with_log_bytes, with_retention};

on_every_bus!(
    the_replay_log_keeps_the_last_events_and_a_stale_cursor_gets_the_retained_suffix,
    a_subscriber_that_falls_behind_a_trimmed_log_resumes_from_what_is_retained,
    a_zero_replay_limit_keeps_no_log_but_still_fans_out,
    the_inbox_refuses_inputs_beyond_its_limit,
    wakeups_are_pending_only_while_their_session_has_queued_input,
    release_refuses_while_input_is_queued,
    forgetting_a_session_drops_its_state_and_ends_its_streams,
    read_only_calls_and_empty_slots_leave_nothing_behind,
);

const TTL: Duration = Duration::from_secs(60);

async fn next(stream: &mut EventStream) -> (Cursor, String) {
    let event = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("an event in time")
        .expect("stream open");
    (event.cursor, event.payload.to_string())
}

async fn publish(bus: &TestBus, session: &str, payload: &str, limit: usize) -> Cursor {
    bus.publish(session, Arc::from(payload), limit)
        .await
        .unwrap()
}

/// One run of `session`, `events` events, then the lock released.
async fn finished_run(bus: &TestBus, session: &str, events: usize) {
    let lease = bus.try_lock(session, TTL).await.unwrap().unwrap();
    bus.begin_run(session).await.unwrap();
    for i in 0..events {
        publish(bus, session, &format!("e{i}"), 100).await;
    }
    assert_eq!(bus.release(&lease).await.unwrap(), Release::Released);
}

async fn the_replay_log_keeps_the_last_events_and_a_stale_cursor_gets_the_retained_suffix(
    bus: TestBus,
) {
    bus.begin_run("s").await.unwrap();
    let mut cursors = Vec::new();
    for i in 1..=5 {
        cursors.push(publish(&bus, "s", &format!("e{i}"), 3).await);
    }
    assert_eq!(bus.retained().await.events, 3);
    assert_eq!(bus.last_cursor("s").await.unwrap(), Some(cursors[4]));

    // No cursor: the retained log.
    let mut all = bus.subscribe("s", None).await.unwrap();
    assert_eq!(next(&mut all).await, (cursors[2], "e3".to_owned()));
    // A cursor that fell off: the same whole retained log; the jump from
    // seq 1 to seq 3 tells the subscriber events were skipped.
    let mut stale = bus.subscribe("s", Some(cursors[0])).await.unwrap();
    assert_eq!(next(&mut stale).await, (cursors[2], "e3".to_owned()));
    assert_eq!(cursors[2].seq, cursors[0].seq + 2);
    // A cursor still in the log: exactly what follows it.
    let mut behind = bus.subscribe("s", Some(cursors[3])).await.unwrap();
    assert_eq!(next(&mut behind).await.1, "e5");

    let c6 = publish(&bus, "s", "e6", 3).await;
    for stream in [&mut all, &mut stale] {
        assert_eq!(next(stream).await.1, "e4");
        assert_eq!(next(stream).await.1, "e5");
        assert_eq!(next(stream).await, (c6, "e6".to_owned()));
    }
    assert_eq!(next(&mut behind).await, (c6, "e6".to_owned()));
}

async fn a_subscriber_that_falls_behind_a_trimmed_log_resumes_from_what_is_retained(bus: TestBus) {
    bus.begin_run("s").await.unwrap();
    let mut slow = bus.subscribe("s", None).await.unwrap();
    for i in 0..1000 {
        publish(&bus, "s", &format!("e{i}"), 100).await;
    }
    let mut got = Vec::new();
    loop {
        let (cursor, payload) = next(&mut slow).await;
        got.push((cursor.seq, payload));
        if cursor.seq == 1000 {
            break;
        }
    }
    // In order, without duplicates, and the last 100 (the retained log)
    // without a hole.
    assert!(got.windows(2).all(|w| w[0].0 < w[1].0));
    let tail: Vec<u64> = got[got.len() - 100..].iter().map(|(s, _)| *s).collect();
    assert_eq!(tail, (901..=1000).collect::<Vec<_>>());
    assert_eq!(got.last().unwrap().1, "e999");
}

async fn a_zero_replay_limit_keeps_no_log_but_still_fans_out(bus: TestBus) {
    let lease = bus.try_lock("s", TTL).await.unwrap().unwrap();
    bus.begin_run("s").await.unwrap();
    let mut live = bus.subscribe("s", None).await.unwrap();
    publish(&bus, "s", "e1", 0).await;
    assert_eq!(next(&mut live).await.1, "e1");
    assert_eq!(bus.retained().await.events, 0);
    assert_eq!(bus.last_cursor("s").await.unwrap(), None);
    drop(live);
    bus.unlock(&lease).await.unwrap();
    assert_eq!(bus.retained().await, Retained::default());
}

async fn the_inbox_refuses_inputs_beyond_its_limit(bus: TestBus) {
    assert!(bus.push_inbox("s", json!(1), 2).await.unwrap());
    assert!(bus.push_inbox("s", json!(2), 2).await.unwrap());
    assert!(!bus.push_inbox("s", json!(3), 2).await.unwrap());
    assert_eq!(bus.retained().await.inputs, 2);
    assert_eq!(bus.pop_inbox("s").await.unwrap(), Some(json!(1)));
    assert!(bus.push_inbox("s", json!(4), 2).await.unwrap());
    assert_eq!(bus.pop_inbox("s").await.unwrap(), Some(json!(2)));
    assert_eq!(bus.pop_inbox("s").await.unwrap(), Some(json!(4)));
    assert_eq!(bus.pop_inbox("s").await.unwrap(), None);
    assert_eq!(bus.retained().await, Retained::default());
}

/// The wakeup leak: every push used to leave a wakeup in an unbounded
/// channel nobody drained.
async fn wakeups_are_pending_only_while_their_session_has_queued_input(bus: TestBus) {
    for i in 0..1000 {
        let session = format!("s{}", i % 10);
        assert!(bus.push_inbox(&session, json!(i), 8).await.unwrap());
        assert!(bus.pop_inbox(&session).await.unwrap().is_some());
    }
    assert_eq!(bus.retained().await, Retained::default());

    // One wakeup per session however many inputs wait; a drained session's
    // wakeup is withdrawn, so a worker is only woken for real work.
    for n in 0..3 {
        bus.push_inbox("a", json!(n), 8).await.unwrap();
    }
    bus.push_inbox("drained", json!(0), 8).await.unwrap();
    bus.pop_inbox("drained").await.unwrap();
    bus.push_inbox("b", json!(0), 8).await.unwrap();
    assert_eq!(bus.retained().await.wakeups, 2);
    assert_eq!(bus.next_wakeup().await.unwrap(), "a");
    assert_eq!(bus.next_wakeup().await.unwrap(), "b");
    assert_eq!(bus.retained().await.wakeups, 0);
    let waiting = tokio::time::timeout(Duration::from_millis(50), bus.next_wakeup()).await;
    assert!(waiting.is_err(), "no wakeup is left: {waiting:?}");

    // A worker already waiting is woken by the next push.
    let worker = tokio::spawn({
        let bus = bus.bus.clone();
        async move { bus.next_wakeup().await.unwrap() }
    });
    tokio::task::yield_now().await;
    bus.push_inbox("c", json!(0), 8).await.unwrap();
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(5), worker)
            .await
            .unwrap()
            .unwrap(),
        "c"
    );
}

async fn release_refuses_while_input_is_queued(bus: TestBus) {
    let lease = bus.try_lock("s", TTL).await.unwrap().unwrap();
    bus.push_inbox("s", json!("late"), 8).await.unwrap();
    assert_eq!(bus.release(&lease).await.unwrap(), Release::InboxPending);
    assert!(bus.is_locked("s").await.unwrap());
    assert_eq!(bus.pop_inbox("s").await.unwrap(), Some(json!("late")));
    assert_eq!(bus.release(&lease).await.unwrap(), Release::Released);
    assert!(!bus.is_locked("s").await.unwrap());
    assert_eq!(bus.release(&lease).await.unwrap(), Release::NotHeld);
    // `unlock` lets go whatever is queued.
    let lease = bus.try_lock("s", TTL).await.unwrap().unwrap();
    bus.push_inbox("s", json!("kept"), 8).await.unwrap();
    assert!(bus.unlock(&lease).await.unwrap());
    assert_eq!(bus.retained().await.inputs, 1);
}

async fn forgetting_a_session_drops_its_state_and_ends_its_streams(bus: TestBus) {
    finished_run(&bus, "other", 1).await;
    let other = bus.retained().await;
    let lease = bus.try_lock("s", TTL).await.unwrap().unwrap();
    bus.begin_run("s").await.unwrap();
    let c1 = publish(&bus, "s", "e1", 100).await;
    bus.push_inbox("s", json!("queued"), 8).await.unwrap();
    let mut stream = bus.subscribe("s", None).await.unwrap();
    assert_eq!(next(&mut stream).await.1, "e1");

    bus.forget_session("s").await.unwrap();
    assert_eq!(bus.retained().await, other);
    let end = tokio::time::timeout(Duration::from_secs(5), stream.next()).await;
    assert_eq!(end.unwrap(), None);
    assert!(!bus.is_locked("s").await.unwrap());
    assert_eq!(bus.pop_inbox("s").await.unwrap(), None);
    assert_eq!(bus.release(&lease).await.unwrap(), Release::NotHeld);
    drop(stream);
    assert_eq!(bus.retained().await, other);

    // A cursor of the forgotten run still counts as older than the next
    // run's events.
    let mut resumed = bus.subscribe("s", Some(c1)).await.unwrap();
    let lease = bus.try_lock("s", TTL).await.unwrap().unwrap();
    bus.begin_run("s").await.unwrap();
    let n1 = publish(&bus, "s", "n1", 100).await;
    assert!(n1 > c1);
    assert_eq!(next(&mut resumed).await, (n1, "n1".to_owned()));
    assert_eq!(bus.release(&lease).await.unwrap(), Release::Released);
}

#[tokio::test]
async fn idle_logs_are_kept_up_to_a_count_least_recently_idle_first() {
    idle_logs_are_kept_up_to_a_count_on(false).await;
}

#[tokio::test]
async fn idle_redis_logs_are_kept_up_to_a_count_least_recently_idle_first() {
    idle_logs_are_kept_up_to_a_count_on(true).await;
}

async fn idle_logs_are_kept_up_to_a_count_on(redis: bool) {
    let Some(bus) = with_retention(redis, 2, Duration::from_secs(3600)).await else {
        return;
    };
    for s in ["s1", "s2", "s3"] {
        finished_run(&bus, s, 4).await;
    }
    assert_eq!(bus.retained().await.sessions, 2);
    assert_eq!(bus.retained().await.events, 8);
    assert_eq!(bus.last_cursor("s1").await.unwrap(), None);
    assert!(bus.last_cursor("s2").await.unwrap().is_some());

    // A running session's log is not idle, however many are.
    let lease = bus.try_lock("busy", TTL).await.unwrap().unwrap();
    bus.begin_run("busy").await.unwrap();
    publish(&bus, "busy", "e", 100).await;
    finished_run(&bus, "s4", 1).await;
    finished_run(&bus, "s5", 1).await;
    assert!(bus.last_cursor("busy").await.unwrap().is_some());
    assert_eq!(bus.last_cursor("s3").await.unwrap(), None);
    // Let go, it is the most recently idle.
    assert_eq!(bus.release(&lease).await.unwrap(), Release::Released);
    finished_run(&bus, "s6", 1).await;
    assert!(bus.last_cursor("busy").await.unwrap().is_some());
    assert!(bus.last_cursor("s6").await.unwrap().is_some());
    assert_eq!(bus.last_cursor("s5").await.unwrap(), None);
    assert_eq!(bus.retained().await.sessions, 2);

    // In process, a subscriber keeps a log too (a Redis replica does not
    // know the others' subscribers).
    if !redis {
        let watching = bus.subscribe("busy", None).await.unwrap();
        finished_run(&bus, "s7", 1).await;
        finished_run(&bus, "s8", 1).await;
        assert!(bus.last_cursor("busy").await.unwrap().is_some());
        assert_eq!(bus.last_cursor("s6").await.unwrap(), None);
        drop(watching);
        finished_run(&bus, "s9", 1).await;
        assert!(bus.last_cursor("busy").await.unwrap().is_some());
        assert!(bus.last_cursor("s9").await.unwrap().is_some());
        assert_eq!(bus.retained().await.sessions, 2);
    }
}

#[tokio::test]
async fn an_idle_log_is_dropped_once_its_ttl_passes() {
    an_idle_log_is_dropped_once_its_ttl_passes_on(false).await;
}

#[tokio::test]
async fn an_idle_redis_log_is_dropped_once_its_ttl_passes() {
    an_idle_log_is_dropped_once_its_ttl_passes_on(true).await;
}

async fn an_idle_log_is_dropped_once_its_ttl_passes_on(redis: bool) {
    // Redis counts with a round trip per step: a TTL the steps fit in.
    let ttl = Duration::from_millis(if redis { 1000 } else { 50 });
    let Some(bus) = with_retention(redis, 100, ttl).await else {
        return;
    };
    finished_run(&bus, "s", 3).await;
    assert_eq!(bus.retained().await.events, 3);
    // A running session's log is not idle, however old.
    let lease = bus.try_lock("busy", TTL).await.unwrap().unwrap();
    bus.begin_run("busy").await.unwrap();
    publish(&bus, "busy", "e", 100).await;
    tokio::time::sleep(ttl + Duration::from_millis(10)).await;
    assert_eq!(bus.retained().await.sessions, 1);
    assert_eq!(bus.last_cursor("s").await.unwrap(), None);
    assert!(bus.last_cursor("busy").await.unwrap().is_some());
    bus.release(&lease).await.unwrap();
}

async fn read_only_calls_and_empty_slots_leave_nothing_behind(bus: TestBus) {
    assert!(!bus.is_locked("a").await.unwrap());
    assert_eq!(bus.last_cursor("b").await.unwrap(), None);
    assert_eq!(bus.pop_inbox("c").await.unwrap(), None);
    // A lock taken and let go before any event, a subscriber that leaves
    // before any run: nothing to keep.
    let lease = bus.try_lock("d", TTL).await.unwrap().unwrap();
    assert!(bus.unlock(&lease).await.unwrap());
    drop(bus.subscribe("e", None).await.unwrap());
    assert_eq!(bus.retained().await, Retained::default());
}

#[tokio::test]
async fn the_replay_log_keeps_a_byte_budget_oldest_first() {
    the_replay_log_keeps_a_byte_budget_on(false).await;
}

#[tokio::test]
async fn the_redis_replay_log_keeps_a_byte_budget_oldest_first() {
    the_replay_log_keeps_a_byte_budget_on(true).await;
}

async fn the_replay_log_keeps_a_byte_budget_on(redis: bool) {
    let Some(bus) = with_log_bytes(redis, 250).await else {
        return;
    };
    bus.begin_run("s").await.unwrap();
    // Ten events of 100 bytes, far below the count limit: two fit.
    let mut cursors = Vec::new();
    for i in 0..10 {
        let payload = format!("{i}{}", "x".repeat(99));
        cursors.push(publish(&bus, "s", &payload, 1000).await);
    }
    let kept = bus.retained().await;
    assert_eq!((kept.events, kept.bytes), (2, 200));
    assert_eq!(bus.last_cursor("s").await.unwrap(), Some(cursors[9]));
    // A cursor whose next events left the log gets the retained suffix,
    // as one trimmed by count does.
    let mut stale = bus.subscribe("s", Some(cursors[0])).await.unwrap();
    let (first, payload) = next(&mut stale).await;
    assert_eq!(first, cursors[8]);
    assert!(payload.starts_with('8'));
    assert_eq!(next(&mut stale).await.0, cursors[9]);

    // An event larger than the budget stays alone (the newest always
    // stays), and the next one pushes it out.
    let big = publish(&bus, "s", &"b".repeat(1000), 1000).await;
    let kept = bus.retained().await;
    assert_eq!((kept.events, kept.bytes), (1, 1000));
    assert_eq!(bus.last_cursor("s").await.unwrap(), Some(big));
    publish(&bus, "s", "small", 1000).await;
    let kept = bus.retained().await;
    assert_eq!((kept.events, kept.bytes), (1, 5));

    // A new run starts with an empty budget.
    bus.begin_run("s").await.unwrap();
    publish(&bus, "s", &"c".repeat(200), 1000).await;
    assert_eq!(bus.retained().await.bytes, 200);
}
