//! A worker's confirmation reaches its leader through the service: the
//! leader's stream shows it (`team_confirmation_required`), the leader's
//! user answers it on the leader's session, the worker resumes and the
//! leader sees the answer and the worker's report; answering on the
//! worker's own session still works; a second answer and another user's
//! answer are refused.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, Setup, Sse};
use super::team::{LEAD, Models, W1, answer, calls, has, leader_view, member, setup, wait_for};

/// Events until the `CUSTOM` event named `name`; returns it.
async fn custom(sse: &mut Sse, name: &str) -> Value {
    loop {
        let event = sse.next().await;
        if event["type"] == "CUSTOM" && event["name"] == name {
            return event;
        }
    }
}

/// The leader founds a team whose worker `w1` asks to write `note.txt`
/// (a write asks in the default mode); returns the leader, the leader's
/// stream and the `team_confirmation_required` event.
async fn worker_asks(h: &Harness, models: &Models) -> (Setup, Sse, Value) {
    let (lead, _, _) = setup(h, models).await;
    let mut sse = h.subscribe("alice", &lead, None).await;
    models.push(
        LEAD,
        calls(&[
            (
                "TeamCreate",
                json!({"name": "crew", "description": "notes"}),
            ),
            (
                "AgentCreate",
                json!({"name": "w1", "description": "writes", "prompt": "write a note"}),
            ),
        ]),
    );
    models.push(LEAD, answer("waiting for w1"));
    let path = h.tool_dir("alice", &lead.agent_id).join("note.txt");
    models.push(
        W1,
        calls(&[(
            "Write",
            json!({"file_path": path, "content": "written by w1"}),
        )]),
    );
    let (code, body) = h.chat("alice", &lead, user_msg("write with a team")).await;
    assert_eq!(code, 200, "{body}");
    let ask = custom(&mut sse, "team_confirmation_required").await;
    (lead, sse, ask)
}

fn confirm(reply_id: &Value, call: &Value, confirmed: bool) -> Value {
    json!({
        "type": "USER_CONFIRM_RESULT",
        "reply_id": reply_id,
        "confirm_results": [{"confirmed": confirmed, "tool_call": call}],
    })
}

#[tokio::test]
async fn the_leader_answers_a_workers_confirmation_and_the_worker_resumes() {
    let h = Harness::start().await;
    let models = Models::start(vec![(W1, "w1 idle"), (LEAD, "noted")]).await;
    let (lead, mut sse, ask) = worker_asks(&h, &models).await;
    let w1 = member(&leader_view(&h, &lead).await, "w1");

    // The event names the worker, its session, the tool and arguments.
    let value = &ask["value"];
    assert_eq!(value["member"], "w1");
    assert_eq!(value["session_id"], w1.session_id.as_str());
    assert_eq!(value["agent_id"], w1.agent_id.as_str());
    let call = value["tool_calls"][0].clone();
    assert_eq!(call["name"], "Write");
    let args: Value = serde_json::from_str(call["input"].as_str().unwrap()).unwrap();
    assert_eq!(args["content"], "written by w1");
    assert_eq!(
        h.wait_not_running("alice", &w1).await,
        "awaiting_permission"
    );
    let reply_id = value["reply_id"].clone();

    // Another user can answer neither on the leader's session nor on the
    // worker's: they are not theirs.
    for s in [&lead, &w1] {
        let (code, body) = h.chat("bob", s, confirm(&reply_id, &call, true)).await;
        assert_eq!(code, 404, "{body}");
    }
    assert_eq!(h.status("alice", &w1).await, "awaiting_permission");

    // The leader's user answers on the leader's session.
    models.push(
        W1,
        calls(&[("TeamSay", json!({"content": "note written", "to": "Lead"}))]),
    );
    models.push(W1, answer("reported"));
    let (code, body) = h
        .chat("alice", &lead, confirm(&reply_id, &call, true))
        .await;
    assert_eq!(code, 200, "{body}");
    let answered = custom(&mut sse, "team_confirmation_answered").await;
    let value = &answered["value"];
    assert_eq!(value["member"], "w1");
    assert_eq!(value["answered_on"], "leader");
    assert_eq!(value["reply_id"], reply_id);
    assert_eq!(
        value["results"],
        json!([{"tool_call_id": call["id"], "name": "Write", "confirmed": true}])
    );

    // The worker resumed, wrote, and reported to the leader.
    wait_for(&h, &lead, "w1's report", |t| {
        t.contains(r#"<team-message from=\"w1\">\nnote written\n</team-message>"#)
    })
    .await;
    let written = h.workspace_dir("alice", &lead.agent_id).join("note.txt");
    assert_eq!(std::fs::read_to_string(written).unwrap(), "written by w1");
    wait_for(&h, &w1, "w1 done", has("reported")).await;

    // Nothing is parked any more: a second answer is a conflict on either
    // session, and changes nothing.
    let (code, body) = h
        .chat("alice", &lead, confirm(&reply_id, &call, true))
        .await;
    assert_eq!(code, 409, "{body}");
    let (code, body) = h.chat("alice", &w1, confirm(&reply_id, &call, true)).await;
    assert_eq!(code, 409, "{body}");
    assert_eq!(h.status("alice", &w1).await, "idle");
}

#[tokio::test]
async fn a_worker_answered_on_its_own_session_shows_on_the_leaders_stream() {
    let h = Harness::start().await;
    let models = Models::start(vec![(W1, "w1 idle"), (LEAD, "noted")]).await;
    let (lead, mut sse, ask) = worker_asks(&h, &models).await;
    let w1 = member(&leader_view(&h, &lead).await, "w1");
    let reply_id = ask["value"]["reply_id"].clone();
    let call = ask["value"]["tool_calls"][0].clone();
    assert_eq!(
        h.wait_not_running("alice", &w1).await,
        "awaiting_permission"
    );

    // A reply id that is nobody's is refused as before on the leader.
    let (code, body) = h
        .chat("alice", &lead, confirm(&json!("nobody"), &call, true))
        .await;
    assert_eq!(code, 409, "{body}");

    // Denied on the worker's own session: the leader sees the refusal, the
    // file is not written, and the worker reports.
    models.push(
        W1,
        calls(&[("TeamSay", json!({"content": "write refused", "to": "Lead"}))]),
    );
    models.push(W1, answer("reported"));
    let (code, body) = h.chat("alice", &w1, confirm(&reply_id, &call, false)).await;
    assert_eq!(code, 200, "{body}");
    let answered = custom(&mut sse, "team_confirmation_answered").await;
    assert_eq!(answered["value"]["answered_on"], "member");
    assert_eq!(answered["value"]["results"][0]["confirmed"], false);
    wait_for(&h, &lead, "w1's report", has("write refused")).await;
    let written = h.workspace_dir("alice", &lead.agent_id).join("note.txt");
    assert!(!written.exists());
}
