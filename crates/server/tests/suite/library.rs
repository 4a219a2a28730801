//! Hubs and the user's library: browsing local and remote catalogues,
//! installing (values checked, secrets sealed), editing, tenancy, and
//! putting installs into a session's workspace.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use oxiscope_server::{AppState, HubSource, Sealer, ServerConfig};
use oxiscope_storage::{InMemoryBus, SqliteStorage};
use oxiscope_test_support::{FakeServer, OpenAiScript, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, Setup, text_answer};

const SECRET: &str = "sk-hub-secret-4711";

/// The MCP test server's script, when installed (else a loud skip).
fn everything_script() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../mcp/tests/servers"));
    let script = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if script.is_file() {
        return Some(std::fs::canonicalize(script).unwrap());
    }
    oxiscope_test_support::skip(&format!(
        "the MCP test server is not installed ({} missing); run `npm ci --prefix crates/mcp/tests/servers`",
        script.display()
    ));
    None
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill_md(name: &str) -> String {
    format!("---\nname: {name}\ndescription: Greets people politely.\n---\nSay hello.\n")
}

/// An MCP catalogue (one card on the real test server, two templates) and
/// a skill catalogue (a good card and one whose directory is a link out of
/// the catalogue) in `dir`.
fn local_hubs(dir: &Path, script: &Path) -> Vec<HubSource> {
    let mcp = json!({
        "kind": "mcp", "hub_id": "local", "display_name": "Local MCPs",
        "description": "Test servers", "icon_url": null,
        "cards": [
            {"id": "everything", "name": "everything", "display_name": "Everything",
             "description": "The MCP reference server", "tags": ["test", "echo"],
             "version": "1.0", "readme": "# Everything",
             "config_template": {"type": "stdio_mcp", "command": "node",
                 "args": [script.display().to_string(), "stdio"],
                 "env": {"SECRET_TOKEN": "${api_key}"}},
             "inputs_schema": {"type": "object", "required": ["api_key"], "properties": {
                 "api_key": {"type": "string", "minLength": 8, "writeOnly": true, "format": "password"}}}},
            {"id": "weather", "name": "weather", "tags": ["web"],
             "config_template": {"type": "http_mcp", "url": "https://weather.example.com/${region}/mcp",
                 "headers": {"Authorization": "Bearer ${api_key}"}},
             "inputs_schema": {"type": "object", "properties": {
                 "api_key": {"type": "string"}, "region": {"type": "string", "default": "eu"}}}},
            {"id": "files", "name": "files", "display_name": "File Browser",
             "config_template": {"type": "http_mcp", "url": "https://files.example.com/mcp"}}
        ]
    });
    write(&dir.join("mcp/hub.json"), &mcp.to_string());
    let skills = json!({
        "kind": "skill", "hub_id": "local-skills", "display_name": "Local skills",
        "cards": [
            {"id": "greeter", "name": "greeter", "description": "Greets", "path": "greeter"},
            {"id": "escape", "name": "escape", "path": "escape"}
        ]
    });
    write(&dir.join("skills/hub.json"), &skills.to_string());
    write(&dir.join("skills/greeter/SKILL.md"), &skill_md("greeter"));
    write(&dir.join("skills/greeter/notes.txt"), "extra file");
    write(&dir.join("outside/SKILL.md"), &skill_md("escape"));
    std::os::unix::fs::symlink(dir.join("outside"), dir.join("skills/escape")).unwrap();
    vec![
        HubSource::Local(dir.join("mcp")),
        HubSource::Local(dir.join("skills/hub.json")),
    ]
}

async fn install_everything(h: &Harness, user: &str, name: Option<&str>) -> (u16, Value) {
    let mut body = json!({"values": {"api_key": SECRET}});
    if let Some(name) = name {
        body["name"] = json!(name);
    }
    h.post("/hub/mcp/local/cards/everything/install", user, body)
        .await
}

async fn workspace(h: &Harness, user: &str, s: &Setup) -> Arc<dyn oxiscope_workspace::Workspace> {
    let session = h
        .state
        .storage()
        .get_session(user, &s.session_id)
        .await
        .unwrap()
        .unwrap();
    h.state
        .workspaces()
        .get(
            user,
            &s.agent_id,
            &s.session_id,
            Some(&session.workspace_id),
        )
        .await
        .unwrap()
}

fn from_library(kind: &str, s: &Setup) -> String {
    format!(
        "/workspace/{kind}/from-library?agent_id={}&session_id={}",
        s.agent_id, s.session_id
    )
}

#[tokio::test]
async fn hubs_are_browsed_searched_and_paged() {
    let dir = tempfile::tempdir().unwrap();
    let hubs = local_hubs(dir.path(), Path::new("/nowhere/index.js"));
    let h = Harness::start_with_hubs(hubs, Duration::from_secs(300)).await;

    let (code, list) = h.get("/hub/mcp", "u").await;
    assert_eq!(code, 200);
    assert_eq!(
        list,
        json!([{"hub_id": "local", "display_name": "Local MCPs", "description": "Test servers", "icon_url": null}])
    );
    let (_, skills) = h.get("/hub/skill", "u").await;
    assert_eq!(skills[0]["hub_id"], "local-skills");

    // Search: name, display name or tag, any case.
    let ids = |page: &Value| -> Vec<String> {
        page["cards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (_, page) = h.get("/hub/mcp/local/cards?q=ECHO", "u").await;
    assert_eq!(ids(&page), ["everything"]);
    let (_, page) = h.get("/hub/mcp/local/cards?q=browser", "u").await;
    assert_eq!(ids(&page), ["files"]);
    // Browsing leaves the readme out; the card itself has it.
    let (_, page) = h.get("/hub/mcp/local/cards", "u").await;
    assert_eq!(ids(&page), ["everything", "weather", "files"]);
    assert_eq!(page["cards"][0]["readme"], Value::Null);
    assert_eq!(page["cards"][0]["hub_id"], "local");
    assert_eq!(page["next_cursor"], Value::Null);
    let (code, card) = h.get("/hub/mcp/local/cards/everything", "u").await;
    assert_eq!(code, 200);
    assert_eq!(card["readme"], "# Everything");
    assert_eq!(card["config_template"]["type"], "stdio_mcp");
    assert_eq!(card["inputs_schema"]["required"], json!(["api_key"]));

    // Paging with the opaque cursor.
    let (_, first) = h.get("/hub/mcp/local/cards?limit=2", "u").await;
    assert_eq!(ids(&first), ["everything", "weather"]);
    let cursor = first["next_cursor"].as_str().unwrap();
    let (_, second) = h
        .get(
            &format!("/hub/mcp/local/cards?limit=2&cursor={cursor}"),
            "u",
        )
        .await;
    assert_eq!(ids(&second), ["files"]);
    assert_eq!(second["next_cursor"], Value::Null);
    for bad in ["limit=0", "limit=201", "cursor=forged", "limit=abc"] {
        let (code, body) = h.get(&format!("/hub/mcp/local/cards?{bad}"), "u").await;
        assert_eq!(code, 422, "{bad}: {body}");
    }

    // Skill cards: the SKILL.md only on the card.
    let (_, page) = h.get("/hub/skill/local-skills/cards?q=greet", "u").await;
    assert_eq!(ids(&page), ["greeter"]);
    assert_eq!(page["cards"][0]["markdown"], Value::Null);
    let (_, card) = h.get("/hub/skill/local-skills/cards/greeter", "u").await;
    assert_eq!(card["markdown"], skill_md("greeter"));
    // A linked directory's SKILL.md is not read through the link.
    let (_, card) = h.get("/hub/skill/local-skills/cards/escape", "u").await;
    assert_eq!(card["markdown"], Value::Null);

    // Unknown hubs and cards, and the wrong kind.
    for path in [
        "/hub/mcp/nope/cards",
        "/hub/mcp/local/cards/nope",
        "/hub/skill/local/cards",
        "/hub/mcp/local-skills/cards/greeter",
        "/hub/mcp/local/cards/..%2F..%2Fetc",
    ] {
        let (code, body) = h.get(path, "u").await;
        assert_eq!(code, 404, "{path}: {body}");
    }
}

#[tokio::test]
async fn without_hubs_there_is_nothing_to_browse() {
    let h = Harness::start_with_hubs(Vec::new(), Duration::from_secs(300)).await;
    assert_eq!(h.get("/hub/mcp", "u").await, (200, json!([])));
    assert_eq!(h.get("/hub/skill", "u").await, (200, json!([])));
    assert_eq!(h.get("/hub/mcp/any/cards", "u").await.0, 404);
    assert_eq!(h.get("/hub/skill/any/cards/x", "u").await.0, 404);
    let (code, _) = h
        .post("/hub/mcp/any/cards/x/install", "u", json!({"values": {}}))
        .await;
    assert_eq!(code, 404);
    assert_eq!(h.get("/mcp", "u").await, (200, json!([])));
    assert_eq!(h.get("/skill", "u").await, (200, json!([])));
}

#[tokio::test]
async fn installing_checks_the_values_and_seals_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let hubs = local_hubs(dir.path(), Path::new("/nowhere/index.js"));
    let h = Harness::start_with_hubs(hubs, Duration::from_secs(300)).await;

    // A required value missing, a schema violation, a placeholder with no
    // value, a bad name: 422, and nothing is installed.
    let cases = [
        ("everything", json!({"values": {}})),
        ("everything", json!({"values": {"api_key": "short"}})),
        ("everything", json!({"values": {"api_key": 12345678}})),
        ("weather", json!({"values": {}})),
        (
            "everything",
            json!({"name": "bad name!", "values": {"api_key": SECRET}}),
        ),
        ("everything", json!({"values": "not an object"})),
    ];
    for (card, body) in cases {
        let (code, answer) = h
            .post(
                &format!("/hub/mcp/local/cards/{card}/install"),
                "u",
                body.clone(),
            )
            .await;
        assert_eq!(code, 422, "{body}: {answer}");
        assert!(answer["detail"].is_array(), "{answer}");
        assert!(!answer.to_string().contains(SECRET), "{answer}");
    }
    assert_eq!(h.get("/mcp", "u").await, (200, json!([])));

    let (code, view) = install_everything(&h, "u", None).await;
    assert_eq!(code, 201, "{view}");
    let id = view["id"].as_str().unwrap().to_owned();
    assert_eq!(
        view,
        json!({"id": id, "name": "everything", "is_stateful": true, "enabled": true,
               "display_name": "Everything", "description": "The MCP reference server",
               "tags": ["test", "echo"], "author": null, "icon_url": null, "url": null,
               "hub_id": "local", "card_id": "everything", "version": "1.0"})
    );
    // The same name again is a conflict; another name is fine. Defaults
    // fill values the user left out.
    assert_eq!(install_everything(&h, "u", None).await.0, 409);
    let (code, _) = install_everything(&h, "u", Some("everything-2")).await;
    assert_eq!(code, 201);
    let (code, _) = h
        .post(
            "/hub/mcp/local/cards/weather/install",
            "u",
            json!({"values": {"api_key": SECRET}}),
        )
        .await;
    assert_eq!(code, 201);

    let (code, list) = h.get("/mcp", "u").await;
    assert_eq!(code, 200);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["everything", "everything-2", "weather"]);
    assert!(!list.to_string().contains(SECRET), "{list}");
    assert!(!list.to_string().contains("mcp_config"), "{list}");

    // At rest the config is sealed: the database never holds the key.
    for file in ["oxiscope.db", "oxiscope.db-wal"] {
        let path = h.dir.path().join(file);
        if let Ok(bytes) = std::fs::read(&path) {
            assert!(
                !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
                "{file} holds the secret in clear"
            );
        }
    }
}

#[tokio::test]
async fn library_mcps_are_edited_and_deleted_by_their_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let hubs = local_hubs(dir.path(), Path::new("/nowhere/index.js"));
    let h = Harness::start_with_hubs(hubs, Duration::from_secs(300)).await;
    let (_, view) = install_everything(&h, "alice", None).await;
    let id = view["id"].as_str().unwrap().to_owned();
    let path = format!("/mcp/{id}");

    // Bob sees nothing and touches nothing.
    assert_eq!(h.get("/mcp", "bob").await, (200, json!([])));
    let patch = |body: Value, user: &'static str| {
        let path = path.clone();
        let h = &h;
        async move {
            h.call(reqwest::Method::PATCH, &path, user, Some(body))
                .await
        }
    };
    assert_eq!(patch(json!({"enabled": false}), "bob").await.0, 404);
    assert_eq!(
        h.call(reqwest::Method::DELETE, &path, "bob", None).await.0,
        404
    );

    // Rename, turn off, re-key (the new value is checked like an install).
    let (code, view) = patch(json!({"name": "evrything", "enabled": false}), "alice").await;
    assert_eq!(code, 200, "{view}");
    assert_eq!(
        (view["name"].clone(), view["enabled"].clone()),
        (json!("evrything"), json!(false))
    );
    assert_eq!(patch(json!({"name": "no spaces"}), "alice").await.0, 422);
    assert_eq!(
        patch(json!({"values": {"api_key": "short"}}), "alice")
            .await
            .0,
        422
    );
    let (code, view) = patch(json!({"values": {"api_key": "sk-rotated-0815"}}), "alice").await;
    assert_eq!(code, 200, "{view}");
    let (_, other) = h
        .post("/hub/mcp/local/cards/files/install", "alice", json!({}))
        .await;
    assert_eq!(patch(json!({"name": "files"}), "alice").await.0, 409);
    assert_eq!(other["name"], "files");

    assert_eq!(
        h.call(reqwest::Method::DELETE, &path, "alice", None)
            .await
            .0,
        204
    );
    assert_eq!(
        h.call(reqwest::Method::DELETE, &path, "alice", None)
            .await
            .0,
        404
    );
    let (_, list) = h.get("/mcp", "alice").await;
    assert_eq!(list.as_array().unwrap().len(), 1);
}

/// Runs a chat whose model calls `tool`, confirming the call if asked;
/// returns the stored messages.
async fn chat_calling(h: &Harness, s: &Setup, tool: &str, args: Value) -> Value {
    h.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_1", tool)
            .tool_args(0, args.to_string())
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response(),
    );
    h.fake.push(text_answer("done"));
    let mut sse = h.subscribe("u", s, None).await;
    let (code, body) = h.chat("u", s, user_msg("use the tool")).await;
    assert_eq!(code, 200, "{body}");
    let events = sse.until("REPLY_END").await;
    if let Some(ask) = events.iter().find(|e| e["type"] == "REQUIRE_USER_CONFIRM") {
        let confirm = json!({"type": "USER_CONFIRM_RESULT", "reply_id": ask["reply_id"],
            "confirm_results": [{"confirmed": true, "tool_call": ask["tool_calls"][0]}]});
        let (code, body) = h.chat("u", s, confirm).await;
        assert_eq!(code, 200, "{body}");
        sse.until("REPLY_END").await;
    }
    h.wait_not_running("u", s).await;
    h.messages("u", s).await
}

#[tokio::test]
async fn an_installed_mcp_goes_into_a_session_workspace_and_its_tools_run() {
    let Some(script) = everything_script() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hubs = local_hubs(dir.path(), &script);
    let h = Harness::start_with_hubs_local(hubs, Duration::from_secs(300)).await;
    let s = h.setup("u").await;
    let (_, view) = install_everything(&h, "u", None).await;
    let id = view["id"].as_str().unwrap().to_owned();
    let (_, off) = h
        .post("/hub/mcp/local/cards/files/install", "u", json!({}))
        .await;
    let off_id = off["id"].as_str().unwrap().to_owned();
    let (code, _) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/mcp/{off_id}"),
            "u",
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(code, 200);
    let (_, theirs) = install_everything(&h, "mallory", None).await;
    let theirs = theirs["id"].as_str().unwrap().to_owned();

    let (code, out) = h
        .post(
            &from_library("mcp", &s),
            "u",
            json!({"mcp_ids": [id, off_id, theirs, "missing"]}),
        )
        .await;
    assert_eq!(code, 201, "{out}");
    assert_eq!(out["added"], json!(["everything"]));
    let failed = out["failed"].as_object().unwrap();
    assert_eq!(failed.len(), 3, "{out}");
    assert!(
        failed.contains_key(&off_id) && failed.contains_key(&theirs),
        "{out}"
    );
    // Adding it again clashes with the one already there.
    let (_, again) = h
        .post(&from_library("mcp", &s), "u", json!({"mcp_ids": [id]}))
        .await;
    assert_eq!(again["added"], json!([]));
    assert!(
        again["failed"][&id].as_str().unwrap().contains("already"),
        "{again}"
    );

    let ws = workspace(&h, "u", &s).await;
    let decls = ws
        .mcp_declarations(&s.agent_id, &s.session_id)
        .await
        .unwrap();
    assert_eq!(decls.len(), 1);
    assert_eq!(decls[0].name, "everything");
    let rendered = serde_json::to_value(&decls[0].mcp_config).unwrap();
    assert_eq!(rendered["env"]["SECRET_TOKEN"], SECRET);
    drop(ws);

    // The model calls the server's tool; it answers from the workspace.
    let page = chat_calling(
        &h,
        &s,
        "mcp__everything__echo",
        json!({"message": "via the hub"}),
    )
    .await;
    let text = page.to_string();
    assert!(text.contains("Echo: via the hub"), "{text}");
}

#[tokio::test]
async fn from_library_needs_the_callers_own_session() {
    let dir = tempfile::tempdir().unwrap();
    let hubs = local_hubs(dir.path(), Path::new("/nowhere/index.js"));
    let h = Harness::start_with_hubs(hubs, Duration::from_secs(300)).await;
    let s = h.setup("alice").await;
    let (_, view) = install_everything(&h, "bob", None).await;
    let id = view["id"].as_str().unwrap();
    for kind in ["mcp", "skill"] {
        let body = json!({"mcp_ids": [id], "skill_ids": [id]});
        // Another user's session, and the caller's with another agent.
        let (code, _) = h.post(&from_library(kind, &s), "bob", body.clone()).await;
        assert_eq!(code, 404, "{kind}");
        let wrong = format!(
            "/workspace/{kind}/from-library?agent_id=other&session_id={}",
            s.session_id
        );
        assert_eq!(h.post(&wrong, "alice", body.clone()).await.0, 404);
        let missing = format!("/workspace/{kind}/from-library?agent_id={}", s.agent_id);
        assert_eq!(h.post(&missing, "alice", body).await.0, 422);
    }
    // Alice's own session, Bob's library id: reported, not added.
    let (code, out) = h
        .post(&from_library("mcp", &s), "alice", json!({"mcp_ids": [id]}))
        .await;
    assert_eq!(code, 201);
    assert_eq!(out["added"], json!([]));
    assert!(out["failed"][id].is_string(), "{out}");
    assert_eq!(
        h.post(&from_library("mcp", &s), "alice", json!({})).await.0,
        422
    );
}

#[tokio::test]
async fn a_local_skill_is_installed_and_copied_into_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let hubs = local_hubs(dir.path(), Path::new("/nowhere/index.js"));
    let h = Harness::start_with_hubs(hubs, Duration::from_secs(300)).await;
    let s = h.setup("u").await;

    let (code, view) = h
        .post(
            "/hub/skill/local-skills/cards/greeter/install",
            "u",
            json!({}),
        )
        .await;
    assert_eq!(code, 201, "{view}");
    let id = view["id"].as_str().unwrap().to_owned();
    assert_eq!(view["name"], "greeter");
    assert_eq!(view["hub_id"], "local-skills");
    let (code, _) = h
        .post(
            "/hub/skill/local-skills/cards/greeter/install",
            "u",
            json!({}),
        )
        .await;
    assert_eq!(code, 409);
    let (code, _) = h
        .post(
            "/hub/skill/local-skills/cards/greeter/install?name=..%2Fx",
            "u",
            json!({}),
        )
        .await;
    assert_eq!(code, 422);
    let (code, link) = h
        .post(
            "/hub/skill/local-skills/cards/escape/install?name=escape",
            "u",
            json!({}),
        )
        .await;
    assert_eq!(code, 201, "{link}");
    let link_id = link["id"].as_str().unwrap().to_owned();

    let (_, list) = h.get("/skill", "u").await;
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["escape", "greeter"]);
    let (code, record) = h.get(&format!("/skill/{id}"), "u").await;
    assert_eq!(code, 200);
    assert_eq!(record["markdown"], skill_md("greeter"));
    assert_eq!(record["user_id"], "u");
    assert_eq!(h.get(&format!("/skill/{id}"), "other").await.0, 404);
    assert_eq!(h.get("/skill", "other").await, (200, json!([])));

    let (code, out) = h
        .post(
            &from_library("skill", &s),
            "u",
            json!({"skill_ids": [id, link_id, "missing"]}),
        )
        .await;
    assert_eq!(code, 201, "{out}");
    assert_eq!(out["added"], json!(["greeter"]));
    assert!(out["failed"][&link_id].is_string(), "{out}");
    assert!(out["failed"]["missing"].is_string(), "{out}");
    let ws = workspace(&h, "u", &s).await;
    let skills = ws.list_skills(&s.agent_id).await.unwrap();
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["greeter"]);
    // Nothing is left behind in the staging directory.
    let staging = h.dir.path().join("staging");
    let left = std::fs::read_dir(&staging).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0);

    // Deleting is the owner's; the workspace keeps its copy.
    let path = format!("/skill/{id}");
    assert_eq!(
        h.call(reqwest::Method::DELETE, &path, "other", None)
            .await
            .0,
        404
    );
    assert_eq!(
        h.call(reqwest::Method::DELETE, &path, "u", None).await.0,
        204
    );
    assert_eq!(h.get(&path, "u").await.0, 404);
    assert_eq!(ws.list_skills(&s.agent_id).await.unwrap().len(), 1);
}

/// A `.tar.gz` of a skill folder, made with the system's `tar`.
fn skill_archive(dir: &Path, name: &str) -> Vec<u8> {
    write(&dir.join(name).join("SKILL.md"), &skill_md(name));
    let out = dir.join(format!("{name}.tar.gz"));
    let status = std::process::Command::new("tar")
        .arg("czf")
        .arg(&out)
        .arg("-C")
        .arg(dir)
        .arg(name)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read(out).unwrap()
}

#[tokio::test]
async fn a_remote_hub_is_downloaded_and_its_failures_map_to_502_and_503() {
    let hub = FakeServer::start().await.unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let archive = skill_archive(scratch.path(), "remote-skill");
    let catalogue = json!({
        "kind": "skill", "hub_id": "remote", "display_name": "Remote",
        "cards": [{"id": "r1", "name": "remote-skill", "markdown": "remote body",
                   "archive_url": hub.url("/archives/r1.tar.gz")}]
    });
    let ok = || ScriptedResponse::json(200, &catalogue);
    let url = hub.url("/hub.json");
    // Read again on every use.
    let h = Harness::start_with_hubs(vec![HubSource::Remote(url)], Duration::ZERO).await;
    let s = h.setup("u").await;

    for _ in 0..3 {
        hub.push_for("/hub.json", ok());
    }
    let (code, list) = h.get("/hub/skill", "u").await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list[0]["hub_id"], "remote");
    let (code, card) = h.get("/hub/skill/remote/cards/r1", "u").await;
    assert_eq!(code, 200, "{card}");
    assert_eq!(card["markdown"], "remote body");
    let (code, view) = h
        .post("/hub/skill/remote/cards/r1/install", "u", json!({}))
        .await;
    assert_eq!(code, 201, "{view}");
    let id = view["id"].as_str().unwrap().to_owned();

    hub.push_for("/hub.json", ok());
    hub.push_for(
        "/archives/r1.tar.gz",
        ScriptedResponse::new(200).with_body(archive),
    );
    let (code, out) = h
        .post(&from_library("skill", &s), "u", json!({"skill_ids": [id]}))
        .await;
    assert_eq!(code, 201, "{out}");
    assert_eq!(out["added"], json!(["remote-skill"]), "{out}");
    let ws = workspace(&h, "u", &s).await;
    assert_eq!(
        ws.list_skills(&s.agent_id).await.unwrap()[0].name,
        "remote-skill"
    );

    // The hub fails: 502; it rate-limits: 503; the skill is reported.
    hub.push_for("/hub.json", ScriptedResponse::text(500, "boom"));
    let (code, body) = h.get("/hub/skill/remote/cards", "u").await;
    assert_eq!(code, 502, "{body}");
    hub.push_for("/hub.json", ScriptedResponse::text(429, "slow down"));
    let (code, body) = h.get("/hub/skill/remote/cards/r1", "u").await;
    assert_eq!(code, 503, "{body}");
    hub.push_for("/hub.json", ok());
    hub.push_for("/archives/r1.tar.gz", ScriptedResponse::text(500, "gone"));
    let (code, out) = h
        .post(&from_library("skill", &s), "u", json!({"skill_ids": [id]}))
        .await;
    assert_eq!(code, 201, "{out}");
    assert_eq!(out["added"], json!([]));
    assert!(
        out["failed"][&id]
            .as_str()
            .unwrap()
            .contains("could not be reached"),
        "{out}"
    );
    // An answer that is not a catalogue is the hub's failure too.
    hub.push_for(
        "/hub.json",
        ScriptedResponse::text(200, "<html>oops</html>"),
    );
    assert_eq!(h.get("/hub/skill/remote/cards", "u").await.0, 502);
}

#[tokio::test]
async fn a_hostile_archive_is_reported_and_nothing_lands() {
    let hub = FakeServer::start().await.unwrap();
    let scratch = tempfile::tempdir().unwrap();
    // A skill folder with a link to a host file in it.
    let folder = scratch.path().join("linked");
    write(&folder.join("SKILL.md"), &skill_md("linked"));
    std::os::unix::fs::symlink("/etc/passwd", folder.join("passwd")).unwrap();
    let out = scratch.path().join("linked.tar.gz");
    let status = std::process::Command::new("tar")
        .arg("czf")
        .arg(&out)
        .arg("-C")
        .arg(scratch.path())
        .arg("linked")
        .status()
        .unwrap();
    assert!(status.success());
    let catalogue = json!({
        "kind": "skill", "hub_id": "remote", "display_name": "Remote",
        "cards": [{"id": "bad", "name": "linked", "archive_url": hub.url("/bad.tar.gz")}]
    });
    hub.push_for("/hub.json", ScriptedResponse::json(200, &catalogue));
    hub.push_for(
        "/bad.tar.gz",
        ScriptedResponse::new(200).with_body(std::fs::read(out).unwrap()),
    );
    // Cached for the whole test: the catalogue is fetched once.
    let h = Harness::start_with_hubs(
        vec![HubSource::Remote(hub.url("/hub.json"))],
        Duration::from_secs(300),
    )
    .await;
    let s = h.setup("u").await;
    let (code, view) = h
        .post("/hub/skill/remote/cards/bad/install", "u", json!({}))
        .await;
    assert_eq!(code, 201, "{view}");
    let id = view["id"].as_str().unwrap().to_owned();
    let (code, out) = h
        .post(&from_library("skill", &s), "u", json!({"skill_ids": [id]}))
        .await;
    assert_eq!(code, 201, "{out}");
    assert_eq!(out["added"], json!([]));
    let reason = out["failed"][&id].as_str().unwrap();
    assert!(reason.contains("link"), "{out}");
    let ws = workspace(&h, "u", &s).await;
    assert!(ws.list_skills(&s.agent_id).await.unwrap().is_empty());
    assert_eq!(h.get("/hub/skill/remote/cards", "u").await.0, 200);
    let catalogue_fetches = hub
        .requests()
        .iter()
        .filter(|r| r.path == "/hub.json")
        .count();
    assert_eq!(catalogue_fetches, 1);
}

async fn state_with(dir: &Path, hubs: Vec<HubSource>) -> AppState {
    let storage = Arc::new(SqliteStorage::open(dir).await.unwrap());
    AppState::new(
        storage,
        Arc::new(InMemoryBus::new()),
        Sealer::from_key(&[3; 32]),
        ServerConfig::new(dir).with_hubs(hubs),
    )
}

#[tokio::test]
async fn bad_hub_configurations_are_refused_at_startup() {
    let dir = tempfile::tempdir().unwrap();
    let hubs = local_hubs(dir.path(), Path::new("/nowhere/index.js"));
    let data = dir.path().join("data");

    // The same hub twice.
    let twice = vec![hubs[0].clone(), hubs[0].clone()];
    let e = state_with(&data, twice)
        .await
        .load_hubs()
        .await
        .unwrap_err();
    assert!(e.to_string().contains("local"), "{e}");
    // A skill directory climbing out of the catalogue.
    let climbing = json!({"kind": "skill", "hub_id": "c", "display_name": "C",
        "cards": [{"id": "x", "name": "x", "path": "../outside"}]});
    write(&dir.path().join("climb.json"), &climbing.to_string());
    let e = state_with(&data, vec![HubSource::Local(dir.path().join("climb.json"))])
        .await
        .load_hubs()
        .await
        .unwrap_err();
    assert!(e.to_string().contains(".."), "{e}");
    // Not a catalogue; a plain-http remote that is not on loopback.
    write(&dir.path().join("junk.json"), "{\"cards\": 3}");
    for source in [
        HubSource::Local(dir.path().join("junk.json")),
        HubSource::Local(dir.path().join("missing.json")),
        HubSource::Remote("http://hub.example.com/hub.json".to_owned()),
    ] {
        assert!(
            state_with(&data, vec![source.clone()])
                .await
                .load_hubs()
                .await
                .is_err(),
            "{source}"
        );
    }
    // A good configuration loads.
    state_with(&data, hubs).await.load_hubs().await.unwrap();
}

#[tokio::test]
async fn a_users_library_holds_a_bounded_number_of_entries() {
    let dir = tempfile::tempdir().unwrap();
    let hubs = local_hubs(dir.path(), Path::new("/nowhere/index.js"));
    let h = Harness::start_with_hubs(hubs, Duration::from_secs(300)).await;
    let install = |user: &'static str, n: usize| {
        let path = format!("/hub/skill/local-skills/cards/greeter/install?name=g{n}");
        let h = &h;
        async move { h.post(&path, user, json!({})).await }
    };
    for n in 0..256 {
        let (code, body) = install("u", n).await;
        assert_eq!(code, 201, "{n}: {body}");
    }
    let (code, body) = install("u", 256).await;
    assert_eq!(code, 409, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("full"), "{body}");
    // Another user's library is their own.
    assert_eq!(install("v", 0).await.0, 201);
}

/// Installs that stall (a hub whose archive never finishes) are cut off
/// at the skill-install time limit and free their slots: with every
/// shared slot held by another tenant's stalled install, a tenant's
/// install goes through once those are cut off, not when the hub's own
/// download timeout ends them.
#[tokio::test]
async fn stalled_skill_installs_are_cut_off_at_the_time_limit_and_free_their_slots() {
    use oxiscope_server::{AuthMode, WorkspaceMode};
    use oxiscope_test_support::BodyEnd;
    let hub = FakeServer::start().await.unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let archive = skill_archive(scratch.path(), "quick-skill");
    let catalogue = json!({
        "kind": "skill", "hub_id": "remote", "display_name": "Remote",
        "cards": [
            {"id": "slow", "name": "slow-skill", "markdown": "slow",
             "archive_url": hub.url("/archives/slow.tar.gz")},
            {"id": "quick", "name": "quick-skill", "markdown": "quick",
             "archive_url": hub.url("/archives/quick.tar.gz")},
        ]
    });
    for _ in 0..8 {
        hub.push_for("/hub.json", ScriptedResponse::json(200, &catalogue));
    }
    let url = hub.url("/hub.json");
    let h = Harness::start_custom(AuthMode::DevHeader, move |c| {
        let mut c = c
            .with_workspace(WorkspaceMode::Local)
            .with_hubs(vec![HubSource::Remote(url)])
            .with_skill_install_limit(Duration::from_secs(2));
        c.engine.hub_cache_ttl = Duration::from_secs(300);
        c
    })
    .await;
    // One tenant per shared slot (a tenant holds at most one).
    let mut tenants = Vec::new();
    for (user, card) in [
        ("m0", "slow"),
        ("m1", "slow"),
        ("m2", "slow"),
        ("m3", "slow"),
        ("alice", "quick"),
    ] {
        let s = h.setup(user).await;
        let (code, view) = h
            .post(
                &format!("/hub/skill/remote/cards/{card}/install"),
                user,
                json!({}),
            )
            .await;
        assert_eq!(code, 201, "{view}");
        tenants.push((user, s, view["id"].as_str().unwrap().to_owned()));
    }
    let Some((alice, alice_s, alice_id)) = tenants.pop() else {
        unreachable!()
    };
    for _ in 0..4 {
        hub.push_for(
            "/archives/slow.tar.gz",
            ScriptedResponse::new(200)
                .with_chunk_after(Duration::ZERO, vec![0x1f, 0x8b])
                .with_end(BodyEnd::Stall),
        );
    }
    hub.push_for(
        "/archives/quick.tar.gz",
        ScriptedResponse::new(200).with_body(archive),
    );
    let paths: Vec<String> = tenants
        .iter()
        .map(|(_, s, _)| from_library("skill", s))
        .collect();
    // The four stalled installs hold every slot until the limit cuts them
    // off (without it, until the hub download's own timeout, ~30 s).
    let started = std::time::Instant::now();
    let stalled = tokio::time::timeout(
        Duration::from_secs(60),
        futures_util::future::join_all(
            tenants
                .iter()
                .zip(&paths)
                .map(|((user, _, id), path)| h.post(path, user, json!({"skill_ids": [id]}))),
        ),
    )
    .await
    .expect("the stalled installs ended");
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(15),
        "the stalled installs held their slots for {took:?}"
    );
    assert_eq!(
        hub.requests()
            .iter()
            .filter(|r| r.path == "/archives/slow.tar.gz")
            .count(),
        4,
        "each stalled install held a slot"
    );
    // Their slots are free again: alice's install goes through at once,
    // within its own limit (it would wait behind slots still held).
    let (code, out) = h
        .post(
            &from_library("skill", &alice_s),
            alice,
            json!({"skill_ids": [alice_id]}),
        )
        .await;
    assert_eq!(code, 201, "{out}");
    assert_eq!(out["added"], json!(["quick-skill"]), "{out}");
    for ((code, out), (user, s, id)) in stalled.iter().zip(&tenants) {
        assert_eq!(*code, 201, "{user}: {out}");
        assert_eq!(out["added"], json!([]), "{user}: {out}");
        let reason = out["failed"][id].as_str().unwrap_or_default();
        assert!(reason.contains("time limit of 2 s"), "{user}: {out}");
        // Nothing landed.
        let skills = workspace(&h, user, s).await.list_skills(&s.agent_id).await;
        assert!(!skills.unwrap().iter().any(|k| k.name == "slow-skill"));
    }
}
