//! The three modes: who retrieves (the middleware, the model, both).

use std::sync::Arc;

use oxiscope_memory::{MEMORY_SEARCH_TOOL, MemoryMode, NOTHING_FOUND};
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::*;

fn offered(model: &ScriptedModel) -> Vec<String> {
    model.requests()[0]
        .tools
        .iter()
        .map(|t| t.function.name.clone())
        .collect()
}

#[tokio::test]
async fn static_control_selects_and_offers_no_tool() {
    let workdir = tempfile::tempdir().unwrap();
    write(
        &workdir.path().join("Memory"),
        "user_profile.md",
        PROFILE.as_bytes(),
    );
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hi.")]));
    let selector = Arc::new(ScriptedModel::new([ScriptedTurn::tool_call(
        "s1",
        "select_memories",
        r#"{"selected_files": []}"#,
    )]));
    let agent = agent(
        workdir.path(),
        &model,
        memory(workdir.path(), &selector, params(MemoryMode::StaticControl)),
    );
    assert!(completed(&run(&agent, "Hello").await));
    assert_eq!(selector.requests().len(), 1);
    assert!(!offered(&model).contains(&MEMORY_SEARCH_TOOL.to_owned()));
    let system = text(&model.requests()[0].messages[0]);
    assert!(!system.contains("memory_search"), "{system}");
    // An empty selection: no hint.
    assert!(hints(model.requests()[0].messages.last().unwrap()).is_empty());
}

#[tokio::test]
async fn agent_control_offers_the_search_tool_and_selects_nothing() {
    let workdir = tempfile::tempdir().unwrap();
    let mem_dir = workdir.path().join("Memory");
    write(&mem_dir, "user_profile.md", PROFILE.as_bytes());
    write(
        &mem_dir,
        "project/release.md",
        b"---\nname: Release\ndescription: When planning releases\ntype: project\n---\nFreeze on \
          2026-03-05.\n",
    );
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::tool_call("m1", MEMORY_SEARCH_TOOL, r#"{"query": "Hangzhou answers"}"#)
            .and_tool_call("m2", MEMORY_SEARCH_TOOL, r#"{"query": "kubernetes"}"#)
            .and_tool_call(
                "m3",
                MEMORY_SEARCH_TOOL,
                r#"{"query": "release", "limit": 0}"#,
            ),
        ScriptedTurn::text("You live in Hangzhou."),
    ]));
    // Any selection call would fail the test: the script is empty.
    let selector = Arc::new(ScriptedModel::new([]));
    let agent = agent(
        workdir.path(),
        &model,
        memory(workdir.path(), &selector, params(MemoryMode::AgentControl)),
    );
    assert!(completed(&run(&agent, "Where do I live?").await));
    assert!(selector.requests().is_empty());
    assert!(offered(&model).contains(&MEMORY_SEARCH_TOOL.to_owned()));
    let system = text(&model.requests()[0].messages[0]);
    assert!(system.contains("`memory_search`"), "{system}");

    let second = &model.requests()[1];
    let results = tool_results(second.messages.last().unwrap());
    assert_eq!(results.len(), 3, "{results:#?}");
    assert!(
        results[0].contains("The user lives in Hangzhou"),
        "{}",
        results[0]
    );
    assert!(!results[0].contains("Freeze"), "{}", results[0]);
    assert_eq!(results[1], NOTHING_FOUND);
    // The schema's minimum is checked before the tool runs.
    assert!(
        results[2].contains("less than the minimum of 1"),
        "{}",
        results[2]
    );
}

#[tokio::test]
async fn both_selects_and_offers_the_tool() {
    let workdir = tempfile::tempdir().unwrap();
    write(
        &workdir.path().join("Memory"),
        "user_profile.md",
        PROFILE.as_bytes(),
    );
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hi.")]));
    let selector = Arc::new(ScriptedModel::new([ScriptedTurn::tool_call(
        "s1",
        "select_memories",
        json!({"selected_files": ["user_profile.md"]}).to_string(),
    )]));
    let agent = agent(
        workdir.path(),
        &model,
        memory(workdir.path(), &selector, params(MemoryMode::Both)),
    );
    assert!(completed(&run(&agent, "Hello").await));
    assert!(offered(&model).contains(&MEMORY_SEARCH_TOOL.to_owned()));
    let hints = hints(model.requests()[0].messages.last().unwrap());
    assert_eq!(hints.len(), 1);
    assert!(hints[0].contains("Hangzhou"));
}
