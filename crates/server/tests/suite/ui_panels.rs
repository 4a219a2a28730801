//! The UI's panels in Chromium: knowledge bases (an upload indexed by the
//! offline model, then searched; a hostile SVG that runs nothing),
//! schedules (next fire times, disable, sessions, delete), the workspace
//! pane (attaching from the library and a hub), several calls allowed at
//! once, code highlighting.

use std::time::Duration;

use oxiscope_server::{AuthMode, HubSource};
use oxiscope_test_support::OpenAiScript;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::super::common::{Harness, text_answer};
use super::super::knowledge::{VOLCANO, settings};
use super::super::webdriver::Browser;
use super::{ENTER, sign_in};

/// Sets the value of the input `css` as a person typing it would.
async fn set_value(b: &Browser, css: &str, value: &str) {
    b.find(css).await;
    b.js(
        "const i = document.querySelector(arguments[0]); i.value = arguments[1]; \
         i.dispatchEvent(new Event('input')); i.dispatchEvent(new Event('change'));",
        json!([css, value]),
    )
    .await;
}

#[tokio::test]
async fn knowledge_bases_schedules_and_the_workspace_pane_work_in_the_browser() {
    let Some(b) = Browser::start().await else {
        return;
    };
    let h = Harness::start_custom(AuthMode::DevHeader, |c| c.with_knowledge(settings())).await;
    h.setup("kb-user").await;
    sign_in(&b, &h.base, "kb-user").await;
    b.find(".composer-input").await;
    // `confirm()` would block the driver: people say yes here.
    b.js("window.confirm = () => true;", json!([])).await;

    // A knowledge base on the offline model.
    b.click("#open-knowledge").await;
    b.type_into("input[name=kb-name]", "Nature").await;
    set_value(&b, "input[name=kb-dimensions]", "64").await;
    b.click("dialog form button[type=submit]").await;
    b.wait_text(".kb-list", "Nature").await;
    b.click(".kb-open").await;
    let dir = tempfile::tempdir().unwrap();
    let volcano = dir.path().join("volcano.txt");
    std::fs::write(&volcano, VOLCANO).unwrap();
    b.type_into("input[name=kb-file]", volcano.to_str().unwrap())
        .await;
    b.click(".kb-upload").await;
    b.wait_text(".kb-docs .kb-doc", "volcano.txt").await;
    b.wait_text(".kb-docs .badge", "ready").await;
    b.type_into("input[name=kb-query]", "What does lava cool into?")
        .await;
    b.click(".kb-search").await;
    b.wait_text(".kb-hit-text", "basalt").await;
    // A hostile SVG (its name too) is text on the page, whatever the
    // server makes of it.
    let svg = dir.path().join("<img src=x onerror=window.pwned=1>.svg");
    std::fs::write(
        &svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"window.pwned='svg'\">\
         <script>window.pwned='svg-script'</script><text>hi</text></svg>",
    )
    .unwrap();
    b.type_into("input[name=kb-file]", svg.to_str().unwrap())
        .await;
    b.click(".kb-upload").await;
    b.wait_text("body", ".svg").await;
    b.screenshot("13-knowledge").await;
    b.click("dialog header button").await;

    // A schedule: its next fire times in its zone, then off, its
    // sessions, gone.
    b.click("#open-schedules").await;
    b.type_into("input[name=schedule-name]", "Morning").await;
    set_value(&b, "input[name=schedule-cron]", "30 9 * * 1-5").await;
    set_value(&b, "input[name=schedule-timezone]", "Europe/Paris").await;
    b.wait_text(".fires-preview", "09:30 (Europe/Paris)").await;
    b.select("select[name=model]", "gpt-4.1").await;
    b.click("dialog form button[type=submit]").await;
    b.wait_text(".schedule-list .schedule", "Morning").await;
    b.wait_text(".schedule .fires", "09:30 (Europe/Paris)")
        .await;
    let (_, list) = h.get("/schedule/", "kb-user").await;
    assert_eq!(
        list["schedules"][0]["data"]["cron_expression"],
        "30 9 * * 1-5"
    );
    assert_eq!(list["schedules"][0]["data"]["timezone"], "Europe/Paris");
    b.screenshot("14-schedules").await;
    b.click(".schedule .toggle").await;
    b.wait_text(".schedule .badge", "disabled").await;
    let (_, list) = h.get("/schedule/", "kb-user").await;
    assert_eq!(list["schedules"][0]["data"]["enabled"], false);
    b.click(".schedule .show-sessions").await;
    b.wait_text(".schedule-sessions", "no session yet").await;
    b.click(".schedule .delete").await;
    b.wait_text(".schedule-list", "No schedules yet").await;
    b.click("dialog header button").await;

    // The workspace pane: files, MCP servers, skills, team.
    b.click("#toggle-files").await;
    b.click(".tab[data-tab=mcp]").await;
    b.wait_text(".tab-content", "No MCP server").await;
    b.click(".tab[data-tab=skills]").await;
    b.wait_text(".tab-content", "No skills").await;
    b.click(".tab[data-tab=team]").await;
    b.wait_text(".tab-content", "in no team").await;

    let page = b
        .js(
            "return {pwned: window.pwned ?? null, violations: window.oxiscopeViolations};",
            json!([]),
        )
        .await;
    assert_eq!(page, json!({"pwned": null, "violations": []}));
    b.quit().await;
}

#[tokio::test]
async fn several_asked_calls_are_allowed_at_once_and_code_is_highlighted() {
    let Some(b) = Browser::start().await else {
        return;
    };
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let dir = h.workspace_dir("u", &s.agent_id);
    let tool_dir = h.tool_dir("u", &s.agent_id);
    let args = |name: &str| {
        json!({"file_path": tool_dir.join(name), "content": format!("{name} body")}).to_string()
    };
    h.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_a", "Write")
            .tool_args(0, args("a.txt"))
            .tool_call(1, "call_b", "Write")
            .tool_args(1, args("b.txt"))
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response(),
    );
    h.fake.push(text_answer(
        "Both written:\n\n```rust\nfn main() { let n = 42; // the answer\n}\n```\n",
    ));
    sign_in(&b, &h.base, "u").await;
    b.type_into(".composer-input", &format!("write two{ENTER}"))
        .await;
    b.wait_text(".confirm .confirm-head", "2 calls").await;
    b.click(".confirm .allow-all").await;
    b.wait_text(".msg.role-assistant .md", "Both written").await;
    assert_eq!(
        std::fs::read_to_string(dir.join("a.txt")).unwrap(),
        "a.txt body"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("b.txt")).unwrap(),
        "b.txt body"
    );
    let tokens = b
        .js(
            "return [...document.querySelectorAll('.md pre code span')]
                .map(s => [s.className, s.textContent]);",
            json!([]),
        )
        .await;
    assert_eq!(
        tokens,
        json!([
            ["tok-k", "fn"],
            ["tok-f", "main"],
            ["tok-k", "let"],
            ["tok-n", "42"],
            ["tok-c", "// the answer"]
        ])
    );
    b.screenshot("15-highlight").await;
    b.quit().await;
}

#[tokio::test]
async fn the_pane_attaches_from_the_library_and_installs_from_a_hub() {
    let Some(b) = Browser::start().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    // A stdio server that cannot start (the attach flow is the point),
    // and a skill.
    write(
        "mcp/hub.json",
        &json!({"kind": "mcp", "hub_id": "local", "display_name": "Local MCPs", "cards": [
            {"id": "broken", "name": "broken", "display_name": "Broken server",
             "description": "Never starts",
             "config_template": {"type": "stdio_mcp", "command": "oxiscope-no-such-server"}}
        ]})
        .to_string(),
    );
    write(
        "skills/hub.json",
        &json!({"kind": "skill", "hub_id": "local-skills", "display_name": "Local skills",
            "cards": [{"id": "greeter", "name": "greeter", "description": "Greets", "path": "greeter"}]})
        .to_string(),
    );
    write(
        "skills/greeter/SKILL.md",
        "---\nname: greeter\ndescription: Greets people politely.\n---\nSay hello.\n",
    );
    let hubs = vec![
        HubSource::Local(dir.path().join("mcp")),
        HubSource::Local(dir.path().join("skills/hub.json")),
    ];
    let h = Harness::start_with_hubs(hubs, Duration::from_secs(60)).await;
    h.setup("lib-user").await;
    // The MCP server goes into the library through the API.
    let (code, installed) = h
        .post("/hub/mcp/local/cards/broken/install", "lib-user", json!({}))
        .await;
    assert_eq!(code, 201, "{installed}");
    sign_in(&b, &h.base, "lib-user").await;
    b.find(".composer-input").await;
    b.click("#toggle-files").await;

    // Attached from the library: the pane lists it (unhealthy, its error
    // shown); attached again, the refusal is shown.
    b.click(".tab[data-tab=mcp]").await;
    b.wait_text(".tab-content", "No MCP server").await;
    b.wait_text(".library-item[data-name=broken]", "Broken server")
        .await;
    b.click(".library-item[data-name=broken] .attach-item")
        .await;
    b.wait_text(".attach-result", "Attached: broken").await;
    b.wait_text(".mcp-list .mcp", "broken").await;
    b.wait_text(".mcp-list .mcp", "unhealthy").await;
    b.screenshot("16-attach-mcp").await;
    b.click(".library-item[data-name=broken] .attach-item")
        .await;
    b.wait_text(".attach-result", "Not attached").await;
    b.wait_text(".attach-result", "already").await;

    // A skill installed from a hub's catalogue lands in the library and
    // the workspace.
    b.click(".tab[data-tab=skills]").await;
    b.wait_text(".tab-content", "No skills").await;
    b.wait_text(".library", "no skill").await;
    b.click(".hub[data-hub=local-skills] summary").await;
    b.click(".hub-card[data-card=greeter] .install-card").await;
    b.wait_text(".attach-result", "Attached: greeter").await;
    b.wait_text(".skill-list .skill", "Greets people politely")
        .await;
    b.wait_text(".library-item[data-name=greeter]", "greeter")
        .await;
    let (_, library) = h.get("/skill", "lib-user").await;
    assert_eq!(library[0]["name"], "greeter");

    let page = b.js("return window.oxiscopeViolations;", json!([])).await;
    assert_eq!(page, json!([]));
    b.quit().await;
}
