use chrono::{TimeZone, Utc};
use oxiscope_storage::{Error, ScheduleRecord, check_time, new_id, now};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::backends::{Site, storage_tests};

storage_tests!(
    schedules_are_read_updated_and_listed_for_the_scheduler,
    the_scheduler_reads_only_schedules_at_or_past_their_check_time
);

fn schedule(user: &str, cron: &str) -> ScheduleRecord {
    ScheduleRecord {
        id: new_id(),
        user_id: user.to_owned(),
        created_at: now(),
        updated_at: now(),
        data: json!({"cron_expression": cron, "name": "ü"}),
        next_check_at: None,
    }
}

async fn schedules_are_read_updated_and_listed_for_the_scheduler(site: &Site) {
    let db = site.open().await;
    let a = schedule("u", "0 * * * *");
    let b = schedule("v", "*/5 * * * *");
    db.create_schedule(&a).await.unwrap();
    db.create_schedule(&b).await.unwrap();

    assert_eq!(db.get_schedule("u", &a.id).await.unwrap(), Some(a.clone()));
    assert_eq!(
        db.get_schedule("v", &a.id).await.unwrap(),
        None,
        "owner-scoped"
    );

    let mut changed = a.clone();
    changed.data["last_fired_at"] = json!("2026-01-01T01:00:00+00:00");
    changed.updated_at = now();
    changed.next_check_at = Some("2026-01-01T02:00:00.000000Z".into());
    db.update_schedule(&changed).await.unwrap();
    assert_eq!(
        db.get_schedule("u", &a.id).await.unwrap(),
        Some(changed.clone())
    );

    let mut foreign = changed.clone();
    foreign.user_id = "v".into();
    assert!(matches!(
        db.update_schedule(&foreign).await,
        Err(Error::NotFound { .. })
    ));

    let mut all = db.list_all_schedules().await.unwrap();
    all.sort_by(|x, y| x.id.cmp(&y.id));
    let mut want = vec![changed, b];
    want.sort_by(|x, y| x.id.cmp(&y.id));
    assert_eq!(all, want);
}

async fn the_scheduler_reads_only_schedules_at_or_past_their_check_time(site: &Site) {
    let db = site.open().await;
    let at = |h: u32, micros: u32| {
        check_time(
            Utc.with_ymd_and_hms(2026, 3, 1, h, 0, 0).unwrap()
                + chrono::Duration::microseconds(i64::from(micros)),
        )
    };
    let mut early = schedule("u", "0 * * * *");
    early.next_check_at = Some(at(9, 0));
    let mut late = schedule("v", "0 * * * *");
    late.next_check_at = Some(at(11, 1));
    let unknown = schedule("u", "0 * * * *");
    for s in [&early, &late, &unknown] {
        db.create_schedule(s).await.unwrap();
    }
    let due = |records: Vec<ScheduleRecord>| {
        let mut ids: Vec<String> = records.into_iter().map(|r| r.id).collect();
        ids.sort();
        ids
    };
    let sorted = |mut ids: Vec<String>| {
        ids.sort();
        ids
    };
    assert_eq!(
        due(db.list_due_schedules(&at(8, 0)).await.unwrap()),
        sorted(vec![unknown.id.clone()])
    );
    assert_eq!(
        due(db.list_due_schedules(&at(9, 0)).await.unwrap()),
        sorted(vec![early.id.clone(), unknown.id.clone()])
    );
    assert_eq!(
        due(db.list_due_schedules(&at(11, 0)).await.unwrap()),
        sorted(vec![early.id.clone(), unknown.id.clone()]),
        "a microsecond short of its time"
    );
    assert_eq!(
        due(db.list_due_schedules(&at(11, 1)).await.unwrap()),
        sorted(vec![early.id.clone(), late.id.clone(), unknown.id.clone()])
    );
    // An update moves it.
    let mut moved = early.clone();
    moved.next_check_at = Some(at(12, 0));
    db.update_schedule(&moved).await.unwrap();
    assert_eq!(
        due(db.list_due_schedules(&at(11, 30)).await.unwrap()),
        sorted(vec![late.id.clone(), unknown.id.clone()])
    );
}
