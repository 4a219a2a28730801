//! AgentScope's web UI's journey at the HTTP level, in the order the UI
//! makes its requests: open a session (history, then the stream without a
//! cursor), chat, confirm a tool call, reload (history, stream again). Every
//! message and event is seen once and in order, the session is named after
//! its first reply, and no documented route answers a bare 404.

use std::time::Duration;

use oxiscope_test_support::OpenAiScript;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, Setup, text_answer, types};

const QUIET: Duration = Duration::from_millis(300);

async fn session_name(h: &Harness, s: &Setup) -> String {
    let (code, list) = h
        .get(&format!("/sessions/?agent_id={}", s.agent_id), "u")
        .await;
    assert_eq!(code, 200, "{list}");
    let view = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["session"]["id"] == s.session_id.as_str())
        .unwrap_or_else(|| panic!("session listed: {list}"));
    view["session"]["config"]["name"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn roles(page: &Value) -> Vec<&str> {
    page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect()
}

/// The model asks to write a file in the session's workspace (a write asks
/// for confirmation in the default mode).
fn write_call(h: &Harness, s: &Setup) -> oxiscope_test_support::ScriptedResponse {
    let path = h.tool_dir("u", &s.agent_id).join("note.txt");
    let args = json!({"file_path": path, "content": "from the agent"}).to_string();
    OpenAiScript::new()
        .tool_call(0, "call_w", "Write")
        .tool_args(0, args)
        .finish("tool_calls")
        .usage(10, 5, 0)
        .response()
}

#[tokio::test]
async fn the_web_ui_journey_sees_every_message_and_event_once_and_in_order() {
    let h = Harness::start().await;
    let s = h.setup("u").await;

    // A new session is named after its creation time.
    let created = session_name(&h, &s).await;
    assert!(
        chrono::NaiveDateTime::parse_from_str(&created, "%Y-%m-%d %H:%M:%S").is_ok(),
        "{created}"
    );

    // Open the chat: empty history, then the stream without a cursor.
    let page = h.messages("u", &s).await;
    assert_eq!(roles(&page), Vec::<&str>::new());
    let mut sse = h.subscribe("u", &s, None).await;

    // First turn: a plain answer, then the session's new name.
    h.fake.push(text_answer("Files are listed with ls."));
    let (code, body) = h.chat("u", &s, user_msg("How do I list files?")).await;
    assert_eq!(code, 200, "{body}");
    let first = sse.until("REPLY_END").await;
    assert_eq!(types(&first)[0], "REPLY_START");
    let renamed = sse.until("CUSTOM").await;
    assert_eq!(types(&renamed), ["CUSTOM"]);
    let custom = &renamed[0];
    assert_eq!(custom["name"], "session_updated");
    assert_eq!(custom["value"]["session_id"], s.session_id.as_str());
    assert_eq!(custom["value"]["name"], "How do I list files?");
    assert_eq!(session_name(&h, &s).await, "How do I list files?");

    // Reload: the history oldest first, and a new stream without a cursor
    // gets no event of the stored reply but its end (and the rename).
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    let page = h.messages("u", &s).await;
    assert_eq!(roles(&page), ["user", "assistant"]);
    let mut reloaded = h.subscribe("u", &s, None).await;
    let replay = reloaded.drain(QUIET).await;
    assert_eq!(types(&replay), ["REPLY_END", "CUSTOM"], "{replay:?}");
    assert_eq!(replay[0]["reply_id"], first[0]["reply_id"]);
    // With the page's cursor: nothing at all.
    let cursor = page["event_cursor"].as_str().unwrap().to_owned();
    let mut exact = h.subscribe("u", &s, Some(&cursor)).await;
    assert_eq!(exact.drain(QUIET).await, Vec::<Value>::new());

    // Second turn: a tool call that needs confirmation parks the reply.
    h.fake.push(write_call(&h, &s));
    let (code, _) = h.chat("u", &s, user_msg("write a note")).await;
    assert_eq!(code, 200);
    let parked = reloaded.until("REQUIRE_USER_CONFIRM").await;
    assert_eq!(types(&parked)[0], "REPLY_START");
    let ask = parked.last().unwrap().clone();
    let reply_id = ask["reply_id"].as_str().unwrap().to_owned();
    assert_eq!(h.wait_not_running("u", &s).await, "awaiting_permission");
    // The name is settled: a later reply does not rename the session.
    assert_eq!(session_name(&h, &s).await, "How do I list files?");

    // Reload while parked: the confirmation card comes back, alone.
    let mut parked_reload = h.subscribe("u", &s, None).await;
    let replay = parked_reload.drain(QUIET).await;
    assert_eq!(types(&replay), ["REQUIRE_USER_CONFIRM"]);
    assert_eq!(replay[0]["id"], ask["id"]);

    // Confirm: the answer is echoed before the resumed reply.
    h.fake.push(text_answer("Written."));
    let confirm = json!({
        "type": "USER_CONFIRM_RESULT",
        "reply_id": reply_id,
        "confirm_results": [{"confirmed": true, "tool_call": ask["tool_calls"][0]}],
    });
    let (code, body) = h.chat("u", &s, confirm).await;
    assert_eq!(code, 200, "{body}");
    let resumed = parked_reload.until("REPLY_END").await;
    let kinds = types(&resumed);
    assert_eq!(
        kinds[..2],
        ["USER_CONFIRM_RESULT", "REPLY_START"],
        "{kinds:?}"
    );
    assert_eq!(resumed[0]["reply_id"], reply_id.as_str());
    assert_eq!(resumed[1]["reply_id"], reply_id.as_str());
    assert!(kinds.contains(&"TOOL_RESULT_END"), "{kinds:?}");
    // The first subscriber saw the same events, each once.
    let live = reloaded.until("REPLY_END").await;
    assert_eq!(live, resumed);
    assert_eq!(reloaded.drain(QUIET).await, Vec::<Value>::new());

    // Final reload: four messages, oldest first; the parked reply was
    // completed in place.
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    let page = h.messages("u", &s).await;
    assert_eq!(roles(&page), ["user", "assistant", "user", "assistant"]);
    assert_eq!(page["messages"][3]["id"], reply_id.as_str());
    assert_eq!(page["messages"][3]["finished_reason"], "completed");
}

#[tokio::test]
async fn a_named_session_keeps_its_name() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let (code, _) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/sessions/{}?agent_id={}", s.session_id, s.agent_id),
            "u",
            Some(json!({"name": "Mine"})),
        )
        .await;
    assert_eq!(code, 200);
    let mut sse = h.subscribe("u", &s, None).await;
    h.fake.push(text_answer("hello"));
    h.chat("u", &s, user_msg("hi there")).await;
    sse.until("REPLY_END").await;
    assert_eq!(sse.drain(QUIET).await, Vec::<Value>::new());
    assert_eq!(session_name(&h, &s).await, "Mine");
}

#[tokio::test]
async fn the_session_s_own_model_titles_it_when_configured_to() {
    let h = Harness::start_custom(oxiscope_server::AuthMode::DevHeader, |c| {
        c.with_session_titles(oxiscope_server::SessionTitles::Model)
    })
    .await;
    let s = h.setup("u").await;
    let mut sse = h.subscribe("u", &s, None).await;
    h.fake.push(text_answer("Use ls."));
    h.fake.push(text_answer("\"Listing files\"\n"));
    h.chat("u", &s, user_msg("How do I list files in a directory?"))
        .await;
    sse.until("REPLY_END").await;
    let custom = sse.until("CUSTOM").await;
    assert_eq!(custom[0]["value"]["name"], "Listing files");
    // The title call was a separate request carrying the opening message.
    let requests = h.fake.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body_text().contains("How do I list files"));
}

#[tokio::test]
async fn a_hostile_model_title_loses_its_control_characters_and_its_length() {
    let h = Harness::start_custom(oxiscope_server::AuthMode::DevHeader, |c| {
        c.with_session_titles(oxiscope_server::SessionTitles::Model)
    })
    .await;
    let s = h.setup("u").await;
    let mut sse = h.subscribe("u", &s, None).await;
    h.fake.push(text_answer("Use ls."));
    let mut title = OpenAiScript::new().text("\u{202E}Evil\u{1b}[31m\u{7} title ");
    for _ in 0..64 {
        title = title.text("x".repeat(1024));
    }
    h.fake.push(title.finish("stop").usage(10, 2, 0).response());
    h.chat("u", &s, user_msg("Name this")).await;
    sse.until("REPLY_END").await;
    let custom = sse.until("CUSTOM").await;
    let name = custom[0]["value"]["name"].as_str().unwrap().to_owned();
    assert!(name.starts_with("Evil[31m title x"), "{name:?}");
    assert!(
        !name
            .chars()
            .any(|c| c.is_control() || ('\u{202A}'..='\u{202E}').contains(&c)),
        "{name:?}"
    );
    assert!(name.chars().count() <= 61, "{name:?}");
    assert_eq!(session_name(&h, &s).await, name);
}

#[tokio::test]
async fn no_documented_route_answers_a_bare_not_found() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let reference: Value = serde_json::from_str(include_str!(
        "../../../../fixtures/agentscope-2.0.11/openapi.stripped.json"
    ))
    .unwrap();
    let mut bare = Vec::new();
    for (path, item) in reference["paths"].as_object().unwrap() {
        // Real ids where a route names one, a made-up one elsewhere.
        let concrete = path
            .replace("{session_id}", &s.session_id)
            .replace("{agent_id}", &s.agent_id)
            .replace("{credential_id}", &s.credential_id);
        let concrete = regex_free_fill(&concrete);
        let query = format!("agent_id={}&session_id={}", s.agent_id, s.session_id);
        let url = if concrete.contains('?') {
            format!("{concrete}&{query}")
        } else {
            format!("{concrete}?{query}")
        };
        for method in item.as_object().unwrap().keys() {
            if path.ends_with("/stream") {
                continue;
            }
            let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let body = (method != reqwest::Method::GET && method != reqwest::Method::DELETE)
                .then(|| json!({}));
            let (code, answer) = h.call(method.clone(), &url, "u", body).await;
            if code == 404 && answer == json!({"detail": "Not Found"}) {
                bare.push(format!("{method} {path}"));
            }
            if code == 405 {
                bare.push(format!("{method} {path} (405)"));
            }
        }
    }
    assert!(bare.is_empty(), "bare 404s: {bare:?}");
}

/// Replaces every remaining `{name}` path parameter with `x`.
fn regex_free_fill(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        match rest[open..].find('}') {
            Some(close) => {
                out.push('x');
                rest = &rest[open + close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}
