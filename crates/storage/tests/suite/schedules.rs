use oxiscope_storage::{Error, ScheduleRecord, new_id, now};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::backends::{Site, storage_tests};

storage_tests!(schedules_are_read_updated_and_listed_for_the_scheduler);

fn schedule(user: &str, cron: &str) -> ScheduleRecord {
    ScheduleRecord {
        id: new_id(),
        user_id: user.to_owned(),
        created_at: now(),
        updated_at: now(),
        data: json!({"cron_expression": cron, "name": "ü"}),
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
