//! The Redis bus across replicas: two `RedisBus` instances on one Redis
//! server stand for two `oxiscope serve` processes.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_storage::{Error, EventStream, MessageBus, RedisBus, RedisBusOptions, Release};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::suite::bus_backend::TestBus;

const TTL: Duration = Duration::from_secs(60);

async fn next(stream: &mut EventStream) -> String {
    let event = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("an event in time")
        .expect("stream open");
    event.payload.to_string()
}

/// Two replicas of one deployment; `None` when skipped.
async fn replicas() -> Option<(TestBus, TestBus)> {
    let a = TestBus::redis().await?;
    let b = a.replica().await;
    Some((a, b))
}

#[tokio::test]
async fn a_run_on_one_replica_reaches_subscribers_on_another_and_resumes_after_a_cursor() {
    let Some((a, b)) = replicas().await else {
        return;
    };
    let lease = a.try_lock("s", TTL).await.unwrap().unwrap();
    a.begin_run("s").await.unwrap();
    let c1 = a.publish("s", Arc::from("e1"), 100).await.unwrap();
    let mut live = b.subscribe("s", None).await.unwrap();
    assert_eq!(next(&mut live).await, "e1");
    let c2 = a.publish("s", Arc::from("e2"), 100).await.unwrap();
    a.publish("s", Arc::from("e3"), 100).await.unwrap();
    assert_eq!(next(&mut live).await, "e2");
    assert_eq!(next(&mut live).await, "e3");
    assert_eq!(
        b.last_cursor("s").await.unwrap(),
        a.last_cursor("s").await.unwrap()
    );

    // A client that saw e1 on B reconnects to... B again, after `c1`.
    let mut resumed = b.subscribe("s", Some(c1)).await.unwrap();
    assert_eq!(next(&mut resumed).await, "e2");
    assert_eq!(next(&mut resumed).await, "e3");
    // Cursors are the same on every replica.
    let mut from_c2 = a.subscribe("s", Some(c2)).await.unwrap();
    assert_eq!(next(&mut from_c2).await, "e3");

    // The next run, started on B, reaches the subscriber on B and A.
    assert_eq!(a.release(&lease).await.unwrap(), Release::Released);
    let lease = b.try_lock("s", TTL).await.unwrap().unwrap();
    b.begin_run("s").await.unwrap();
    b.publish("s", Arc::from("n1"), 100).await.unwrap();
    assert_eq!(next(&mut live).await, "n1");
    assert_eq!(next(&mut from_c2).await, "n1");
    assert_eq!(b.release(&lease).await.unwrap(), Release::Released);
}

#[tokio::test]
async fn a_lock_held_on_one_replica_blocks_the_other_until_it_expires() {
    let Some((a, b)) = replicas().await else {
        return;
    };
    // Margins wide enough for a loaded machine.
    let short = Duration::from_secs(1);
    let lease = a.try_lock("s", short).await.unwrap().unwrap();
    assert!(b.is_locked("s").await.unwrap());
    assert!(b.try_lock("s", TTL).await.unwrap().is_none());
    // B cannot release or renew A's lease with a guessed token.
    let mut forged = lease.clone();
    forged.token = "guess".into();
    assert_eq!(b.release(&forged).await.unwrap(), Release::NotHeld);
    // Renewed, it outlives its first TTL.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(a.renew(&lease, short).await.unwrap());
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(b.try_lock("s", TTL).await.unwrap().is_none());
    // Not renewed, it expires and B takes the session.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let taken = b.try_lock("s", TTL).await.unwrap().unwrap();
    assert!(!a.renew(&lease, TTL).await.unwrap());
    assert_eq!(a.release(&lease).await.unwrap(), Release::NotHeld);
    assert!(b.unlock(&taken).await.unwrap());
}

#[tokio::test]
async fn an_input_queued_on_one_replica_holds_the_lock_on_the_other() {
    let Some((a, b)) = replicas().await else {
        return;
    };
    let lease = a.try_lock("s", TTL).await.unwrap().unwrap();
    assert!(b.push_inbox("s", json!("late"), 8).await.unwrap());
    assert_eq!(a.release(&lease).await.unwrap(), Release::InboxPending);
    assert_eq!(a.pop_inbox("s").await.unwrap(), Some(json!("late")));
    assert_eq!(a.release(&lease).await.unwrap(), Release::Released);
    assert!(!b.is_locked("s").await.unwrap());
}

#[tokio::test]
async fn a_wakeup_pushed_on_one_replica_is_taken_by_exactly_one_waiter() {
    let Some((a, b)) = replicas().await else {
        return;
    };
    let waiters: Vec<_> = [&a, &b, &a, &b]
        .into_iter()
        .map(|bus| {
            let bus = Arc::clone(&bus.bus);
            tokio::spawn(async move { bus.next_wakeup().await.unwrap() })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // (A second input of a session whose wakeup was already taken posts
    // a new wakeup, so each session gets one input here.)
    a.push_inbox("one", json!(1), 8).await.unwrap();
    b.push_inbox("two", json!(1), 8).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while waiters.iter().filter(|w| w.is_finished()).count() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "the wakeups arrive");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Time for a wrongly doubled wakeup to show.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (done, waiting): (Vec<_>, Vec<_>) = waiters.into_iter().partition(|w| w.is_finished());
    assert_eq!(done.len(), 2, "one waiter per session with input");
    let mut woken = HashSet::new();
    for waiter in done {
        woken.insert(waiter.await.unwrap());
    }
    assert_eq!(woken, HashSet::from(["one".to_owned(), "two".to_owned()]));
    assert_eq!(a.retained().await.wakeups, 0);
    for waiter in waiting {
        waiter.abort();
    }
}

#[tokio::test]
async fn a_cancelled_wait_for_a_wakeup_loses_none() {
    let Some(bus) = TestBus::redis().await else {
        return;
    };
    let mut expected = HashSet::new();
    let mut got = HashSet::new();
    for i in 0..40_u64 {
        let session = format!("s{i}");
        bus.push_inbox(&session, json!(i), 8).await.unwrap();
        expected.insert(session);
        // Give up at different points of the round trip.
        let patience = Duration::from_micros(50 * (i % 8));
        if let Ok(taken) = tokio::time::timeout(patience, bus.next_wakeup()).await {
            got.insert(taken.unwrap());
        }
    }
    // A wakeup put back by a cancelled wait may come late: wait for it.
    while got.len() < expected.len() {
        let taken = tokio::time::timeout(Duration::from_secs(5), bus.next_wakeup())
            .await
            .expect("every wakeup is still there")
            .unwrap();
        assert!(got.insert(taken), "a wakeup came twice");
    }
    assert_eq!(got, expected);
}

#[tokio::test]
async fn forgetting_a_session_on_one_replica_ends_streams_on_the_other() {
    let Some((a, b)) = replicas().await else {
        return;
    };
    a.begin_run("s").await.unwrap();
    a.publish("s", Arc::from("e1"), 100).await.unwrap();
    let mut on_b = b.subscribe("s", None).await.unwrap();
    let mut other = b.subscribe("other", None).await.unwrap();
    assert_eq!(next(&mut on_b).await, "e1");
    a.forget_session("s").await.unwrap();
    let end = tokio::time::timeout(Duration::from_secs(5), on_b.next()).await;
    assert_eq!(end.unwrap(), None);
    // Another session's subscriber is untouched.
    a.publish("other", Arc::from("still here"), 100)
        .await
        .unwrap();
    assert_eq!(next(&mut other).await, "still here");
    // A subscription after the forget follows the next run.
    let mut again = b.subscribe("s", None).await.unwrap();
    a.begin_run("s").await.unwrap();
    a.publish("s", Arc::from("n1"), 100).await.unwrap();
    assert_eq!(next(&mut again).await, "n1");
}

#[tokio::test]
async fn deployments_with_different_prefixes_share_a_server_without_meeting() {
    let Some(a) = TestBus::redis().await else {
        return;
    };
    let other = a.neighbour("elsewhere:").await;
    let lease = a.try_lock("s", TTL).await.unwrap().unwrap();
    assert!(!other.is_locked("s").await.unwrap());
    assert!(other.try_lock("s", TTL).await.unwrap().is_some());
    a.push_inbox("s", json!(1), 8).await.unwrap();
    assert_eq!(other.pop_inbox("s").await.unwrap(), None);
    a.begin_run("s").await.unwrap();
    a.publish("s", Arc::from("e1"), 100).await.unwrap();
    assert_eq!(other.last_cursor("s").await.unwrap(), None);
    assert!(a.unlock(&lease).await.unwrap());
}

#[tokio::test]
async fn when_redis_goes_away_calls_fail_live_streams_end_and_it_reconnects() {
    let Some(bus) = TestBus::redis().await else {
        return;
    };
    bus.begin_run("s").await.unwrap();
    let mut stream = bus.subscribe("s", None).await.unwrap();
    let (bus, server) = bus.into_server().unwrap();
    let mut server = Arc::into_inner(server).expect("the only handle");
    server.stop();
    let end = tokio::time::timeout(Duration::from_secs(10), stream.next()).await;
    assert_eq!(end.expect("the stream ends rather than hangs"), None);
    let failed = tokio::time::timeout(Duration::from_secs(30), bus.try_lock("s", TTL))
        .await
        .expect("a failure in time");
    assert!(matches!(failed, Err(Error::Redis(_))), "{failed:?}");
    let failed = tokio::time::timeout(Duration::from_secs(30), bus.subscribe("s", None))
        .await
        .expect("a failure in time");
    assert!(matches!(failed, Err(Error::Redis(_))));

    // Back again (empty): the bus reconnects by itself.
    server.restart();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let lease = loop {
        match bus.try_lock("s", TTL).await {
            Ok(lease) => break lease.expect("a fresh server holds no lock"),
            Err(e) => assert!(tokio::time::Instant::now() < deadline, "no reconnect: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut stream = bus.subscribe("s", None).await.unwrap();
    bus.begin_run("s").await.unwrap();
    bus.publish("s", Arc::from("after the outage"), 10)
        .await
        .unwrap();
    assert_eq!(next(&mut stream).await, "after the outage");
    assert!(bus.unlock(&lease).await.unwrap());
}

#[tokio::test]
async fn connecting_to_nothing_is_a_typed_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://127.0.0.1:{port}");
    let failed = RedisBus::connect(&url, RedisBusOptions::default()).await;
    assert!(matches!(failed, Err(Error::Redis(_))), "{failed:?}");
    let bad = RedisBus::connect("not a url", RedisBusOptions::default()).await;
    assert!(matches!(bad, Err(Error::Redis(_))), "{bad:?}");
}

/// The bus in the service's health check: subscribe, publish with no
/// replay, receive.
#[tokio::test]
async fn a_live_only_event_reaches_a_subscriber_that_was_there_first() {
    let Some(bus) = TestBus::redis().await else {
        return;
    };
    let bus: &dyn MessageBus = &*bus;
    let mut events = bus.subscribe("__health__", None).await.unwrap();
    bus.publish("__health__", Arc::from("probe"), 0)
        .await
        .unwrap();
    assert_eq!(next(&mut events).await, "probe");
    assert_eq!(bus.last_cursor("__health__").await.unwrap(), None);
}

#[tokio::test]
async fn many_subscribers_share_one_connection_per_replica() {
    let Some((a, b)) = replicas().await else {
        return;
    };
    let mut streams = Vec::new();
    for i in 0..300 {
        let session = format!("s{}", i % 100);
        let bus = if i % 2 == 0 { &a } else { &b };
        streams.push((
            session.clone(),
            bus.subscribe(&session, None).await.unwrap(),
        ));
    }
    assert_eq!(
        a.retained().await.subscribers + b.retained().await.subscribers,
        300
    );
    let server = a.server_url().unwrap();
    let mut probe = redis::Client::open(server)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let info: String = redis::cmd("INFO")
        .arg("clients")
        .query_async(&mut probe)
        .await
        .unwrap();
    let clients: usize = info
        .lines()
        .find_map(|l| l.strip_prefix("connected_clients:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Per replica one command and one pub/sub connection; and the probe.
    assert!(clients <= 5, "{clients} connections");

    for i in 0..100 {
        let session = format!("s{i}");
        a.begin_run(&session).await.unwrap();
        a.publish(&session, Arc::from(format!("for {session}")), 10)
            .await
            .unwrap();
    }
    for (session, stream) in &mut streams {
        assert_eq!(next(stream).await, format!("for {session}"));
    }
    drop(streams);
    assert_eq!(
        a.retained().await.subscribers + b.retained().await.subscribers,
        0
    );
}
