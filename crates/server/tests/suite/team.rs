//! Agent teams through the service: a leader and two workers exchanging
//! messages (a model server that answers each agent by its system
//! prompt), the team in the session list, dissolving; and the refusals.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::response::IntoResponse;
use oxiscope_test_support::OpenAiScript;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, Setup};

/// Responses for the agent whose requests contain `marker`; `fallback`
/// when none is queued.
struct Route {
    marker: &'static str,
    queue: VecDeque<OpenAiScript>,
    fallback: &'static str,
    seen: usize,
    bodies: Vec<String>,
}

/// An OpenAI-style model server answering each agent from its own route
/// (the first route whose marker the request body contains).
#[derive(Clone)]
pub(super) struct Models {
    routes: Arc<Mutex<Vec<Route>>>,
    url: String,
}

impl Models {
    pub(super) async fn start(routes: Vec<(&'static str, &'static str)>) -> Self {
        let routes = Arc::new(Mutex::new(
            routes
                .into_iter()
                .map(|(marker, fallback)| Route {
                    marker,
                    queue: VecDeque::new(),
                    fallback,
                    seen: 0,
                    bodies: Vec::new(),
                })
                .collect::<Vec<_>>(),
        ));
        let shared = Arc::clone(&routes);
        let app = axum::Router::new().fallback(move |body: Bytes| {
            let routes = Arc::clone(&shared);
            async move {
                let text = String::from_utf8_lossy(&body).into_owned();
                let script = {
                    let mut routes = routes.lock().unwrap();
                    routes
                        .iter_mut()
                        .find(|r| text.contains(r.marker))
                        .map(|r| {
                            r.seen += 1;
                            r.bodies.push(text.clone());
                            r.queue.pop_front().unwrap_or_else(|| answer(r.fallback))
                        })
                };
                let Some(script) = script else {
                    return (axum::http::StatusCode::NOT_IMPLEMENTED, "no route").into_response();
                };
                let body: String = script
                    .payloads()
                    .iter()
                    .map(|p| format!("data: {p}\n\n"))
                    .collect();
                ([("content-type", "text/event-stream")], body).into_response()
            }
        });
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { routes, url }
    }

    pub(super) fn push(&self, marker: &str, script: OpenAiScript) {
        let mut routes = self.routes.lock().unwrap();
        let route = routes.iter_mut().find(|r| r.marker == marker).unwrap();
        route.queue.push_back(script);
    }

    fn bodies(&self, marker: &str) -> Vec<String> {
        let routes = self.routes.lock().unwrap();
        routes
            .iter()
            .find(|r| r.marker == marker)
            .unwrap()
            .bodies
            .clone()
    }

    fn seen(&self, marker: &str) -> usize {
        let routes = self.routes.lock().unwrap();
        routes.iter().find(|r| r.marker == marker).unwrap().seen
    }
}

pub(super) fn answer(text: &str) -> OpenAiScript {
    OpenAiScript::new()
        .text(text)
        .finish("stop")
        .usage(10, 2, 0)
}

/// One response calling `calls` (`(name, arguments)`) in order.
pub(super) fn calls(calls: &[(&str, Value)]) -> OpenAiScript {
    let mut script = OpenAiScript::new();
    for (i, (name, args)) in calls.iter().enumerate() {
        script = script
            .tool_call(i, format!("call_{name}_{i}"), *name)
            .tool_args(i, args.to_string());
    }
    script.finish("tool_calls").usage(10, 2, 0)
}

pub(super) const LEAD: &str = "You are Lead.";
pub(super) const W1: &str = "You are w1, a member";
const W2: &str = "You are w2, a member";
const HELPER: &str = "You are Helper.";

async fn agent(h: &Harness, user: &str, body: Value) -> String {
    let (s, a) = h.post("/agent/", user, body).await;
    assert_eq!(s, 201, "{a}");
    a["agent_id"].as_str().unwrap().to_owned()
}

/// Alice's leader (credential on `models`), her invitable Helper, and
/// Bob's invitable agent.
pub(super) async fn setup(h: &Harness, models: &Models) -> (Setup, String, String) {
    let (s, c) = h
        .post(
            "/credential/",
            "alice",
            json!({"data": {"type": "openai_credential", "name": "m", "api_key": "sk-test", "base_url": models.url}}),
        )
        .await;
    assert_eq!(s, 201, "{c}");
    let credential_id = c["credential_id"].as_str().unwrap().to_owned();
    let agent_id = agent(h, "alice", json!({"name": "Lead", "system_prompt": LEAD})).await;
    let invitable = |name: &str| {
        json!({"name": name, "system_prompt": format!("You are {name}."),
               "invite_config": {"invitable": true, "invite_description": format!("{name} helps")}})
    };
    let helper = agent(h, "alice", invitable("Helper")).await;
    let foreign = agent(h, "bob", invitable("Spy")).await;
    let (s, sess) = h
        .post(
            "/sessions/",
            "alice",
            json!({"agent_id": agent_id, "name": "lead session",
                   "chat_model_config": {"type": "openai_credential", "credential_id": credential_id, "model": "gpt-4.1", "parameters": {}}}),
        )
        .await;
    assert_eq!(s, 201, "{sess}");
    let setup = Setup {
        credential_id,
        agent_id,
        session_id: sess["session_id"].as_str().unwrap().to_owned(),
    };
    (setup, helper, foreign)
}

/// The leader's session view from the session list.
pub(super) async fn leader_view(h: &Harness, s: &Setup) -> Value {
    let (code, list) = h
        .get(&format!("/sessions/?agent_id={}", s.agent_id), "alice")
        .await;
    assert_eq!(code, 200, "{list}");
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["session"]["id"] == s.session_id.as_str())
        .unwrap()
        .clone()
}

/// A member's session as a [`Setup`].
pub(super) fn member(view: &Value, name: &str) -> Setup {
    let m = view["team"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["agent"]["data"]["name"] == name)
        .unwrap_or_else(|| panic!("no member {name} in {view}"));
    Setup {
        credential_id: String::new(),
        agent_id: m["agent"]["id"].as_str().unwrap().to_owned(),
        session_id: m["session_id"].as_str().unwrap().to_owned(),
    }
}

/// Every message of a session, as one JSON text.
async fn transcript(h: &Harness, s: &Setup) -> String {
    h.messages("alice", s).await["messages"].to_string()
}

/// Waits until `check` holds for the session's transcript and the session
/// is idle.
pub(super) async fn wait_for(
    h: &Harness,
    s: &Setup,
    what: &str,
    check: impl Fn(&str) -> bool,
) -> String {
    for _ in 0..1000 {
        let text = transcript(h, s).await;
        if check(&text) && h.status("alice", s).await != "running" {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what}: not seen in {}", transcript(h, s).await);
}

pub(super) fn has(needle: &str) -> impl Fn(&str) -> bool + '_ {
    move |t| t.contains(needle)
}

#[tokio::test]
async fn a_team_of_three_exchanges_messages_and_dissolves() {
    let h = Harness::start().await;
    let models = Models::start(vec![
        (W1, "w1 idle"),
        (W2, "w2 idle"),
        (HELPER, "helper idle"),
        (LEAD, "noted"),
    ])
    .await;
    let (lead, helper, foreign) = setup(&h, &models).await;

    // The leader founds the team and spawns two workers; each worker gets
    // its prompt and reports to the leader with TeamSay. w2 first tries
    // leader tools, which a worker does not have.
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
            (
                "AgentCreate",
                json!({"name": "w2", "description": "counts", "prompt": "count to two"}),
            ),
        ]),
    );
    models.push(LEAD, answer("waiting for the reports"));
    models.push(
        W1,
        calls(&[("TeamSay", json!({"content": "one", "to": "Lead"}))]),
    );
    models.push(W1, answer("reported"));
    models.push(
        W2,
        calls(&[
            ("TeamCreate", json!({"name": "mutiny", "description": "x"})),
            (
                "AgentCreate",
                json!({"name": "w3", "description": "x", "prompt": "x"}),
            ),
            ("TeamDelete", json!({})),
        ]),
    );
    models.push(
        W2,
        calls(&[("TeamSay", json!({"content": "one, two", "to": "Lead"}))]),
    );
    models.push(W2, answer("reported"));
    let (code, body) = h.chat("alice", &lead, user_msg("count with a team")).await;
    assert_eq!(code, 200, "{body}");

    let view = wait_for(&h, &lead, "both reports", |t| {
        t.contains(r#"<team-message from=\"w1\">\none\n</team-message>"#)
            && t.contains(r#"<team-message from=\"w2\">\none, two\n</team-message>"#)
    })
    .await;
    assert!(view.contains("Team "), "{view}");

    // The session list shows the team: leader, two created workers.
    let view = leader_view(&h, &lead).await;
    let team_id = view["session"]["team_id"].as_str().unwrap().to_owned();
    assert_eq!(view["team"]["team"]["id"], team_id.as_str());
    assert_eq!(view["team"]["team"]["session_id"], lead.session_id.as_str());
    assert_eq!(view["team"]["team"]["data"]["name"], "crew");
    assert_eq!(view["team"]["leader_agent"]["id"], lead.agent_id.as_str());
    let roles: Vec<&str> = view["team"]["team"]["data"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["created", "created"]);
    let w1 = member(&view, "w1");
    let w2 = member(&view, "w2");
    assert_eq!(view["team"]["members"][0]["agent"]["source"], "team");
    assert!(
        view["team"]["members"][0]["agent"]["data"]
            .get("source")
            .is_none()
    );
    // The workers are the team's: listed with it, not among the user's agents.
    let (_, agents) = h.get("/agent/", "alice").await;
    let listed: Vec<&str> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert!(listed.contains(&lead.agent_id.as_str()), "{agents}");
    assert!(!listed.contains(&w1.agent_id.as_str()), "{agents}");
    assert!(!listed.contains(&w2.agent_id.as_str()), "{agents}");
    assert!(
        agents["agents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["source"] == "user")
    );

    // Each worker got its task from the leader as a team message, and its
    // session is in the team and marked as minted by it.
    let w1_text = wait_for(&h, &w1, "w1's report", has("Delivered to 1 recipient")).await;
    assert!(
        w1_text.contains(r#"<team-message from=\"Lead\">\ncount to one\n</team-message>"#),
        "{w1_text}"
    );
    let (_, w1_list) = h
        .get(&format!("/sessions/?agent_id={}", w1.agent_id), "alice")
        .await;
    assert_eq!(
        w1_list["sessions"][0]["session"]["team_id"],
        team_id.as_str()
    );
    assert_eq!(
        w1_list["sessions"][0]["session"]["origin"],
        json!({"type": "team"})
    );
    assert_eq!(
        w1_list["sessions"][0]["team"]["team"]["id"],
        team_id.as_str()
    );

    // A worker cannot use the leader's tools: they are not offered to it.
    let w2_text = wait_for(&h, &w2, "w2's report", has("Delivered to 1 recipient")).await;
    for tool in ["TeamCreate", "AgentCreate", "TeamDelete"] {
        assert!(
            w2_text.contains(&format!("call_{tool}_")),
            "{tool} was called: {w2_text}"
        );
    }
    assert!(w2_text.contains("doesn't exist"), "{w2_text}");
    assert!(
        !w2_text.contains("(mutiny) created"),
        "no team was founded: {w2_text}"
    );
    let w2_requests = models.seen(W2);
    assert!(w2_requests >= 3, "{w2_requests}");
    // A worker is offered TeamSay and its own tools, nothing that makes
    // agents, sessions or schedules; the leader is offered those.
    let offered = |body: &str| -> Vec<String> {
        let body: Value = serde_json::from_str(body).unwrap();
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let worker_tools = offered(&models.bodies(W2)[0]);
    assert!(
        worker_tools.iter().any(|t| t == "TeamSay"),
        "{worker_tools:?}"
    );
    for leader_only in ["TeamCreate", "AgentCreate", "TeamDelete", "ScheduleCreate"] {
        assert!(
            !worker_tools.iter().any(|t| t == leader_only),
            "{worker_tools:?}"
        );
    }
    let leader_tools = offered(&models.bodies(LEAD)[0]);
    assert!(
        leader_tools.iter().any(|t| t == "ScheduleCreate"),
        "{leader_tools:?}"
    );

    // Broadcast, a name that is no member, another user's agent (not a
    // candidate: only the user's own invitable agents are), and inviting
    // the user's own invitable agent.
    wait_for(&h, &lead, "leader idle", |_| true).await;
    // w1's stream, from behind what it has stored: its next run shows there.
    let cursor = h.messages("alice", &w1).await["event_cursor"].clone();
    let mut w1_stream = h.subscribe("alice", &w1, cursor.as_str()).await;
    let bob_target = format!("Spy@{}", &foreign[..8]);
    let helper_target = format!("Helper@{}", &helper[..8]);
    models.push(
        LEAD,
        calls(&[
            ("TeamSay", json!({"content": "wrap up", "to": null})),
            ("TeamSay", json!({"content": "psst", "to": "nobody"})),
            (
                "AgentInvite",
                json!({"target": bob_target, "prompt": "spy"}),
            ),
            (
                "AgentInvite",
                json!({"target": helper_target, "prompt": "help out"}),
            ),
        ]),
    );
    models.push(LEAD, answer("sent"));
    let (code, body) = h.chat("alice", &lead, user_msg("tell them")).await;
    assert_eq!(code, 200, "{body}");
    let text = wait_for(&h, &lead, "the broadcast", has("(broadcast)")).await;
    assert!(
        text.contains("Delivered to 2 recipient(s) (broadcast)."),
        "{text}"
    );
    assert!(
        text.contains(r#"no team member is named \"nobody\""#),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            r#"\"{bob_target}\" is not one of \"{helper_target}\""#
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            r#"Invited \"{helper_target}\" into team \"crew\""#
        )),
        "{text}"
    );
    for worker in [&w1, &w2] {
        wait_for(&h, worker, "the broadcast", has("wrap up")).await;
    }
    let events = tokio::time::timeout(Duration::from_secs(10), w1_stream.until("REPLY_END"))
        .await
        .expect("w1's run on its stream");
    let kinds = super::common::types(&events);
    assert_eq!(kinds.first(), Some(&"REPLY_START"), "{kinds:?}");
    assert!(
        serde_json::to_string(&events).unwrap().contains("w1 idle"),
        "{events:?}"
    );

    // The borrowed Helper session works on its task.
    let view = leader_view(&h, &lead).await;
    let helper_member = member(&view, "Helper");
    assert_eq!(helper_member.agent_id, helper);
    let helper_text = wait_for(&h, &helper_member, "the invite", has("help out")).await;
    // A member that ends without reporting is reminded (three times).
    assert_eq!(
        helper_text
            .matches("Before you end your turn, report your result")
            .count(),
        3,
        "{helper_text}"
    );
    let storage = h.state.storage();
    assert!(
        storage.get_agent("bob", &foreign).await.unwrap().is_some(),
        "Bob's agent is untouched"
    );

    // Dissolving: created workers go with their sessions, the invited
    // agent stays (its borrowed session goes), the leader leaves the team.
    models.push(LEAD, calls(&[("TeamDelete", json!({}))]));
    models.push(LEAD, answer("done"));
    let (code, body) = h.chat("alice", &lead, user_msg("finish")).await;
    assert_eq!(code, 200, "{body}");
    let text = wait_for(&h, &lead, "the dissolution", has("dissolved")).await;
    assert!(
        text.contains(&format!("Team {team_id} dissolved")),
        "{text}"
    );
    let view = leader_view(&h, &lead).await;
    assert_eq!(view["session"]["team_id"], Value::Null);
    assert_eq!(view["team"], Value::Null);
    for worker in [&w1, &w2] {
        assert!(
            storage
                .get_agent("alice", &worker.agent_id)
                .await
                .unwrap()
                .is_none(),
            "a created worker is deleted"
        );
        assert!(
            storage
                .get_session("alice", &worker.session_id)
                .await
                .unwrap()
                .is_none()
        );
    }
    assert!(
        storage.get_agent("alice", &helper).await.unwrap().is_some(),
        "an invited agent stays"
    );
    assert!(
        storage
            .get_session("alice", &helper_member.session_id)
            .await
            .unwrap()
            .is_none(),
        "its borrowed session goes"
    );
}

#[tokio::test]
async fn deleting_the_leader_session_dissolves_its_team() {
    let h = Harness::start().await;
    let models = Models::start(vec![(W1, "w1 idle"), (LEAD, "noted")]).await;
    let (lead, _, _) = setup(&h, &models).await;
    models.push(
        LEAD,
        calls(&[
            ("TeamCreate", json!({"name": "crew", "description": "d"})),
            (
                "AgentCreate",
                json!({"name": "w1", "description": "d", "prompt": "wait"}),
            ),
            (
                "AgentCreate",
                json!({"name": "w1", "description": "twin", "prompt": "x"}),
            ),
            (
                "AgentCreate",
                json!({"name": "a@b", "description": "d", "prompt": "x"}),
            ),
            ("TeamCreate", json!({"name": "again", "description": "d"})),
        ]),
    );
    models.push(LEAD, answer("ok"));
    let (code, body) = h.chat("alice", &lead, user_msg("go")).await;
    assert_eq!(code, 200, "{body}");
    let text = wait_for(&h, &lead, "the refusals", has("must be 1 to 64 letters")).await;
    assert!(
        text.contains(r#"a team member named \"w1\" exists already"#),
        "{text}"
    );
    assert!(text.contains("already part of team"), "{text}");
    let view = leader_view(&h, &lead).await;
    assert_eq!(
        view["team"]["members"].as_array().unwrap().len(),
        1,
        "{view}"
    );
    let w1 = member(&view, "w1");
    wait_for(&h, &w1, "w1's task", has("wait")).await;

    let (code, body) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/sessions/{}?agent_id={}", lead.session_id, lead.agent_id),
            "alice",
            None,
        )
        .await;
    assert_eq!(code, 204, "{body}");
    let storage = h.state.storage();
    assert!(
        storage
            .get_agent("alice", &w1.agent_id)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        storage
            .get_session("alice", &w1.session_id)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn operator_templates_give_the_leader_a_choice_of_workers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("explorer.json"),
        json!({
            "type": "explorer",
            "description": "Read-only investigators.",
            "system_prompt_template": "You are {member_name}, an explorer for {leader_name} in '{team_name}'.",
            "permission_context": {"mode": "explore"},
            "override_leader_mode": true,
        })
        .to_string(),
    )
    .unwrap();
    let templates = oxiscope_server::TeamTemplates::load_dir(dir.path()).unwrap();
    let h = Harness::start_custom(oxiscope_server::AuthMode::DevHeader, move |c| {
        c.with_workspace(oxiscope_server::WorkspaceMode::Local)
            .with_team_templates(templates)
    })
    .await;
    const X1: &str = "You are x1, an explorer";
    let models = Models::start(vec![(X1, "x1 idle"), (LEAD, "noted")]).await;
    let (lead, _, _) = setup(&h, &models).await;
    models.push(
        LEAD,
        calls(&[
            ("TeamCreate", json!({"name": "crew", "description": "d"})),
            ("AgentCreate", json!({"name": "x1", "description": "d", "prompt": "look", "subagent_type": "explorer"})),
        ]),
    );
    models.push(
        LEAD,
        calls(&[(
            "AgentCreate",
            json!({"name": "x2", "description": "d", "prompt": "x", "subagent_type": "nope"}),
        )]),
    );
    models.push(
        X1,
        calls(&[("TeamSay", json!({"content": "seen", "to": "Lead"}))]),
    );
    let (code, body) = h.chat("alice", &lead, user_msg("explore")).await;
    assert_eq!(code, 200, "{body}");
    let text = wait_for(
        &h,
        &lead,
        "x1's report",
        has("team-message from=\\\"x1\\\""),
    )
    .await;
    assert!(
        text.contains(r#"\"nope\" is not one of \"default\" or \"explorer\""#),
        "{text}"
    );

    // The leader was offered the types.
    let first: Value = serde_json::from_str(&models.bodies(LEAD)[0]).unwrap();
    let create = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "AgentCreate")
        .unwrap();
    assert_eq!(
        create["function"]["parameters"]["properties"]["subagent_type"]["enum"],
        json!(["default", "explorer"])
    );

    // x1 was made from the explorer template: its prompt, its mode.
    let view = leader_view(&h, &lead).await;
    let x1 = member(&view, "x1");
    let storage = h.state.storage();
    let agent = storage
        .get_agent("alice", &x1.agent_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        agent.data["system_prompt"],
        "You are x1, an explorer for Lead in 'crew'."
    );
    let session = storage
        .get_session("alice", &x1.session_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(session.state["permission_context"]["mode"], "explore");
}

#[tokio::test]
async fn a_member_turn_that_fails_is_reported_to_the_leader() {
    let h = Harness::start().await;
    // No route answers w9: its model calls fail.
    let models = Models::start(vec![(LEAD, "noted")]).await;
    let (lead, _, _) = setup(&h, &models).await;
    models.push(
        LEAD,
        calls(&[
            ("TeamCreate", json!({"name": "crew", "description": "d"})),
            (
                "AgentCreate",
                json!({"name": "w9", "description": "d", "prompt": "try"}),
            ),
        ]),
    );
    let (code, body) = h.chat("alice", &lead, user_msg("go")).await;
    assert_eq!(code, 200, "{body}");
    let text = wait_for(&h, &lead, "the notice", has("[notice from the service]")).await;
    assert!(
        text.contains("w9's last turn ended before it reported: it failed"),
        "{text}"
    );
    assert!(text.contains(r#"<team-message from=\"w9\">"#), "{text}");
}

#[tokio::test]
async fn a_team_stays_within_the_operators_size() {
    let h = Harness::start_with_policy(oxiscope_server::TenantPolicy {
        max_team_members: 1,
        private_model_endpoints: true,
        ..oxiscope_server::TenantPolicy::default()
    })
    .await;
    let models = Models::start(vec![(W1, "w1 idle"), (LEAD, "noted")]).await;
    let (lead, _, _) = setup(&h, &models).await;
    models.push(
        LEAD,
        calls(&[
            ("TeamCreate", json!({"name": "crew", "description": "d"})),
            (
                "AgentCreate",
                json!({"name": "w1", "description": "d", "prompt": "wait"}),
            ),
            (
                "AgentCreate",
                json!({"name": "w2", "description": "d", "prompt": "wait"}),
            ),
        ]),
    );
    let (code, body) = h.chat("alice", &lead, user_msg("go")).await;
    assert_eq!(code, 200, "{body}");
    let text = wait_for(&h, &lead, "the refusal", has("the most a team may have")).await;
    assert!(text.contains("(max_team_members 1)"), "{text}");
    let view = leader_view(&h, &lead).await;
    assert_eq!(view["team"]["members"].as_array().unwrap().len(), 1);
}
