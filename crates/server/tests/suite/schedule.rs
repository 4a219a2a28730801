//! Schedules through the HTTP service: validation before storing, owner
//! scoping, and a real every-second fire that runs the agent.

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{Harness, text_answer};

fn body(s: &super::common::Setup, cron: &str, tz: &str) -> Value {
    json!({
        "name": "ticker",
        "description": "Say hello.",
        "cron_expression": cron,
        "timezone": tz,
        "agent_id": s.agent_id,
        "chat_model_config": {"type": "openai_credential", "credential_id": s.credential_id, "model": "gpt-4.1", "parameters": {}},
    })
}

#[tokio::test]
async fn a_bad_rule_is_refused_and_nothing_is_stored() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let (code, e) = h
        .post("/schedule/", "u", body(&s, "61 * * * *", "UTC"))
        .await;
    assert_eq!(code, 422, "{e}");
    assert_eq!(e["detail"][0]["loc"], json!(["body", "cron_expression"]));
    let (code, e) = h
        .post(
            "/schedule/",
            "u",
            body(&s, "0 9 * * 1-5", "Atlantis/Capital"),
        )
        .await;
    assert_eq!(code, 422, "{e}");
    assert_eq!(e["detail"][0]["loc"], json!(["body", "timezone"]));
    let mut unknown_agent = body(&s, "0 9 * * 1-5", "Asia/Shanghai");
    unknown_agent["agent_id"] = json!("nope");
    let (code, _) = h.post("/schedule/", "u", unknown_agent).await;
    assert_eq!(code, 404);
    let (code, list) = h.get("/schedule/", "u").await;
    assert_eq!(code, 200);
    assert_eq!(list, json!({"schedules": [], "total": 0}));
}

#[tokio::test]
async fn an_every_second_schedule_runs_the_agent_in_a_schedule_session() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    for _ in 0..5 {
        h.fake.push(text_answer("Hello from the schedule"));
    }
    let (code, created) = h
        .post("/schedule/", "u", body(&s, "* * * * * *", "Europe/Paris"))
        .await;
    assert_eq!(code, 201, "{created}");
    let id = created["schedule_id"].as_str().unwrap().to_owned();

    let (code, list) = h.get("/schedule/", "u").await;
    assert_eq!(code, 200);
    assert_eq!(list["total"], 1);
    let record = &list["schedules"][0];
    assert_eq!(record["agent_id"], s.agent_id.as_str());
    assert_eq!(record["data"]["cron_expression"], "* * * * * *");
    assert_eq!(record["data"]["permission_mode"], "dont_ask");
    assert_eq!(record["data"]["stateful"], false);
    assert!(record["data"].get("armed_at").is_none(), "{record}");

    // Another user sees none of it.
    let (code, _) = h.get(&format!("/schedule/{id}/sessions"), "v").await;
    assert_eq!(code, 404);
    let (code, _) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/schedule/{id}"),
            "v",
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(code, 404);
    let (code, _) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/schedule/{id}"),
            "v",
            None,
        )
        .await;
    assert_eq!(code, 404);

    let scheduler = oxiscope_server::spawn_scheduler(h.state.clone());
    let mut session: Option<Value> = None;
    for _ in 0..150 {
        let (code, page) = h.get(&format!("/schedule/{id}/sessions"), "u").await;
        assert_eq!(code, 200, "{page}");
        if let Some(first) = page["sessions"].as_array().and_then(|a| a.last()) {
            session = Some(first.clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Stop it firing again.
    let (code, patched) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/schedule/{id}"),
            "u",
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["data"]["enabled"], false);
    let session = session.expect("the schedule fired within 15 s");
    assert_eq!(
        session["origin"],
        json!({"type": "schedule", "schedule_id": id})
    );
    let session_id = session["id"].as_str().unwrap();
    assert_ne!(session_id, s.session_id);

    let path = format!("/sessions/{session_id}/messages?agent_id={}", s.agent_id);
    let mut answered = false;
    for _ in 0..150 {
        let (code, page) = h.get(&path, "u").await;
        assert_eq!(code, 200, "{page}");
        if page.to_string().contains("Hello from the schedule") {
            assert!(page.to_string().contains("Say hello."), "{page}");
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        answered,
        "the scheduled run completed with the model's answer"
    );

    let (code, _) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/schedule/{id}"),
            "u",
            None,
        )
        .await;
    assert_eq!(code, 204);
    let (code, list) = h.get("/schedule/", "u").await;
    assert_eq!((code, list["total"].clone()), (200, json!(0)));
    let (code, _) = h.get(&path, "u").await;
    assert_eq!(code, 404, "its sessions went with it");
    scheduler.abort();
}

#[tokio::test]
async fn a_stateful_schedule_reuses_one_session() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    for _ in 0..6 {
        h.fake.push(text_answer("Hello from the schedule"));
    }
    let mut stateful = body(&s, "* * * * * *", "UTC");
    stateful["stateful"] = json!(true);
    let (code, created) = h.post("/schedule/", "u", stateful).await;
    assert_eq!(code, 201, "{created}");
    let id = created["schedule_id"].as_str().unwrap().to_owned();
    let scheduler = oxiscope_server::spawn_scheduler(h.state.clone());

    let mut answers = 0;
    let mut sessions = Value::Null;
    for _ in 0..200 {
        let (code, page) = h.get(&format!("/schedule/{id}/sessions"), "u").await;
        assert_eq!(code, 200, "{page}");
        if let Some(first) = page["sessions"].as_array().and_then(|a| a.first()) {
            let path = format!(
                "/sessions/{}/messages?agent_id={}",
                first["id"].as_str().unwrap(),
                s.agent_id
            );
            let (_, messages) = h.get(&path, "u").await;
            answers = messages
                .to_string()
                .matches("Hello from the schedule")
                .count();
            if answers >= 2 {
                sessions = page;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (code, _) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/schedule/{id}"),
            "u",
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(code, 200);
    scheduler.abort();
    assert!(answers >= 2, "two fires answered in one session");
    assert_eq!(sessions["total"], 1, "{sessions}");
}
