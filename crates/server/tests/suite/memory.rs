//! The operator's agentic memory: every session's agent keeps Markdown
//! memories in its workspace, sees their index in its system prompt, and
//! searches them with `memory_search`.

use serde_json::Value;

use super::common::{Harness, text_answer};
use super::knowledge::run_reply;
use oxiscope_server::AuthMode;

fn system_and_tools(request: &str) -> (String, Vec<String>) {
    let body: Value = serde_json::from_str(request).unwrap();
    let system = body["messages"][0].to_string();
    let tools = body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    (system, tools)
}

#[tokio::test]
async fn sessions_keep_long_term_memory_in_their_workspace_when_the_operator_turns_it_on() {
    let h = Harness::start_custom(AuthMode::DevHeader, |mut c| {
        c.engine.agentic_memory = Some(oxiscope_memory::Parameters {
            mode: oxiscope_memory::MemoryMode::AgentControl,
            ..oxiscope_memory::Parameters::default()
        });
        c
    })
    .await;
    let s = h.setup("u").await;
    let session = h.stored_session("u", &s).await;
    // What an earlier conversation left in the workspace.
    let memory = h.workspace_dir("u", &session.workspace_id).join("Memory");
    std::fs::create_dir_all(&memory).unwrap();
    std::fs::write(
        memory.join("MEMORY.md"),
        "- [Pets](pets.md) — Alice's cat is called Tom\n",
    )
    .unwrap();
    std::fs::write(
        memory.join("pets.md"),
        "---\nname: Pets\ndescription: the user's pets\n---\nAlice's cat is called Tom.\n",
    )
    .unwrap();
    h.fake.push(text_answer("Tom."));
    let requests = run_reply(&h, "u", &s, "What is my cat called?").await;
    let (system, tools) = system_and_tools(&requests[0]);
    assert!(system.contains("Alice's cat is called Tom"), "{system}");
    assert!(tools.iter().any(|t| t == "memory_search"), "{tools:?}");
}

#[tokio::test]
async fn without_the_setting_there_is_no_memory() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    h.fake.push(text_answer("Hello."));
    let requests = run_reply(&h, "u", &s, "Hi").await;
    let (system, tools) = system_and_tools(&requests[0]);
    assert!(!system.contains("MEMORY.md"), "{system}");
    assert!(!tools.iter().any(|t| t == "memory_search"), "{tools:?}");
}
