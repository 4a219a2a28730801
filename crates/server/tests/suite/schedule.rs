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

    let scheduler = oxiscope_server::spawn_scheduler(h.state.engine().clone());
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
    let scheduler = oxiscope_server::spawn_scheduler(h.state.engine().clone());

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

/// A model answer that calls `tool` with `args`.
fn calls(tool: &str, args: &Value) -> oxiscope_test_support::ScriptedResponse {
    oxiscope_test_support::OpenAiScript::new()
        .tool_call(0, "call_1", tool)
        .tool_args(0, args.to_string())
        .finish("tool_calls")
        .usage(10, 5, 0)
        .response()
}

/// The text of the tool result the model was sent last.
fn last_tool_result(request: &str) -> String {
    let body: Value = serde_json::from_str(request).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let result = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    match &result["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn an_agent_schedules_lists_views_and_deletes_its_own_tasks() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let ask = |tool: &str, args: Value| {
        h.fake.push(calls(tool, &args));
        h.fake.push(text_answer("Done."));
    };

    // Created with the session's model, in a window, from this session.
    ask(
        "ScheduleCreate",
        json!({
            "name": "standup",
            "description": "Summarise yesterday's commits.",
            "cron_expression": "0 9 * * 1-5",
            "timezone": "Asia/Shanghai",
            "ended_at": "2030-01-01T00:00:00",
        }),
    );
    let requests = super::knowledge::run_reply(&h, "u", &s, "Every weekday at 9.").await;
    let offered: Vec<String> = serde_json::from_str::<Value>(&requests[0]).unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    for tool in [
        "ScheduleCreate",
        "ScheduleList",
        "ScheduleView",
        "ScheduleDelete",
    ] {
        assert!(offered.iter().any(|o| o == tool), "{tool} in {offered:?}");
    }
    let result = last_tool_result(&requests[1]);
    assert!(result.contains("Schedule created"), "{result}");
    let (_, list) = h.get("/schedule/", "u").await;
    assert_eq!(list["total"], 1, "{list}");
    let record = &list["schedules"][0];
    let id = record["id"].as_str().unwrap().to_owned();
    assert!(result.contains(&id), "{result}");
    assert_eq!(record["agent_id"], s.agent_id.as_str());
    assert_eq!(record["data"]["source"], "AGENT");
    assert_eq!(record["data"]["source_session_id"], s.session_id.as_str());
    assert_eq!(record["data"]["timezone"], "Asia/Shanghai");
    assert_eq!(record["data"]["ended_at"], "2029-12-31T16:00:00+00:00");
    assert_eq!(
        record["data"]["chat_model_config"]["credential_id"],
        s.credential_id.as_str()
    );

    // Listed and viewed.
    ask("ScheduleList", json!({}));
    let requests = super::knowledge::run_reply(&h, "u", &s, "What is scheduled?").await;
    let result = last_tool_result(&requests[1]);
    assert!(
        result.contains("standup") && result.contains("0 9 * * 1-5"),
        "{result}"
    );
    ask("ScheduleView", json!({"schedule_id": id}));
    let requests = super::knowledge::run_reply(&h, "u", &s, "Show it.").await;
    let result = last_tool_result(&requests[1]);
    assert!(
        result.contains("Summarise yesterday's commits."),
        "{result}"
    );
    assert!(result.contains("AGENT"), "{result}");

    // Bad input is an error the model reads; nothing is stored.
    ask(
        "ScheduleCreate",
        json!({"name": "bad", "cron_expression": "61 * * * *"}),
    );
    let requests = super::knowledge::run_reply(&h, "u", &s, "Break it.").await;
    let result = last_tool_result(&requests[1]);
    assert!(result.contains("Invalid cron expression"), "{result}");
    ask(
        "ScheduleCreate",
        json!({"name": "bad", "cron_expression": "* * * * *", "started_at": "2030-01-02T00:00:00Z", "ended_at": "2030-01-01T00:00:00Z"}),
    );
    let requests = super::knowledge::run_reply(&h, "u", &s, "Backwards.").await;
    assert!(
        last_tool_result(&requests[1]).contains("ended_at"),
        "{}",
        requests[1]
    );
    let (_, list) = h.get("/schedule/", "u").await;
    assert_eq!(list["total"], 1);

    // Another user's schedule is out of reach.
    let other = h.setup("v").await;
    let (code, theirs) = h
        .post("/schedule/", "v", body(&other, "0 1 * * *", "UTC"))
        .await;
    assert_eq!(code, 201);
    let theirs = theirs["schedule_id"].as_str().unwrap().to_owned();
    for tool in ["ScheduleView", "ScheduleDelete"] {
        ask(tool, json!({"schedule_id": theirs}));
        let requests = super::knowledge::run_reply(&h, "u", &s, "Theirs.").await;
        let result = last_tool_result(&requests[1]);
        assert!(result.contains("not found"), "{tool}: {result}");
    }
    let (_, list) = h.get("/schedule/", "v").await;
    assert_eq!(list["schedules"][0]["id"], theirs.as_str());

    // Deleted.
    ask("ScheduleDelete", json!({"schedule_id": id}));
    let requests = super::knowledge::run_reply(&h, "u", &s, "Stop it.").await;
    assert!(last_tool_result(&requests[1]).contains("deleted"));
    let (_, list) = h.get("/schedule/", "u").await;
    assert_eq!(list["total"], 0);
}

#[tokio::test]
async fn a_user_cannot_keep_more_schedules_than_the_policy_allows() {
    let h = Harness::start_with_policy(oxiscope_server::TenantPolicy {
        max_schedules_per_user: 2,
        // The fake model server is on loopback.
        private_model_endpoints: true,
        ..oxiscope_server::TenantPolicy::default()
    })
    .await;
    let s = h.setup("u").await;
    // By default a schedule fires once a minute at most.
    let (code, e) = h
        .post("/schedule/", "u", body(&s, "*/10 * * * * *", "UTC"))
        .await;
    assert_eq!(code, 422, "{e}");
    assert!(e.to_string().contains("min_schedule_interval_secs"), "{e}");
    for _ in 0..2 {
        let (code, e) = h
            .post("/schedule/", "u", body(&s, "0 1 * * *", "UTC"))
            .await;
        assert_eq!(code, 201, "{e}");
    }
    let (code, e) = h
        .post("/schedule/", "u", body(&s, "0 1 * * *", "UTC"))
        .await;
    assert_eq!(code, 403, "{e}");
    assert!(e.to_string().contains("max_schedules_per_user"), "{e}");
    // An agent is held to the same limit.
    h.fake.push(calls(
        "ScheduleCreate",
        &json!({"name": "third", "cron_expression": "0 2 * * *"}),
    ));
    h.fake.push(text_answer("Could not."));
    let requests = super::knowledge::run_reply(&h, "u", &s, "One more.").await;
    assert!(last_tool_result(&requests[1]).contains("at most 2 schedules"));
    let (_, list) = h.get("/schedule/", "u").await;
    assert_eq!(list["total"], 2);
    // Another user has a limit of their own.
    let other = h.setup("v").await;
    let (code, _) = h
        .post("/schedule/", "v", body(&other, "0 1 * * *", "UTC"))
        .await;
    assert_eq!(code, 201);
}

#[tokio::test]
async fn schedules_created_at_once_stay_within_the_cap() {
    let h = Harness::start_with_policy(oxiscope_server::TenantPolicy {
        max_schedules_per_user: 3,
        private_model_endpoints: true,
        ..oxiscope_server::TenantPolicy::default()
    })
    .await;
    let s = h.setup("u").await;
    let creates = (0..12).map(|_| h.post("/schedule/", "u", body(&s, "0 1 * * *", "UTC")));
    let codes: Vec<u16> = futures_util::future::join_all(creates)
        .await
        .into_iter()
        .map(|(code, _)| code)
        .collect();
    assert_eq!(codes.iter().filter(|c| **c == 201).count(), 3, "{codes:?}");
    assert!(codes.iter().all(|c| [201, 403].contains(c)), "{codes:?}");
    let (_, list) = h.get("/schedule/", "u").await;
    assert_eq!(list["total"], 3);
}

#[tokio::test]
async fn a_schedule_an_agent_creates_gets_no_more_trust_than_its_session() {
    // The operator allows bypass, so only the session's own mode stands in
    // the way of a model that asks for it.
    let mut policy = oxiscope_server::TenantPolicy {
        private_model_endpoints: true,
        ..oxiscope_server::TenantPolicy::default()
    };
    policy
        .allowed_modes
        .push(oxiscope_permission::PermissionMode::Bypass);
    let h = Harness::start_with_policy(policy).await;
    let s = h.setup("u").await;
    let set_mode = |mode: &'static str| {
        let h = &h;
        let s = &s;
        async move {
            let (code, body) = h
                .patch_session("u", s, json!({"permission_mode": mode}))
                .await;
            assert_eq!(code, 200, "{body}");
        }
    };
    let create = |name: &str, mode: Option<&str>| {
        let mut args = json!({"name": name, "cron_expression": "0 3 * * *"});
        if let Some(mode) = mode {
            args["permission_mode"] = json!(mode);
        }
        h.fake.push(calls("ScheduleCreate", &args));
        h.fake.push(text_answer("Done."));
    };
    let modes = |list: &Value| -> Vec<(String, String)> {
        list["schedules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["data"]["name"].as_str().unwrap().to_owned(),
                    r["data"]["permission_mode"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };

    // A session in the default mode cannot set up unattended bypass runs.
    create("escalate", Some("bypass"));
    let requests = super::knowledge::run_reply(&h, "u", &s, "Run it freely.").await;
    let result = last_tool_result(&requests[1]);
    assert!(result.contains("cannot run in bypass mode"), "{result}");
    let (_, list) = h.get("/schedule/", "u").await;
    assert_eq!(list["total"], 0, "{list}");
    // Its unattended default is dont_ask, as in AgentScope.
    create("nightly", None);
    super::knowledge::run_reply(&h, "u", &s, "Nightly.").await;

    // A read-only session sets up nothing that could write later.
    set_mode("explore").await;
    create("write", Some("accept_edits"));
    let requests = super::knowledge::run_reply(&h, "u", &s, "Write nightly.").await;
    let result = last_tool_result(&requests[1]);
    assert!(result.contains("explore"), "{result}");
    assert!(!result.contains("Schedule created"), "{result}");

    // A bypass session may.
    set_mode("bypass").await;
    create("free", Some("bypass"));
    super::knowledge::run_reply(&h, "u", &s, "Run it freely.").await;

    let (_, list) = h.get("/schedule/", "u").await;
    let mut got = modes(&list);
    got.sort();
    assert_eq!(
        got,
        [
            ("free".to_owned(), "bypass".to_owned()),
            ("nightly".to_owned(), "dont_ask".to_owned()),
        ]
    );
}
