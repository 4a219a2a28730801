//! Human in the loop through the service: a tool call that needs
//! confirmation parks the session; `/chat` resumes it; interrupt closes it.

use oxiscope_test_support::OpenAiScript;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, Setup, Sse, text_answer, types};

/// The model asks to write `note.txt` in the agent's workspace (a write
/// asks for confirmation in the default mode).
fn write_call(h: &Harness, s: &Setup) -> oxiscope_test_support::ScriptedResponse {
    let path = h.tool_dir("u", &s.agent_id).join("note.txt");
    let args = json!({"file_path": path, "content": "written by the agent"}).to_string();
    OpenAiScript::new()
        .tool_call(0, "call_1", "Write")
        .tool_args(0, args)
        .finish("tool_calls")
        .usage(10, 5, 0)
        .response()
}

async fn park(h: &Harness, s: &Setup, sse: &mut Sse) -> Value {
    h.fake.push(write_call(h, s));
    let (code, _) = h.chat("u", s, user_msg("write a note")).await;
    assert_eq!(code, 200);
    let events = sse.until("REQUIRE_USER_CONFIRM").await;
    assert_eq!(types(&events)[0], "REPLY_START");
    assert_eq!(h.wait_not_running("u", s).await, "awaiting_permission");
    events.last().unwrap().clone()
}

#[tokio::test]
async fn a_confirmation_resumes_the_parked_reply_through_chat() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let mut sse = h.subscribe("u", &s, None).await;
    let ask = park(&h, &s, &mut sse).await;
    let reply_id = ask["reply_id"].as_str().unwrap();
    let call = ask["tool_calls"][0].clone();
    assert_eq!(call["name"], "Write");

    // A resume naming another reply, and an external result while a
    // confirmation is awaited, are refused without touching the state.
    let wrong = json!({"type": "USER_CONFIRM_RESULT", "reply_id": "other", "confirm_results": []});
    let (code, body) = h.chat("u", &s, wrong).await;
    assert_eq!(code, 400, "{body}");
    let external =
        json!({"type": "EXTERNAL_EXECUTION_RESULT", "reply_id": reply_id, "execution_results": []});
    let (code, _) = h.chat("u", &s, external).await;
    assert_eq!(code, 409);
    assert_eq!(h.status("u", &s).await, "awaiting_permission");

    h.fake.push(text_answer("The note is written."));
    let confirm = json!({
        "type": "USER_CONFIRM_RESULT",
        "reply_id": reply_id,
        "confirm_results": [{"confirmed": true, "tool_call": call}],
    });
    let (code, body) = h.chat("u", &s, confirm).await;
    assert_eq!(code, 200, "{body}");
    let events = sse.until("REPLY_END").await;
    let kinds = types(&events);
    // The answer is echoed first, as AgentScope does.
    assert_eq!(kinds[..2], ["USER_CONFIRM_RESULT", "REPLY_START"]);
    assert_eq!(events[0]["reply_id"], reply_id);
    assert_eq!(events[1]["reply_id"], reply_id);
    assert!(kinds.contains(&"TOOL_RESULT_END"), "{kinds:?}");
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    assert_eq!(h.wait_not_running("u", &s).await, "idle");

    let written = h.workspace_dir("u", &s.agent_id).join("note.txt");
    assert_eq!(
        std::fs::read_to_string(written).unwrap(),
        "written by the agent"
    );
    // The stored reply was replaced in place, not duplicated.
    let page = h.messages("u", &s).await;
    let msgs = page["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2, "{page}");
    assert_eq!(msgs[1]["id"], reply_id);
    assert_eq!(msgs[1]["finished_reason"], "completed");

    // Nothing is parked any more: another confirmation is a conflict.
    let again = json!({"type": "USER_CONFIRM_RESULT", "reply_id": reply_id, "confirm_results": []});
    let (code, _) = h.chat("u", &s, again).await;
    assert_eq!(code, 409);
}

#[tokio::test]
async fn interrupting_a_parked_reply_closes_it() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let mut sse = h.subscribe("u", &s, None).await;
    let ask = park(&h, &s, &mut sse).await;
    let (code, _) = h
        .post(
            &format!(
                "/sessions/{}/interrupt?agent_id={}",
                s.session_id, s.agent_id
            ),
            "u",
            Value::Null,
        )
        .await;
    assert_eq!(code, 202);
    let events = sse.until("REPLY_END").await;
    let end = events.last().unwrap();
    assert_eq!(end["reply_id"], ask["reply_id"]);
    assert_eq!(end["finished_reason"], "interrupted");
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    let written = h.workspace_dir("u", &s.agent_id).join("note.txt");
    assert!(!written.exists());

    // Interrupting an idle session is accepted and changes nothing.
    let (code, _) = h
        .post(
            &format!(
                "/sessions/{}/interrupt?agent_id={}",
                s.session_id, s.agent_id
            ),
            "u",
            Value::Null,
        )
        .await;
    assert_eq!(code, 202);
    assert_eq!(h.status("u", &s).await, "idle");
}
