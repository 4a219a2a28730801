//! The UI in Chromium on a team and on a parked external execution: the
//! Team tab's roster (the team's name, its leader, a member, whose session
//! "Open" shows), and the form of calls to run outside the agent (a state
//! AgentScope parked on one, moved over: the pending call, a typed result,
//! the reply resuming).

use serde_json::{Value, json};

use super::super::chat::user_msg;
use super::super::common::{Harness, text_answer};
use super::super::team::{
    LEAD, Models, W1, answer, calls, has, leader_view, member, setup, wait_for,
};
use super::super::webdriver::Browser;
use super::sign_in;

#[tokio::test]
async fn the_team_tab_shows_the_roster_and_opens_a_members_session() {
    let Some(b) = Browser::start().await else {
        return;
    };
    let h = Harness::start().await;
    let models = Models::start(vec![(W1, "w1 has counted"), (LEAD, "noted")]).await;
    let (lead, _, _) = setup(&h, &models).await;
    models.push(
        LEAD,
        calls(&[
            (
                "TeamCreate",
                json!({"name": "crew", "description": "count things"}),
            ),
            (
                "AgentCreate",
                json!({"name": "w1", "description": "counts", "prompt": "count to one"}),
            ),
        ]),
    );
    models.push(LEAD, answer("the crew is at work"));
    let (code, body) = h.chat("alice", &lead, user_msg("count with a team")).await;
    assert_eq!(code, 200, "{body}");
    wait_for(&h, &lead, "the leader's reply", has("the crew is at work")).await;
    let w1 = member(&leader_view(&h, &lead).await, "w1");
    wait_for(&h, &w1, "w1's turn", has("w1 has counted")).await;

    sign_in(&b, &h.base, "alice").await;
    b.select("#agent-select", &lead.agent_id).await;
    b.wait_text(".session-title", "lead session").await;
    b.click("#toggle-files").await;
    b.click(".tab[data-tab=team]").await;
    b.wait_text(".tab-content .team h3", "crew").await;
    b.wait_text(".roster li strong", "Lead").await;
    b.wait_text(".roster li.member[data-member=w1]", "w1").await;
    // The leader's row is this session: only the member has "Open".
    let opens = b.texts(".roster .open-member").await;
    assert_eq!(opens, vec!["Open".to_owned()]);
    b.screenshot("17-team-roster").await;
    b.click(".roster li.member[data-member=w1] .open-member")
        .await;
    b.wait_text(".session-title", "w1: ").await;
    b.wait_text(".messages", "count to one").await;
    b.wait_text(".msg.role-assistant .md", "w1 has counted")
        .await;
    // The member's own Team tab says which row it is.
    b.click(".tab[data-tab=team]").await;
    b.wait_text(".roster li.member[data-member=w1]", "this session")
        .await;
    b.quit().await;
}

/// A file of AgentScope's external-execution scenario.
fn reference(name: &str) -> Value {
    let path = format!(
        "{}/../../fixtures/agentscope-2.0.11/streams/d_external_execution.{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[tokio::test]
async fn a_reply_parked_on_an_external_call_takes_its_typed_result_and_resumes() {
    let Some(b) = Browser::start().await else {
        return;
    };
    let h = Harness::start().await;
    let s = h.setup("ext").await;
    // AgentScope's reply parked on the external call OpenOnClient, with
    // the question it answers, as the session's state and messages.
    let question = reference("1-pause.input");
    let parked = reference("1-pause.msg");
    let stored = h.stored_session("ext", &s).await;
    let mut state = stored.state.clone();
    state["context"] = json!([question, parked]);
    state["reply_context"]["reply_id"] = parked["id"].clone();
    h.state
        .storage()
        .commit_reply(
            &s.session_id,
            stored.revision,
            &state,
            &[question.clone(), parked.clone()],
        )
        .await
        .unwrap();
    assert_eq!(h.status("ext", &s).await, "awaiting_external_result");

    h.fake
        .push(text_answer("Example.com is open in your browser."));
    sign_in(&b, &h.base, "ext").await;
    b.wait_text(".external .external-call", "OpenOnClient")
        .await;
    b.wait_text("#session-list .badge", "awaiting external result")
        .await;
    b.wait_text(".external .external-call", "https://example.com")
        .await;
    b.screenshot("18-external-form").await;
    b.type_into(".external-output", "Opened in a new tab.")
        .await;
    b.click(".external .send-results").await;
    b.wait_text(
        ".msg.role-assistant .md",
        "Example.com is open in your browser.",
    )
    .await;
    b.wait_gone(".external").await;
    b.wait_text(".tool .tool-result", "Opened in a new tab.")
        .await;
    b.wait_text(".tool .badge", "success").await;
    // The model got the typed result.
    let request = String::from_utf8_lossy(&h.fake.requests().last().unwrap().body).into_owned();
    assert!(request.contains("Opened in a new tab."), "{request}");
    assert_eq!(h.status("ext", &s).await, "idle");
    b.quit().await;
}
