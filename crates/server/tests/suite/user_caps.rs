//! The operator's per-user caps: chats running at once across a user's
//! sessions, and sessions kept.

use std::time::Duration;

use oxiscope_server::TenantPolicy;
use oxiscope_test_support::OpenAiScript;
use serde_json::json;

use super::chat::user_msg;
use super::common::{Harness, text_answer};

fn caps(runs: usize, sessions: usize) -> TenantPolicy {
    TenantPolicy {
        private_model_endpoints: true,
        max_concurrent_runs_per_user: runs,
        max_sessions_per_user: sessions,
        ..TenantPolicy::default()
    }
}

fn slow_answer() -> oxiscope_test_support::ScriptedResponse {
    let mut script = OpenAiScript::new();
    for i in 0..20 {
        script = script.text(format!("w{i} "));
    }
    script
        .finish("stop")
        .response_paced(2, Duration::from_millis(100))
}

#[tokio::test]
async fn a_chat_past_the_users_running_cap_is_429_and_others_are_not_held() {
    let h = Harness::start_with_policy(caps(1, 100)).await;
    let first = h.setup("u").await;
    let second = h.setup("u").await;
    let other = h.setup("v").await;
    h.fake.push(slow_answer());
    let (code, body) = h.chat("u", &first, user_msg("long story")).await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = h.chat("u", &second, user_msg("me too")).await;
    assert_eq!(code, 429, "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains("max_concurrent_runs_per_user"), "{detail}");
    // The refused session is not left locked, and another user is not held.
    assert_eq!(h.status("u", &second).await, "idle");
    h.fake.push(text_answer("Hi v."));
    assert_eq!(h.chat("v", &other, user_msg("hi")).await.0, 200);
    // Once the first chat ends, the slot is free again.
    h.wait_not_running("u", &first).await;
    h.wait_not_running("v", &other).await;
    h.fake.push(text_answer("Now."));
    let mut accepted = 0;
    for _ in 0..50 {
        let (code, _) = h.chat("u", &second, user_msg("now?")).await;
        if code == 200 {
            accepted += 1;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(accepted, 1);
}

#[tokio::test]
async fn a_session_past_the_users_cap_is_429_naming_the_setting() {
    let h = Harness::start_with_policy(caps(16, 1)).await;
    let s = h.setup("u").await;
    let (code, body) = h
        .post(
            "/sessions/",
            "u",
            json!({"agent_id": s.agent_id, "workspace_id": "another"}),
        )
        .await;
    assert_eq!(code, 429, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("max_sessions_per_user"),
        "{body}"
    );
    // Updating the one it keeps is not a new session.
    let (code, body) = h
        .post("/sessions/", "u", json!({"agent_id": s.agent_id}))
        .await;
    assert_eq!(code, 201, "{body}");
    // Another user is not counted with it.
    h.setup("v").await;
}

#[tokio::test]
async fn a_workspace_past_the_users_live_cap_is_429_until_one_closes() {
    let h = Harness::start_with_policy(TenantPolicy {
        max_live_workspaces_per_user: 1,
        ..caps(16, 100)
    })
    .await;
    // Two agents: two workspaces (one per agent).
    let first = h.setup("u").await;
    let second = h.setup("u").await;
    h.fake.push(text_answer("One."));
    let mut sse = h.subscribe("u", &first, None).await;
    assert_eq!(h.chat("u", &first, user_msg("hi")).await.0, 200);
    sse.until("REPLY_END").await;
    h.wait_not_running("u", &first).await;
    // The second workspace would be one more open for u.
    let listing = format!(
        "/workspace/status?agent_id={}&session_id={}",
        second.agent_id, second.session_id
    );
    let (code, body) = h.get(&listing, "u").await;
    assert_eq!(code, 429, "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains("max_live_workspaces_per_user"), "{detail}");
    // Another user is not held; the first workspace is still served.
    let other = h.setup("v").await;
    let other_listing = format!(
        "/workspace/status?agent_id={}&session_id={}",
        other.agent_id, other.session_id
    );
    assert_eq!(h.get(&other_listing, "v").await.0, 200);
    // Once u's open workspace is closed, the second one opens.
    h.state.workspaces().close("u", &first.agent_id).await;
    let (code, body) = h.get(&listing, "u").await;
    assert_eq!(code, 200, "{body}");
}
