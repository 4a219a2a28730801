//! `/channels` over HTTP: the fourteen operations with AgentScope's
//! shapes, owner-scoped, credentials never shown, and a channel created
//! through the API answering a Telegram chat.

use std::time::Duration;

use oxiscope_channel::Registry;
use oxiscope_channel::telegram::Telegram;
use oxiscope_server::AuthMode;
use oxiscope_test_support::telegram::{FakeTelegram, private_message};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{Harness, Setup, text_answer};

const TOKEN: &str = "4242:server-test-secret";

async fn harness(telegram: &FakeTelegram) -> Harness {
    let registry = Registry::new().with(
        Telegram::new()
            .with_api_base(telegram.base_url())
            .with_poll_timeout(Duration::from_secs(1))
            .with_backoff(Duration::from_millis(10), Duration::from_millis(200)),
    );
    Harness::start_custom(AuthMode::DevHeader, |c| c.with_channels(registry)).await
}

fn body(s: &Setup) -> Value {
    json!({
        "channel_type": "telegram",
        "name": "Ops bot",
        "credentials": {"bot_token": TOKEN},
        "platform_config": {"only_at_reply": true},
        "routing": {"bindings": [{"match_key": "chat_id", "match_value": "*",
                                  "agent_id": s.agent_id, "session_scope": "per_chat"}]},
        "session": {"chat_model_config": {"type": "openai_credential",
                    "credential_id": s.credential_id, "model": "gpt-4.1", "parameters": {}}},
    })
}

async fn wait_state(h: &Harness, id: &str, state: &str) -> Value {
    for _ in 0..500 {
        let (code, status) = h.get(&format!("/channels/{id}/status"), "u").await;
        assert_eq!(code, 200, "{status}");
        if status["state"] == state {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("channel {id} never became {state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_created_over_http_answers_its_chat_and_shows_what_it_opened() {
    let telegram = FakeTelegram::start(TOKEN).await.unwrap();
    let h = harness(&telegram).await;
    let s = h.setup("u").await;

    let (code, types) = h.get("/channels/types", "u").await;
    assert_eq!(code, 200);
    assert_eq!(types[0]["channel_type"], "telegram");
    assert_eq!(
        types[0]["credentials_schema"]["properties"]["bot_token"]["format"],
        "password"
    );
    assert_eq!(types[0]["platform_bot_id_field"], "bot_token");

    let (code, created) = h.post("/channels/", "u", body(&s)).await;
    assert_eq!(code, 201, "{created}");
    assert!(
        !created.to_string().contains("server-test-secret"),
        "{created}"
    );
    assert_eq!(created["platform_bot_id"], "4242");
    assert_eq!(created["enabled"], true);
    assert_eq!(created["user_id"], "u");
    let id = created["id"].as_str().unwrap().to_owned();
    wait_state(&h, &id, "connected").await;

    h.fake.push(text_answer("Hello from the service."));
    telegram.push_message(&private_message(1, 7, "Alice", "hi"));
    let sent = telegram.wait_sent(1, Duration::from_secs(10)).await;
    assert_eq!(sent[0]["text"], "Hello from the service.");

    let (code, sessions) = h.get(&format!("/channels/{id}/sessions"), "u").await;
    assert_eq!(code, 200, "{sessions}");
    assert_eq!(sessions["total"], 1);
    let origin = &sessions["sessions"][0]["origin"];
    assert_eq!(origin["type"], "channel");
    assert_eq!(origin["channel_id"], id.as_str());
    assert_eq!(origin["chat_id"], "7");
    let (code, chats) = h.get(&format!("/channels/{id}/chat_ids"), "u").await;
    assert_eq!(code, 200);
    assert_eq!(
        chats,
        json!({"chats": [{"chat_id": "7", "name": "", "source": "recorded"}]})
    );

    let (code, list) = h.get("/channels/", "u").await;
    assert_eq!(code, 200);
    assert_eq!(list.as_array().unwrap().len(), 1);
    let (code, one) = h.get(&format!("/channels/{id}"), "u").await;
    assert_eq!((code, one["name"].clone()), (200, json!("Ops bot")));

    // Disabling stops the connection; enabling starts it again.
    let (code, done) = h
        .post(&format!("/channels/{id}/disable"), "u", json!({}))
        .await;
    assert_eq!((code, done), (200, json!({"status": "disabled"})));
    wait_state(&h, &id, "stopped").await;
    let (_, one) = h.get(&format!("/channels/{id}"), "u").await;
    assert_eq!(one["enabled"], false);
    let (code, done) = h
        .post(&format!("/channels/{id}/enable"), "u", json!({}))
        .await;
    assert_eq!((code, done), (200, json!({"status": "enabled"})));
    wait_state(&h, &id, "connected").await;

    // An edit is checked like a creation.
    let (code, e) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/channels/{id}"),
            "u",
            Some(json!({"routing": {"bindings": [{"match_value": "7", "agent_id": s.agent_id}]}})),
        )
        .await;
    assert_eq!(code, 422, "{e}");
    let (code, renamed) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/channels/{id}"),
            "u",
            Some(json!({"name": "Renamed"})),
        )
        .await;
    assert_eq!((code, renamed["name"].clone()), (200, json!("Renamed")));

    let (code, _) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/channels/{id}"),
            "u",
            None,
        )
        .await;
    assert_eq!(code, 204);
    let (code, _) = h.get(&format!("/channels/{id}"), "u").await;
    assert_eq!(code, 404);
    let (code, status) = h.get(&format!("/channels/{id}/status"), "u").await;
    assert_eq!(code, 404, "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_channel_is_not_found_and_bad_bodies_are_refused() {
    let telegram = FakeTelegram::start(TOKEN).await.unwrap();
    let h = harness(&telegram).await;
    let s = h.setup("u").await;
    let (code, created) = h.post("/channels/", "u", body(&s)).await;
    assert_eq!(code, 201, "{created}");
    let id = created["id"].as_str().unwrap();
    for path in ["", "/status", "/sessions", "/chat_ids"] {
        let (code, _) = h.get(&format!("/channels/{id}{path}"), "mallory").await;
        assert_eq!(code, 404, "{path}");
    }
    for action in ["enable", "disable"] {
        let (code, _) = h
            .post(&format!("/channels/{id}/{action}"), "mallory", json!({}))
            .await;
        assert_eq!(code, 404, "{action}");
    }
    let (code, _) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/channels/{id}"),
            "mallory",
            None,
        )
        .await;
    assert_eq!(code, 404);
    let (_, theirs) = h.get("/channels/", "mallory").await;
    assert_eq!(theirs, json!([]));
    // Routing to another user's agent is refused.
    let m = h.setup("mallory").await;
    let mut stolen = body(&m);
    stolen["routing"]["bindings"][0]["agent_id"] = json!(s.agent_id);
    let (code, e) = h.post("/channels/", "mallory", stolen).await;
    assert_eq!(code, 422, "{e}");

    let mut no_catch_all = body(&s);
    no_catch_all["routing"]["bindings"][0]["match_value"] = json!("7");
    let (code, e) = h.post("/channels/", "u", no_catch_all).await;
    assert_eq!(code, 422, "{e}");
    let mut unknown = body(&s);
    unknown["channel_type"] = json!("pager");
    let (code, _) = h.post("/channels/", "u", unknown).await;
    assert_eq!(code, 400);
    let mut bad_token = body(&s);
    bad_token["credentials"] = json!({"bot_token": "nope"});
    let (code, _) = h.post("/channels/", "u", bad_token).await;
    assert_eq!(code, 422);
    let (code, _) = h
        .post("/channels/", "u", json!({"channel_type": "telegram"}))
        .await;
    assert_eq!(code, 422);

    // No type here hands over credentials by QR code.
    let (code, _) = h
        .post(
            "/channels/bindings",
            "u",
            json!({"channel_type": "telegram"}),
        )
        .await;
    assert_eq!(code, 400);
    let (code, _) = h.get("/channels/bindings/b1", "u").await;
    assert_eq!(code, 404);
    let (code, _) = h.post("/channels/bindings/b1/cancel", "u", json!({})).await;
    assert_eq!(code, 404);
    let mut claimed = body(&s);
    claimed["credential_binding_id"] = json!("b1");
    let (code, _) = h.post("/channels/", "u", claimed).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn without_channel_types_the_list_of_types_is_empty() {
    let h = Harness::start_with(AuthMode::DevHeader).await;
    let (code, types) = h.get("/channels/types", "u").await;
    assert_eq!((code, types), (200, json!([])));
    let (code, list) = h.get("/channels/", "u").await;
    assert_eq!((code, list), (200, json!([])));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_delivery_needs_the_channels_secret_token() {
    let telegram = FakeTelegram::start(TOKEN).await.unwrap();
    let h = harness(&telegram).await;
    let s = h.setup("u").await;
    let mut hooked = body(&s);
    hooked["credentials"]["webhook_secret"] = json!("hook-secret");
    hooked["platform_config"] =
        json!({"mode": "webhook", "webhook_url": "https://bots.example.com/hook"});
    let (code, created) = h.post("/channels/", "u", hooked).await;
    assert_eq!(code, 201, "{created}");
    assert!(!created.to_string().contains("hook-secret"));
    let id = created["id"].as_str().unwrap().to_owned();
    wait_state(&h, &id, "connected").await;

    let update = json!({"update_id": 9, "message": private_message(1, 7, "Alice", "hooked")});
    let deliver = |channel: String, secret: Option<&'static str>| {
        let mut req = h
            .http
            .post(format!("{}/channels/{channel}/webhook", h.base))
            .header("content-type", "application/json")
            .body(update.to_string());
        if let Some(secret) = secret {
            req = req.header("X-Telegram-Bot-Api-Secret-Token", secret);
        }
        async move { req.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(deliver(id.clone(), None).await, 403);
    assert_eq!(deliver(id.clone(), Some("wrong")).await, 403);
    assert_eq!(
        deliver("no-such-channel".into(), Some("hook-secret")).await,
        403
    );
    assert!(h.fake.requests().is_empty(), "nothing reached the model");
    h.fake.push(text_answer("Hooked."));
    assert_eq!(deliver(id.clone(), Some("hook-secret")).await, 200);
    let sent = telegram.wait_sent(1, Duration::from_secs(10)).await;
    assert_eq!(sent[0]["text"], "Hooked.");
    // Telegram delivers again when unsure: answered once.
    assert_eq!(deliver(id.clone(), Some("hook-secret")).await, 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(telegram.sent().len(), 1);
}
