//! The operator's policy and the fields that used to be accepted and
//! ignored: permission modes, confirmation rules, model endpoints, one
//! session per user, agent and workspace, agents taking their sessions
//! along.

use oxiscope_server::TenantPolicy;
use oxiscope_test_support::OpenAiScript;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, text_answer};

/// A run of a session whose credential's `base_url` is the loopback fake
/// server, under `policy`: its events up to `REPLY_END`. Under a policy
/// that refuses such a credential when it is saved, it is written to the
/// store directly, as one saved before the policy changed (or whose name
/// later resolved elsewhere) would be.
async fn run_on_loopback(policy: TenantPolicy) -> (Harness, Vec<Value>) {
    let refused_when_saved = !policy.private_model_endpoints;
    let h = Harness::start_with_policy(policy).await;
    let s = if refused_when_saved {
        let public = json!({"data": {"type": "openai_credential", "name": "fake", "api_key": "sk-x", "base_url": "http://93.184.215.14/v1"}});
        let (code, body) = h.post("/credential/", "u", public).await;
        assert_eq!(code, 201, "{body}");
        let id = body["credential_id"].as_str().unwrap();
        let mut record = h
            .state
            .storage()
            .get_credential("u", id)
            .await
            .unwrap()
            .unwrap();
        let plain = json!({"type": "openai_credential", "id": id, "name": "fake", "api_key": "sk-x", "base_url": h.fake.url("/v1")});
        record.sealed = h
            .state
            .sealer()
            .seal(
                oxiscope_server::Purpose::Credential,
                plain.to_string().as_bytes(),
            )
            .unwrap();
        h.state.storage().update_credential(&record).await.unwrap();
        h.setup_with_credential("u", id).await
    } else {
        h.setup("u").await
    };
    h.fake.push(text_answer("Hello from inside."));
    let mut sse = h.subscribe("u", &s, None).await;
    let (code, body) = h.chat("u", &s, user_msg("Hi")).await;
    assert_eq!(code, 200, "{body}");
    let events = sse.until("REPLY_END").await;
    (h, events)
}

#[tokio::test]
async fn by_default_a_loopback_model_endpoint_is_refused_and_gets_no_request() {
    let (h, events) = run_on_loopback(TenantPolicy::default()).await;

    let end = events.last().unwrap();
    assert_eq!(end["finished_reason"], "error", "{end}");
    let shown = serde_json::to_string(&events).unwrap();
    let endpoint = format!(
        "the model endpoint {}/v1/chat/completions",
        h.fake.base_url()
    );
    assert!(
        shown.contains(&endpoint)
            && shown.contains("a loopback address (127.0.0.1)")
            && shown.contains("restricted to public addresses"),
        "{shown}"
    );
    assert_eq!(h.fake.request_count(), 0);
}

#[tokio::test]
async fn a_credential_at_a_private_address_is_refused_when_saved_naming_the_switch() {
    let h = Harness::start_with_policy(TenantPolicy::default()).await;
    for base_url in [
        h.fake.url("/v1"),
        "http://localhost:11434/v1".to_owned(),
        "http://10.1.2.3:8000/v1".to_owned(),
        "http://[::1]:8000/v1".to_owned(),
        "http://169.254.169.254/v1".to_owned(),
    ] {
        let (code, body) = h
            .post(
                "/credential/",
                "u",
                json!({"data": {"type": "openai_credential", "api_key": "sk-x", "base_url": base_url}}),
            )
            .await;
        assert_eq!(code, 403, "{base_url}: {body}");
        let detail = body["detail"].as_str().unwrap();
        assert!(
            detail.contains("--allow-private-model-endpoints") && detail.contains(&base_url),
            "{detail}"
        );
    }
    // Ollama's `host` is its endpoint too.
    let (code, body) = h
        .post(
            "/credential/",
            "u",
            json!({"data": {"type": "ollama_credential", "host": "http://127.0.0.1:11434"}}),
        )
        .await;
    assert_eq!(code, 403, "{body}");
    // A public endpoint is kept, and cannot be moved to a private one.
    let (code, body) = h
        .post(
            "/credential/",
            "u",
            json!({"data": {"type": "openai_credential", "api_key": "sk-x", "base_url": "http://93.184.215.14/v1"}}),
        )
        .await;
    assert_eq!(code, 201, "{body}");
    let id = body["credential_id"].as_str().unwrap();
    let (code, body) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/credential/{id}"),
            "u",
            Some(json!({"data": {"base_url": "http://127.0.0.1:9/v1"}})),
        )
        .await;
    assert_eq!(code, 403, "{body}");
    let (_, list) = h.get("/credential/", "u").await;
    assert_eq!(list["total"], 1, "{list}");
    assert!(list.to_string().contains("93.184.215.14"), "{list}");
}

#[tokio::test]
async fn with_private_model_endpoints_allowed_the_same_run_completes() {
    let allowed = TenantPolicy {
        private_model_endpoints: true,
        ..TenantPolicy::default()
    };
    let (h, events) = run_on_loopback(allowed).await;

    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    assert_eq!(h.fake.request_count(), 1);
}

#[tokio::test]
async fn bypass_is_refused_unless_the_operator_allows_it() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let (code, body) = h
        .post(
            "/agent/",
            "u",
            json!({"name": "x", "system_prompt": "y", "permission_mode": "bypass"}),
        )
        .await;
    assert_eq!(code, 403, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("allowed_modes"),
        "{body}"
    );
    let (code, body) = h
        .post(
            "/sessions/",
            "u",
            json!({"agent_id": s.agent_id, "workspace_id": "other", "permission_mode": "bypass"}),
        )
        .await;
    assert_eq!(code, 403, "{body}");
    let (code, body) = h
        .patch_session("u", &s, json!({"permission_mode": "bypass"}))
        .await;
    assert_eq!(code, 403, "{body}");
    // An unknown mode is a validation error, not a policy one.
    let (code, _) = h
        .post(
            "/agent/",
            "u",
            json!({"name": "x", "system_prompt": "y", "permission_mode": "yolo"}),
        )
        .await;
    assert_eq!(code, 422);

    let mut open = TenantPolicy::default();
    open.allowed_modes
        .push(oxiscope_permission::PermissionMode::Bypass);
    let h = Harness::start_with_policy(open).await;
    let (code, body) = h
        .post(
            "/agent/",
            "u",
            json!({"name": "x", "system_prompt": "y", "permission_mode": "bypass"}),
        )
        .await;
    assert_eq!(code, 201, "{body}");
}

/// Parks a reply on a Write call that asks for confirmation; returns the
/// REQUIRE_USER_CONFIRM event.
async fn park_write(h: &Harness, s: &super::common::Setup) -> Value {
    let path = h.tool_dir("u", &s.agent_id).join("note.txt");
    h.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_1", "Write")
            .tool_args(0, json!({"file_path": path, "content": "x"}).to_string())
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response(),
    );
    let mut sse = h.subscribe("u", s, None).await;
    let (code, _) = h.chat("u", s, user_msg("write")).await;
    assert_eq!(code, 200);
    let events = sse.until("REQUIRE_USER_CONFIRM").await;
    assert_eq!(h.wait_not_running("u", s).await, "awaiting_permission");
    events.last().unwrap().clone()
}

#[tokio::test]
async fn a_confirmation_may_only_add_the_rules_suggested_for_its_call() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let ask = park_write(&h, &s).await;
    let call = ask["tool_calls"][0].clone();
    let suggested = call["suggested_rules"].clone();
    assert!(
        !suggested.as_array().unwrap().is_empty(),
        "the agent suggests a rule for the write: {call}"
    );
    let confirm = |rules: Value| {
        json!({"type": "USER_CONFIRM_RESULT", "reply_id": ask["reply_id"],
               "confirm_results": [{"confirmed": true, "tool_call": call, "rules": rules}]})
    };
    // A rule allowing every Bash command rides along: refused, nothing
    // changes.
    let foreign = json!([{"tool_name": "Bash", "rule_content": null, "behavior": "allow", "source": "session"}]);
    let (code, body) = h.chat("u", &s, confirm(foreign)).await;
    assert_eq!(code, 403, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("suggested"),
        "{body}"
    );
    let too_many = Value::Array(vec![suggested[0].clone(); 5]);
    let (code, body) = h.chat("u", &s, confirm(too_many)).await;
    assert_eq!(code, 403, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("max_confirm_rules"),
        "{body}"
    );
    assert_eq!(h.status("u", &s).await, "awaiting_permission");

    // The suggested rule is fine.
    h.fake.push(text_answer("Written."));
    let (code, body) = h.chat("u", &s, confirm(suggested.clone())).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    let stored = h.stored_session("u", &s).await;
    let rules = &stored.state["permission_context"]["allow_rules"];
    assert!(
        rules
            .to_string()
            .contains(suggested[0]["tool_name"].as_str().unwrap()),
        "{rules}"
    );
    assert!(!rules.to_string().contains("\"Bash\""), "{rules}");
}

#[tokio::test]
async fn concurrent_creates_of_one_session_make_one() {
    let h = std::sync::Arc::new(Harness::start().await);
    let s = h.setup("u").await;
    let mut tasks = Vec::new();
    for i in 0..12 {
        let h = std::sync::Arc::clone(&h);
        let agent = s.agent_id.clone();
        tasks.push(tokio::spawn(async move {
            h.post(
                "/sessions/",
                "u",
                json!({"agent_id": agent, "workspace_id": "race", "name": format!("n{i}")}),
            )
            .await
        }));
    }
    let mut ids = std::collections::BTreeSet::new();
    for task in tasks {
        let (code, body) = task.await.unwrap();
        assert_eq!(code, 201, "{body}");
        ids.insert(body["session_id"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids.len(), 1, "{ids:?}");
}

#[tokio::test]
async fn deleting_an_agent_takes_its_sessions_along() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    h.fake.push(text_answer("hi"));
    let (code, _) = h.chat("u", &s, user_msg("hello")).await;
    assert_eq!(code, 200);
    h.wait_not_running("u", &s).await;
    let resp = h
        .call(
            reqwest::Method::DELETE,
            &format!("/agent/{}", s.agent_id),
            "u",
            None,
        )
        .await;
    assert_eq!(resp.0, 204, "{}", resp.1);
    assert!(
        h.state
            .storage()
            .get_session("u", &s.session_id)
            .await
            .unwrap()
            .is_none()
    );
    let (code, _) = h
        .get(
            &format!(
                "/sessions/{}/messages?agent_id={}",
                s.session_id, s.agent_id
            ),
            "u",
        )
        .await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn the_fallback_model_answers_when_the_first_fails() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    // A second endpoint that refuses every request.
    let broken = oxiscope_test_support::FakeServer::start().await.unwrap();
    broken.push(oxiscope_test_support::ScriptedResponse::json(
        401,
        &json!({"error": {"message": "bad key", "type": "invalid_request_error"}}),
    ));
    let (code, c) = h
        .post(
            "/credential/",
            "u",
            json!({"data": {"type": "openai_credential", "name": "broken", "api_key": "sk-broken", "base_url": broken.url("/v1")}}),
        )
        .await;
    assert_eq!(code, 201, "{c}");
    let model = |credential: &Value| json!({"type": "openai_credential", "credential_id": credential, "model": "gpt-4.1", "parameters": {}});
    let (code, body) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/sessions/{}?agent_id={}", s.session_id, s.agent_id),
            "u",
            Some(json!({"chat_model_config": model(&c["credential_id"]),
                        "fallback_chat_model_config": model(&json!(s.credential_id))})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    h.fake.push(text_answer("from the fallback"));
    let mut sse = h.subscribe("u", &s, None).await;
    let (code, _) = h.chat("u", &s, user_msg("hi")).await;
    assert_eq!(code, 200);
    let events = sse.until("REPLY_END").await;
    assert_eq!(
        events.last().unwrap()["finished_reason"],
        "completed",
        "{events:?}"
    );
    assert!(sse.raw.iter().any(|r| r.contains("from the fallback")));
    assert_eq!(broken.request_count(), 1);
}

#[tokio::test]
async fn the_sessions_cwd_is_honoured_inside_the_workspace_or_refused() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let path = format!("/sessions/{}?agent_id={}", s.session_id, s.agent_id);
    let patch = |cwd: &str| {
        h.call(
            reqwest::Method::PATCH,
            &path,
            "u",
            Some(json!({"cwd": cwd})),
        )
    };
    for bad in ["../other", "/etc", "/workspace/../x"] {
        let (code, body) = patch(bad).await;
        assert_eq!(code, 422, "{bad}: {body}");
    }
    std::fs::create_dir_all(h.workspace_dir("u", &s.agent_id).join("sub")).unwrap();
    let (code, body) = patch("/workspace/sub").await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["config"]["cwd"], "sub", "{body}");
    h.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_1", "Bash")
            .tool_args(0, json!({"command": "pwd"}).to_string())
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response(),
    );
    h.fake.push(text_answer("done"));
    let mut sse = h.subscribe("u", &s, None).await;
    let (code, _) = h.chat("u", &s, user_msg("where am I?")).await;
    assert_eq!(code, 200);
    sse.until("REPLY_END").await;
    // The run lets go of the session after REPLY_END is out.
    h.wait_not_running("u", &s).await;
    let expected = h.tool_dir("u", &s.agent_id).join("sub");
    let asked = h.fake.requests().last().unwrap().body_text();
    assert!(asked.contains(&*expected.to_string_lossy()), "{asked}");
    // A cwd that is gone is a clear error, not a run elsewhere.
    let (code, _) = patch("missing").await;
    assert_eq!(code, 200);
    let (code, body) = h.chat("u", &s, user_msg("again")).await;
    assert_eq!(code, 400, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("cwd"), "{body}");
}

/// The operator's reply budget: once a reply's model calls used it up,
/// the next step is told to answer without tools, and may not call one.
#[tokio::test]
async fn a_reply_past_the_operators_token_budget_is_told_to_answer_without_tools() {
    let h = Harness::start_custom(oxiscope_server::AuthMode::DevHeader, |mut c| {
        c.engine.reply_budget = Some(oxiscope_agent::ReplyBudgetControlMiddleware::new(100.0));
        c
    })
    .await;
    let s = h.setup("u").await;
    h.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_1", "Glob")
            .tool_args(0, json!({"pattern": "*.md"}).to_string())
            .finish("tool_calls")
            .usage(90, 20, 0)
            .response(),
    );
    h.fake.push(text_answer("Done, within budget."));
    let requests = super::knowledge::run_reply(&h, "u", &s, "Look around.").await;
    let first: Value = serde_json::from_str(&requests[0]).unwrap();
    let second: Value = serde_json::from_str(&requests[1]).unwrap();
    assert_ne!(first["tool_choice"], "none", "{first}");
    assert_eq!(second["tool_choice"], "none", "{second}");
    assert!(
        second.to_string().contains("token budget"),
        "the wrap-up hint: {second}"
    );
}

/// A user message with one image block naming `url`.
fn image_msg(url: &str) -> Value {
    json!({"name": "user", "role": "user", "content": [
        {"type": "text", "text": "Look"},
        {"type": "data", "source": {"type": "url", "url": url, "media_type": "image/png"}},
    ]})
}

/// Kept, a media block the session's model may not read failed every
/// later reply of the session: it is refused at the door instead, and
/// the session goes on.
#[tokio::test]
async fn media_at_a_private_address_is_refused_before_it_is_stored() {
    let h = Harness::start_with_policy(TenantPolicy {
        private_model_endpoints: true,
        ..TenantPolicy::default()
    })
    .await;
    let s = h.setup("u").await;
    for (url, kind) in [
        ("http://127.0.0.1:9/cat.png", "loopback"),
        ("http://169.254.169.254/latest/meta-data", "link-local"),
        ("https://10.0.0.7/cat.png", "private"),
        ("http://localhost:9/cat.png", "loopback"),
    ] {
        let (code, body) = h.chat("u", &s, image_msg(url)).await;
        assert_eq!(code, 422, "{url}: {body}");
        let msg = body["detail"][0]["msg"].as_str().unwrap();
        assert!(
            msg.starts_with(&format!("cannot use media from {url}")) && msg.contains(kind),
            "{msg}"
        );
    }
    assert_eq!(h.messages("u", &s).await["messages"], json!([]));
    // The session still answers.
    h.fake.push(text_answer("Still here."));
    let mut sse = h.subscribe("u", &s, None).await;
    let (code, body) = h.chat("u", &s, user_msg("hi")).await;
    assert_eq!(code, 200, "{body}");
    let events = sse.until("REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
}

#[tokio::test]
async fn media_the_session_may_not_read_is_refused_before_it_is_stored() {
    let h = Harness::start_with_policy(TenantPolicy {
        private_model_endpoints: true,
        remote_media: false,
        ..TenantPolicy::default()
    })
    .await;
    let s = h.setup("u").await;
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), b"\x89PNG").unwrap();
    for url in [
        format!("file://{}", outside.path().display()),
        "file:///etc/passwd".to_owned(),
        "https://example.com/cat.png".to_owned(),
        "s3://bucket/cat.png".to_owned(),
    ] {
        let (code, body) = h.chat("u", &s, image_msg(&url)).await;
        assert_eq!(code, 422, "{url}: {body}");
        let msg = body["detail"][0]["msg"].as_str().unwrap();
        assert!(msg.starts_with("cannot use media from "), "{msg}");
        assert_eq!(body["detail"][0]["loc"], json!(["body", "input"]));
    }
    // As a tool result of an external execution too.
    let external = json!({"type": "EXTERNAL_EXECUTION_RESULT", "reply_id": "r1",
        "execution_results": [{"type": "tool_result", "id": "c1", "name": "shot",
            "output": [{"type": "data", "source": {"type": "url",
                "url": "file:///etc/hostname", "media_type": "image/png"}}],
            "state": "success"}]});
    let (code, body) = h.chat("u", &s, external).await;
    assert_eq!(code, 422, "{body}");

    // Nothing was kept, and the session answers.
    assert_eq!(h.messages("u", &s).await["messages"], json!([]));
    h.fake.push(text_answer("Still here."));
    let mut sse = h.subscribe("u", &s, None).await;
    let (code, body) = h
        .chat("u", &s, image_msg("data:image/png;base64,iVBORw0KGgo="))
        .await;
    assert_eq!(code, 200, "{body}");
    let events = sse.until("REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
}
