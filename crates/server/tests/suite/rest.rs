//! REST resources: shapes, secrets, ownership, validation errors.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::Harness;

#[tokio::test]
async fn credentials_are_masked_and_owned() {
    let h = Harness::start().await;
    let s = h.setup("alice").await;

    let (code, list) = h.get("/credential/", "alice").await;
    assert_eq!(code, 200);
    assert_eq!(list["total"], 1);
    let view = &list["credentials"][0];
    assert_eq!(view["id"], s.credential_id.as_str());
    assert_eq!(view["user_id"], "alice");
    assert_eq!(view["data"]["api_key"], "**********");
    assert_eq!(view["data"]["type"], "openai_credential");
    assert!(!list.to_string().contains("sk-test-secret"));

    // The secret is not readable in the database file either.
    let db = std::fs::read(h.dir.path().join("oxiscope.db")).unwrap();
    let wal = std::fs::read(h.dir.path().join("oxiscope.db-wal")).unwrap_or_default();
    for bytes in [db, wal] {
        assert!(!String::from_utf8_lossy(&bytes).contains("sk-test-secret"));
    }

    // A masked secret in a patch keeps the stored one; other fields change.
    let (code, patched) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/credential/{}", s.credential_id),
            "alice",
            Some(json!({"data": {"name": "renamed", "api_key": "**********"}})),
        )
        .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["data"]["name"], "renamed");
    // ... and the model still gets the real key (checked by chat tests).

    // Bob sees nothing of Alice's.
    let (code, list) = h.get("/credential/", "bob").await;
    assert_eq!((code, list["total"].clone()), (200, json!(0)));
    let path = format!("/credential/{}", s.credential_id);
    let (code, body) = h.call(reqwest::Method::DELETE, &path, "bob", None).await;
    assert_eq!(code, 404);
    assert_eq!(
        body,
        json!({"detail": format!("Credential {} not found", s.credential_id)})
    );
    let (code, _) = h
        .call(
            reqwest::Method::PATCH,
            &path,
            "bob",
            Some(json!({"data": {"name": "x"}})),
        )
        .await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn users_cannot_see_each_others_agents_or_sessions() {
    let h = Harness::start().await;
    let s = h.setup("alice").await;
    let (_, agents) = h.get("/agent/", "bob").await;
    assert_eq!(agents, json!({"agents": [], "total": 0}));
    for path in [
        format!("/sessions/?agent_id={}", s.agent_id),
        format!("/sessions/{}/status?agent_id={}", s.session_id, s.agent_id),
        format!(
            "/sessions/{}/messages?agent_id={}",
            s.session_id, s.agent_id
        ),
        format!("/sessions/{}/stream?agent_id={}", s.session_id, s.agent_id),
    ] {
        let (code, body) = h.get(&path, "bob").await;
        assert_eq!(code, 404, "{path}: {body}");
        assert!(body["detail"].is_string());
    }
    let (code, _) = h
        .post(
            "/chat/",
            "bob",
            json!({"agent_id": s.agent_id, "session_id": s.session_id, "input": null}),
        )
        .await;
    assert_eq!(code, 404);
    let (code, _) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/agent/{}", s.agent_id),
            "bob",
            None,
        )
        .await;
    assert_eq!(code, 404);
    // Alice still has everything.
    let (_, agents) = h.get("/agent/", "alice").await;
    assert_eq!(agents["total"], 1);
    assert_eq!(agents["agents"][0]["data"]["name"], "Friday");
    assert_eq!(agents["agents"][0]["editable"], true);
}

#[tokio::test]
async fn agents_update_and_delete() {
    let h = Harness::start().await;
    let (code, created) = h.post("/agent/", "u", json!({"name": "A"})).await;
    assert_eq!(code, 201);
    let id = created["agent_id"].as_str().unwrap();
    let (code, view) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/agent/{id}"),
            "u",
            Some(json!({"system_prompt": "Be brief.", "chat_config": {"react_config": {"max_iters": 3}}})),
        )
        .await;
    assert_eq!(code, 200, "{view}");
    assert_eq!(view["data"]["name"], "A");
    assert_eq!(view["data"]["system_prompt"], "Be brief.");
    assert_eq!(view["data"]["chat_config"]["react_config"]["max_iters"], 3);
    let (code, _) = h
        .call(reqwest::Method::DELETE, &format!("/agent/{id}"), "u", None)
        .await;
    assert_eq!(code, 204);
    let (code, _) = h
        .call(reqwest::Method::DELETE, &format!("/agent/{id}"), "u", None)
        .await;
    assert_eq!(code, 404);
    let (code, schema) = h.get("/agent/schema/v2", "u").await;
    assert_eq!(code, 200);
    assert_eq!(schema["schema"]["required"], json!(["name"]));
}

#[tokio::test]
async fn sessions_are_one_per_user_agent_and_workspace() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let (code, again) = h
        .post(
            "/sessions/",
            "u",
            json!({"agent_id": s.agent_id, "name": "Renamed"}),
        )
        .await;
    assert_eq!(code, 201);
    assert_eq!(again["session_id"], s.session_id.as_str());
    let (code, other) = h
        .post(
            "/sessions/",
            "u",
            json!({"agent_id": s.agent_id, "workspace_id": "ws-2", "permission_mode": "accept_edits"}),
        )
        .await;
    assert_eq!(code, 201);
    assert_ne!(other["session_id"], s.session_id.as_str());

    let (code, list) = h
        .get(&format!("/sessions/?agent_id={}", s.agent_id), "u")
        .await;
    assert_eq!(code, 200);
    assert_eq!(list["total"], 2);
    let first = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["session"]["id"] == s.session_id.as_str())
        .unwrap();
    assert_eq!(first["status"], "idle");
    assert_eq!(first["is_running"], false);
    assert_eq!(first["session"]["config"]["name"], "Renamed");
    assert_eq!(first["session"]["origin"], json!({"type": "user"}));
    assert_eq!(
        first["session"]["state"]["permission_context"]["mode"],
        "default"
    );

    let second_id = other["session_id"].as_str().unwrap();
    let (code, patched) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/sessions/{second_id}?agent_id={}", s.agent_id),
            "u",
            Some(json!({"permission_mode": "explore", "name": "Two"})),
        )
        .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["config"]["name"], "Two");
    assert_eq!(patched["config"]["workspace_id"], "ws-2");
    assert_eq!(patched["state"]["permission_context"]["mode"], "explore");

    let (code, _) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/sessions/{second_id}?agent_id={}", s.agent_id),
            "u",
            None,
        )
        .await;
    assert_eq!(code, 204);
    // A session asked for under another agent id is not found.
    let (code, _) = h
        .get(
            &format!("/sessions/{}/status?agent_id=nope", s.session_id),
            "u",
        )
        .await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn bad_input_gets_fastapi_shaped_errors() {
    let h = Harness::start().await;
    // Malformed JSON.
    let res = h
        .http
        .post(format!("{}/agent/", h.base))
        .header("x-user-id", "u")
        .header("content-type", "application/json")
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 422);
    let body: Value = serde_json::from_str(&res.text().await.unwrap()).unwrap();
    assert_eq!(body["detail"][0]["type"], "json_invalid");
    assert_eq!(body["detail"][0]["loc"][0], "body");

    // A missing field and a wrong type.
    let (code, body) = h.post("/agent/", "u", json!({"system_prompt": "x"})).await;
    assert_eq!(code, 422);
    assert_eq!(
        body["detail"][0],
        json!({"type": "missing", "loc": ["body", "name"], "msg": "Field required", "input": {"system_prompt": "x"}})
    );
    let (code, body) = h.post("/agent/", "u", json!({"name": 5})).await;
    assert_eq!(code, 422);
    assert_eq!(body["detail"][0]["type"], "value_error");

    // No identity header; an empty one.
    let res = h
        .http
        .get(format!("{}/agent/", h.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 422);
    let body: Value = serde_json::from_str(&res.text().await.unwrap()).unwrap();
    assert_eq!(body["detail"][0]["loc"], json!(["header", "x-user-id"]));
    let (code, body) = h.get("/agent/", "").await;
    assert_eq!(
        (code, body),
        (401, json!({"detail": "X-User-ID header is required."}))
    );

    // A credential of an unknown type.
    let (code, body) = h
        .post(
            "/credential/",
            "u",
            json!({"data": {"type": "nope_credential", "api_key": "k"}}),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(body["detail"][0]["loc"], json!(["body", "data"]));
    assert_eq!(body["detail"][0]["input"]["api_key"], "**********");

    // A missing query parameter, an unknown session, an unknown path.
    let (code, body) = h.get("/sessions/", "u").await;
    assert_eq!(code, 422);
    assert_eq!(body["detail"][0]["loc"], json!(["query", "agent_id"]));
    let (code, _) = h.get("/sessions/nope/status?agent_id=x", "u").await;
    assert_eq!(code, 404);
    let (code, body) = h.get("/nowhere", "u").await;
    assert_eq!((code, body), (404, json!({"detail": "Not Found"})));

    // Chat input that is no accepted shape.
    let s = h.setup("u").await;
    let (code, body) = h.chat("u", &s, json!(42)).await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(body["detail"][0]["loc"], json!(["body", "input"]));
    let (code, _) = h.chat("u", &s, json!({"type": "REPLY_START"})).await;
    assert_eq!(code, 422);
}

#[tokio::test]
async fn catalogue_routes_answer_without_identity() {
    let h = Harness::start().await;
    let (code, schemas) = h.get("/credential/schemas", "").await;
    assert_eq!(code, 200);
    let types: Vec<&str> = schemas["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| {
            s["properties"]["type"]["const"]
                .as_str()
                .or(s["properties"]["type"]["default"].as_str())
        })
        .collect();
    assert!(types.contains(&"openai_credential"), "{types:?}");

    let (code, models) = h.get("/model/?provider=openai_credential", "").await;
    assert_eq!(code, 200);
    assert!(models["total"].as_u64().unwrap() > 0);
    assert_eq!(models["models"][0]["type"], "chat_model");
    let (code, _) = h.get("/model/?provider=nope", "").await;
    assert_eq!(code, 404);

    // Embedding models: cards for a provider that has them, an empty list
    // for one that has none, 404 for an unknown provider.
    let (code, models) = h
        .get("/embedding-model/?provider=openai_credential", "")
        .await;
    assert_eq!(code, 200, "{models}");
    let total = models["total"].as_u64().unwrap();
    assert!(total >= 2, "{models}");
    assert_eq!(models["models"].as_array().unwrap().len() as u64, total);
    assert!(models["models"][0]["dimensions"].is_number(), "{models}");
    let (code, models) = h
        .get("/embedding-model/?provider=ollama_credential", "")
        .await;
    assert_eq!((code, models["total"].as_u64()), (200, Some(0)), "{models}");
    let (code, body) = h.get("/embedding-model/?provider=nope", "").await;
    assert_eq!(code, 404);
    assert_eq!(body["detail"], "Provider 'nope' not found.");

    // TTS models: AgentScope's cards per provider (DashScope's three
    // classes in order), voices as the `voice` enum, an empty list for a
    // provider without TTS, 404 for an unknown one.
    let (code, models) = h.get("/tts-model/?provider=dashscope_credential", "").await;
    assert_eq!(code, 200, "{models}");
    let names: Vec<&str> = models["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "qwen3-tts-flash",
            "qwen3-tts-flash-realtime",
            "cosyvoice-v3-flash",
            "cosyvoice-v3-plus"
        ]
    );
    assert_eq!(models["total"], 4);
    let card = &models["models"][1];
    assert_eq!(
        (
            &card["type"],
            &card["realtime"],
            &card["parameters_overrides"]
        ),
        (&json!("tts_model"), &json!(true), &json!({}))
    );
    assert_eq!(
        card["parameter_schema"]["properties"]["voice"]["enum"],
        json!(["Cherry", "Serena", "Ethan", "Chelsie"])
    );
    let (code, models) = h.get("/tts-model/?provider=openai_credential", "").await;
    assert_eq!((code, models["total"].as_u64()), (200, Some(3)), "{models}");
    let (code, models) = h.get("/tts-model/?provider=ollama_credential", "").await;
    assert_eq!((code, models), (200, json!({"models": [], "total": 0})));
    for bad in ["nope", "..%2F..%2Fetc%2Fpasswd", "openai_credential%00"] {
        let (code, body) = h.get(&format!("/tts-model/?provider={bad}"), "").await;
        assert_eq!(code, 404, "{bad}: {body}");
    }
    let (code, body) = h.get("/tts-model/", "").await;
    assert_eq!(code, 422, "{body}");

    let (code, health) = h.get("/health", "u").await;
    assert_eq!(code, 200);
    assert_eq!(health["status"], "ok");
    assert_eq!(health["components"]["storage"], "ok");
}

#[tokio::test]
async fn api_keys_authenticate_and_scope_records() {
    use oxiscope_server::{AuthMode, generate_api_key};
    use oxiscope_storage::{ApiKeyRecord, now};
    let h = Harness::start_with(AuthMode::ApiKeys).await;
    let (key, hash) = generate_api_key();
    h.state
        .storage()
        .create_api_key(&ApiKeyRecord {
            hash,
            user_id: "carol".into(),
            label: "test".into(),
            created_at: now(),
        })
        .await
        .unwrap();
    let (code, created) = h.post("/agent/", &key, json!({"name": "K"})).await;
    assert_eq!(code, 201, "{created}");
    let (_, list) = h.get("/agent/", &key).await;
    assert_eq!(list["agents"][0]["user_id"], "carol");
    let (code, body) = h.get("/agent/", "oxk_wrong").await;
    assert_eq!((code, body), (401, json!({"detail": "Invalid API key"})));
    // The development header is not trusted in this mode.
    let res = h
        .http
        .get(format!("{}/agent/", h.base))
        .header("x-user-id", "carol")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 401);
}
