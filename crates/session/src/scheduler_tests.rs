#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use chrono::TimeZone as _;
use oxiscope_storage::{InMemoryBus, MessageBus, SqliteStorage, Storage};
use pretty_assertions::assert_eq;

use super::*;
use crate::Sealer;
use crate::api::{ChatModelConfig, CreateScheduleRequest, UpdateScheduleRequest};
use crate::schedule::{self, Spec};
use crate::{EngineConfig, WorkspaceMode};

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
}

/// Two replicas: services sharing one store and one bus.
async fn replicas(dir: &std::path::Path) -> (Engine, Engine) {
    let storage: Arc<dyn Storage> = Arc::new(SqliteStorage::open(dir).await.unwrap());
    let bus: Arc<dyn MessageBus> = Arc::new(InMemoryBus::new());
    let make = || {
        let config = EngineConfig::new(dir).with_workspace(WorkspaceMode::Local);
        Engine::new(
            storage.clone(),
            bus.clone(),
            Sealer::from_key(&[7; 32]),
            config,
        )
    };
    (make(), make())
}

/// Stores a schedule of user `u` armed at `armed` (its agent does not
/// exist, so a fire is claimed, then fails harmlessly).
async fn stored(state: &Engine, cron: &str, tz: &str, armed: DateTime<Utc>) -> ScheduleRecord {
    let data = json!({
        "name": "report", "description": "write the report", "enabled": true,
        "timezone": tz, "cron_expression": cron, "stateful": false,
        "agent_id": "missing", "armed_at": armed.to_rfc3339(),
    });
    let record = ScheduleRecord {
        id: new_id(),
        user_id: "u".into(),
        created_at: now(),
        updated_at: now(),
        next_check_at: crate::schedule::next_check(&data),
        data,
    };
    state.storage().create_schedule(&record).await.unwrap();
    record
}

async fn last_fired(state: &Engine, id: &str) -> Option<DateTime<Utc>> {
    let record = state
        .storage()
        .get_schedule("u", id)
        .await
        .unwrap()
        .unwrap();
    crate::spec::ScheduleSpec::parse(&record.data).last_fired_at
}

#[test]
fn next_fires_follow_the_time_zone_across_a_dst_change() {
    // 09:00 in New York: 14:00 UTC in winter, 13:00 UTC from 8 March 2026.
    let spec = Spec::parse("0 9 * * *", "America/New_York").unwrap();
    let before = spec.next_after(utc(2026, 3, 6, 15, 0, 0)).unwrap();
    assert_eq!(before, utc(2026, 3, 7, 14, 0, 0));
    let after = spec.next_after(before).unwrap();
    assert_eq!(after, utc(2026, 3, 8, 13, 0, 0));
    assert_eq!(spec.latest_until(after), Some(after));
    // Six fields: seconds first.
    let every = Spec::parse("*/10 * * * * *", "UTC").unwrap();
    assert_eq!(
        every.next_after(utc(2026, 1, 1, 0, 0, 3)),
        Some(utc(2026, 1, 1, 0, 0, 10))
    );
}

#[test]
fn a_bad_cron_or_time_zone_is_a_422_naming_the_field() {
    let e = Spec::parse("61 * * * *", "UTC").unwrap_err();
    assert!(matches!(e, crate::SessionError::Fields(_)), "{e:?}");
    assert!(format!("{e:?}").contains("cron_expression"), "{e:?}");
    let e = Spec::parse("* * * * *", "Mars/Olympus_Mons").unwrap_err();
    assert!(matches!(e, crate::SessionError::Fields(_)), "{e:?}");
    assert!(format!("{e:?}").contains("timezone"), "{e:?}");
    assert!(Spec::parse("0 0 31 2 *", "UTC").is_err(), "never fires");
}

#[tokio::test]
async fn an_occurrence_fires_once_across_two_replicas() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = replicas(dir.path()).await;
    let s = stored(&a, "0 * * * *", "UTC", utc(2026, 1, 1, 0, 30, 0)).await;

    assert_eq!(tick(&a, utc(2026, 1, 1, 0, 59, 0)).await.unwrap(), 0);
    let at = utc(2026, 1, 1, 1, 0, 2);
    let (x, y) = tokio::join!(tick(&a, at), tick(&b, at));
    assert_eq!(x.unwrap() + y.unwrap(), 1, "one replica fires it");
    assert_eq!(last_fired(&a, &s.id).await, Some(utc(2026, 1, 1, 1, 0, 0)));
    // Later ticks of either replica do not fire it again.
    assert_eq!(tick(&b, utc(2026, 1, 1, 1, 30, 0)).await.unwrap(), 0);
    assert_eq!(tick(&a, utc(2026, 1, 1, 1, 59, 59)).await.unwrap(), 0);
    assert_eq!(tick(&b, utc(2026, 1, 1, 2, 0, 0)).await.unwrap(), 1);
}

#[tokio::test]
async fn an_occurrence_fires_once_across_replicas_on_a_redis_bus() {
    use oxiscope_storage::{RedisBus, RedisBusOptions};
    let Some(server) = oxiscope_test_support::servers::redis::TestRedis::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let storage: Arc<dyn Storage> = Arc::new(SqliteStorage::open(dir.path()).await.unwrap());
    let options = RedisBusOptions {
        prefix: oxiscope_test_support::servers::redis::TestRedis::unique_prefix(),
        ..RedisBusOptions::default()
    };
    let mut replicas = Vec::new();
    for _ in 0..3 {
        let bus = RedisBus::connect(&server.url(), options.clone())
            .await
            .unwrap();
        let config = EngineConfig::new(dir.path()).with_workspace(WorkspaceMode::Local);
        replicas.push(Engine::new(
            storage.clone(),
            Arc::new(bus),
            Sealer::from_key(&[7; 32]),
            config,
        ));
    }
    let s = stored(
        &replicas[0],
        "*/10 * * * * *",
        "Asia/Tokyo",
        utc(2026, 1, 1, 0, 0, 0),
    )
    .await;
    for second in [10, 20, 30] {
        let at = utc(2026, 1, 1, 0, 0, second + 1);
        let claims = futures_util::future::join_all(replicas.iter().map(|r| tick(r, at))).await;
        let total: usize = claims.into_iter().map(Result::unwrap).sum();
        assert_eq!(total, 1, "occurrence :{second} fired once");
        assert_eq!(
            last_fired(&replicas[1], &s.id).await,
            Some(utc(2026, 1, 1, 0, 0, second))
        );
    }
}

#[tokio::test]
async fn missed_fires_fire_once_for_the_latest_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = replicas(dir.path()).await;
    let s = stored(&a, "0 * * * *", "UTC", utc(2026, 1, 1, 0, 30, 0)).await;
    // Down from 00:30 to 05:10: five occurrences passed; one fire.
    assert_eq!(tick(&a, utc(2026, 1, 1, 5, 10, 0)).await.unwrap(), 1);
    assert_eq!(last_fired(&a, &s.id).await, Some(utc(2026, 1, 1, 5, 0, 0)));
    assert_eq!(tick(&a, utc(2026, 1, 1, 5, 20, 0)).await.unwrap(), 0);
    assert_eq!(tick(&a, utc(2026, 1, 1, 6, 0, 0)).await.unwrap(), 1);
}

#[tokio::test]
async fn a_patch_reschedules_at_once_and_a_bad_one_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = replicas(dir.path()).await;
    let s = stored(&a, "0 * * * *", "UTC", utc(2026, 1, 1, 0, 30, 0)).await;
    let patch = UpdateScheduleRequest {
        cron_expression: Some("*/15 * * * *".into()),
        ..UpdateScheduleRequest::default()
    };
    let updated = schedule::update(&a, "u", &s.id, patch, utc(2026, 1, 1, 0, 40, 0))
        .await
        .unwrap();
    // The new rule's first occurrence after the change, not the old one's.
    assert_eq!(due(&updated.data, utc(2026, 1, 1, 0, 44, 0)), None);
    assert_eq!(
        due(&updated.data, utc(2026, 1, 1, 0, 45, 1)),
        Some(utc(2026, 1, 1, 0, 45, 0))
    );
    assert_eq!(tick(&a, utc(2026, 1, 1, 0, 45, 1)).await.unwrap(), 1);

    let bad = UpdateScheduleRequest {
        timezone: Some("Nowhere/Else".into()),
        ..UpdateScheduleRequest::default()
    };
    let e = schedule::update(&a, "u", &s.id, bad, Utc::now())
        .await
        .unwrap_err();
    assert!(matches!(e, crate::SessionError::Fields(_)), "{e:?}");
    let kept = a.storage().get_schedule("u", &s.id).await.unwrap().unwrap();
    assert_eq!(kept.data["timezone"], "UTC");
    assert_eq!(kept.data["cron_expression"], "*/15 * * * *");
    // Another user's schedule is not found.
    let e = schedule::update(&a, "v", &s.id, UpdateScheduleRequest::default(), Utc::now())
        .await
        .unwrap_err();
    assert!(matches!(e, crate::SessionError::NotFound(_)), "{e:?}");
}

#[tokio::test]
async fn a_disabled_schedule_never_fires() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = replicas(dir.path()).await;
    let s = stored(&a, "* * * * *", "UTC", utc(2026, 1, 1, 0, 0, 0)).await;
    let off = UpdateScheduleRequest {
        enabled: Some(false),
        ..UpdateScheduleRequest::default()
    };
    schedule::update(&a, "u", &s.id, off, utc(2026, 1, 1, 0, 0, 0))
        .await
        .unwrap();
    assert_eq!(tick(&a, utc(2026, 1, 1, 3, 0, 0)).await.unwrap(), 0);
    assert_eq!(last_fired(&a, &s.id).await, None);
}

#[tokio::test]
async fn create_rejects_a_bad_rule_before_storing_anything() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = replicas(dir.path()).await;
    let body = CreateScheduleRequest {
        name: "n".into(),
        description: String::new(),
        cron_expression: "every day".into(),
        timezone: "UTC".into(),
        agent_id: "missing".into(),
        chat_model_config: ChatModelConfig {
            kind: "openai_credential".into(),
            credential_id: "c".into(),
            model: "m".into(),
            model_class: String::new(),
            parameters: serde_json::Map::new(),
        },
        enabled: true,
        stateful: false,
        permission_mode: None,
    };
    let e = schedule::create(&a, "u", body, Utc::now())
        .await
        .unwrap_err();
    assert!(matches!(e, crate::SessionError::Fields(_)), "{e:?}");
    assert!(a.storage().list_schedules("u").await.unwrap().is_empty());
}

#[test]
fn the_instruction_is_a_user_message_with_the_description() {
    let record = ScheduleRecord {
        id: "s1".into(),
        user_id: "u".into(),
        created_at: now(),
        updated_at: now(),
        data: json!({"name": "daily", "description": "sum up"}),
        next_check_at: None,
    };
    let m = instruction(&record, utc(2026, 1, 1, 9, 0, 0));
    let parsed: oxiscope_message::Msg = serde_json::from_value(m.clone()).unwrap();
    parsed.validate().unwrap();
    assert_eq!(m["metadata"]["schedule_id"], "s1");
    assert_eq!(m["role"], "user");
    let text = m["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("daily") && text.ends_with("sum up"), "{text}");
}

/// A clock the test sets.
#[derive(Debug)]
struct ManualClock(std::sync::Mutex<DateTime<Utc>>);

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap()
    }
}

#[tokio::test]
async fn the_running_scheduler_reads_its_clock_and_stops_with_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = replicas(dir.path()).await;
    let s = stored(&a, "0 9 * * *", "Europe/Berlin", utc(2026, 6, 1, 0, 0, 0)).await;
    let clock = Arc::new(ManualClock(std::sync::Mutex::new(utc(2026, 6, 1, 6, 0, 0))));
    let task = spawn_scheduler_with(a.clone(), clock.clone(), Duration::from_millis(5));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        last_fired(&a, &s.id).await,
        None,
        "09:00 Berlin is 07:00 UTC"
    );
    *clock.0.lock().unwrap() = utc(2026, 6, 1, 7, 0, 0);
    let mut fired = None;
    for _ in 0..400 {
        fired = last_fired(&a, &s.id).await;
        if fired.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(fired, Some(utc(2026, 6, 1, 7, 0, 0)));
    a.shutdown_token().cancel();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
}

#[test]
fn occurrences_outside_the_window_are_not_due() {
    let data = json!({
        "enabled": true,
        "cron_expression": "0 * * * *",
        "timezone": "UTC",
        "armed_at": utc(2026, 1, 1, 0, 0, 0).to_rfc3339(),
        "started_at": utc(2026, 1, 1, 3, 0, 0).to_rfc3339(),
        "ended_at": utc(2026, 1, 1, 5, 0, 0).to_rfc3339(),
    });
    assert_eq!(due(&data, utc(2026, 1, 1, 2, 30, 0)), None);
    assert_eq!(
        due(&data, utc(2026, 1, 1, 3, 0, 1)),
        Some(utc(2026, 1, 1, 3, 0, 0))
    );
    assert_eq!(
        due(&data, utc(2026, 1, 1, 5, 10, 0)),
        Some(utc(2026, 1, 1, 5, 0, 0))
    );
    assert_eq!(due(&data, utc(2026, 1, 1, 6, 0, 1)), None);
    // An API-made schedule's display start (a naive local time) bounds nothing.
    let mut api = data;
    api["started_at"] = json!("2030-01-01T00:00:00.000000");
    api["ended_at"] = Value::Null;
    assert_eq!(
        due(&api, utc(2026, 1, 1, 6, 0, 1)),
        Some(utc(2026, 1, 1, 6, 0, 0))
    );
}

#[test]
fn the_check_time_is_never_later_than_the_first_due_moment() {
    let base = json!({
        "name": "r", "enabled": true, "timezone": "Europe/Paris",
        "armed_at": utc(2026, 3, 28, 22, 7, 0).to_rfc3339(),
    });
    let variants = [
        json!({"cron_expression": "0 * * * *"}),
        json!({"cron_expression": "*/5 2 * * *"}),
        json!({"cron_expression": "30 2 29 3 *"}),
        json!({"cron_expression": "0 * * * *",
               "started_at": utc(2026, 3, 29, 3, 0, 0).to_rfc3339()}),
        json!({"cron_expression": "0 * * * *",
               "last_fired_at": utc(2026, 3, 29, 1, 0, 0).to_rfc3339()}),
        json!({"cron_expression": "0 * * * *",
               "ended_at": utc(2026, 3, 28, 22, 30, 0).to_rfc3339()}),
        json!({"cron_expression": "0 * * * *", "enabled": false}),
    ];
    for variant in variants {
        let mut data = base.clone();
        for (k, v) in variant.as_object().unwrap() {
            data[k] = v.clone();
        }
        let check = schedule::next_check(&data).unwrap();
        // Minute by minute across the spring DST change: the first moment
        // the schedule is due is at or after its check time.
        let first_due = (0..(36 * 60))
            .map(|m| utc(2026, 3, 28, 22, 7, 0) + chrono::Duration::minutes(m))
            .find(|t| due(&data, *t).is_some());
        match first_due {
            Some(t) => assert!(
                oxiscope_storage::check_time(t) >= check,
                "{data}: due at {t}, checked from {check}"
            ),
            None => assert!(check.as_str() > "2026-03-30", "{data}: {check}"),
        }
    }
    let unbounded = json!({"cron_expression": "0 * * * *", "timezone": "UTC"});
    assert_eq!(schedule::next_check(&unbounded), None, "checked every tick");
}

#[tokio::test]
async fn a_tick_reads_due_schedules_and_the_sweep_heals_a_stale_check_time() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = replicas(dir.path()).await;
    let s = stored(&a, "0 * * * *", "UTC", utc(2026, 1, 1, 0, 30, 0)).await;
    assert_eq!(
        s.next_check_at.as_deref(),
        Some("2026-01-01T01:00:00.000000Z")
    );
    // After a fire the check time moves to the next occurrence.
    assert_eq!(tick(&a, utc(2026, 1, 1, 1, 0, 5)).await.unwrap(), 1);
    let fired = a.storage().get_schedule("u", &s.id).await.unwrap().unwrap();
    assert_eq!(
        fired.next_check_at.as_deref(),
        Some("2026-01-01T02:00:00.000000Z")
    );
    // A check time left far ahead (as by a replica that predates check
    // times re-enabling the schedule) hides it from the tick; the sweep
    // still fires it.
    let mut stale = fired.clone();
    stale.next_check_at = Some("9999-12-31T23:59:59.999999Z".into());
    a.storage().update_schedule(&stale).await.unwrap();
    assert_eq!(tick(&a, utc(2026, 1, 1, 2, 0, 5)).await.unwrap(), 0);
    assert_eq!(tick_all(&a, utc(2026, 1, 1, 2, 0, 5)).await.unwrap(), 1);
    let healed = a.storage().get_schedule("u", &s.id).await.unwrap().unwrap();
    assert_eq!(
        healed.next_check_at.as_deref(),
        Some("2026-01-01T03:00:00.000000Z")
    );
}

#[tokio::test]
async fn a_new_mode_gives_a_stateful_schedule_a_new_session() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = replicas(dir.path()).await;
    let s = stored(&a, "0 * * * *", "UTC", utc(2026, 1, 1, 0, 30, 0)).await;
    let mut record = s.clone();
    record.data["stateful"] = json!(true);
    record.data["session_id"] = json!("kept");
    record.data["permission_mode"] = json!("accept_edits");
    a.storage().update_schedule(&record).await.unwrap();
    let patch = |mode| UpdateScheduleRequest {
        permission_mode: Some(mode),
        ..UpdateScheduleRequest::default()
    };
    let at = utc(2026, 1, 1, 0, 40, 0);
    // The same mode keeps the session...
    let same = schedule::update(&a, "u", &s.id, patch(PermissionMode::AcceptEdits), at)
        .await
        .unwrap();
    assert_eq!(same.data["session_id"], "kept");
    // ...a lower one opens a new session at the next fire.
    let lowered = schedule::update(&a, "u", &s.id, patch(PermissionMode::Explore), at)
        .await
        .unwrap();
    assert_eq!(lowered.data.get("session_id"), None, "{}", lowered.data);
    assert_eq!(lowered.data["permission_mode"], "explore");
}

#[tokio::test]
async fn a_schedule_read_but_not_due_is_not_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = replicas(dir.path()).await;
    let s = stored(&a, "0 * * * *", "UTC", utc(2026, 1, 1, 0, 30, 0)).await;
    // Its window closed at 01:30 while no replica ran: the 01:00 fire was
    // missed, and nothing is owed any more.
    let mut record = s.clone();
    record.data["ended_at"] = json!(utc(2026, 1, 1, 1, 30, 0).to_rfc3339());
    record.next_check_at = schedule::next_check(&record.data);
    a.storage().update_schedule(&record).await.unwrap();
    assert_eq!(
        record.next_check_at.as_deref(),
        Some("2026-01-01T01:00:00.000000Z")
    );
    let due_at = |t| {
        let a = a.clone();
        async move {
            a.storage()
                .list_due_schedules(&oxiscope_storage::check_time(t))
                .await
                .unwrap()
                .len()
        }
    };
    assert_eq!(due_at(utc(2026, 1, 1, 2, 10, 0)).await, 1);
    assert_eq!(tick(&a, utc(2026, 1, 1, 2, 10, 0)).await.unwrap(), 0);
    assert_eq!(due_at(utc(2026, 1, 1, 2, 20, 0)).await, 0, "read once");
    assert_eq!(last_fired(&a, &s.id).await, None);
}
