//! The promise of long-term memory: what an agent writes in one session is
//! used by a fresh agent in a later one.

use std::sync::Arc;

use oxiscope_memory::{MEMORY_INDEX, MemoryMode};
use oxiscope_model::ToolChoice;
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::*;

#[tokio::test]
async fn a_memory_written_in_one_session_is_used_in_the_next() {
    let workdir = tempfile::tempdir().unwrap();
    let mem_dir = workdir.path().join("Memory");
    let profile_path = mem_dir.join("user_profile.md");
    let index_path = mem_dir.join(MEMORY_INDEX);
    let index_line = "- [User profile](user_profile.md) — Where the user lives, how they like \
                      answers.\n";

    // Session 1: the model saves a memory and indexes it.
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::tool_call(
            "w1",
            "Write",
            json!({"file_path": profile_path, "content": PROFILE}).to_string(),
        ),
        ScriptedTurn::tool_call("r1", "Read", json!({"file_path": index_path}).to_string()),
        ScriptedTurn::tool_call(
            "w2",
            "Write",
            json!({"file_path": index_path, "content": index_line}).to_string(),
        ),
        ScriptedTurn::text("Noted: Hangzhou, concise Chinese answers."),
    ]));
    let selector = Arc::new(ScriptedModel::new([]));
    let first = agent(
        workdir.path(),
        &model,
        memory(workdir.path(), &selector, params(MemoryMode::StaticControl)),
    );
    let events = run(
        &first,
        "Remember that I live in Hangzhou and prefer concise Chinese answers.",
    )
    .await;
    assert!(completed(&events), "{events:#?}");
    drop(first);
    assert_eq!(std::fs::read_to_string(&profile_path).unwrap(), PROFILE);
    assert_eq!(std::fs::read_to_string(&index_path).unwrap(), index_line);
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    let system = text(&requests[0].messages[0]);
    assert!(system.contains("You are Friday"), "{system}");
    assert!(system.contains(&mem_dir.display().to_string()), "{system}");
    assert!(system.contains("MEMORY.md is empty"), "{system}");
    // No memory files yet: nothing to select, no selection call.
    assert!(selector.requests().is_empty());

    // Session 2: a new agent, fresh state, the same directory.
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::text(
        "You live in Hangzhou; I will keep answers short and in Chinese.",
    )]));
    let selector = Arc::new(ScriptedModel::new([ScriptedTurn::tool_call(
        "s1",
        "select_memories",
        json!({"selected_files": ["user_profile.md", "invented.md"]}).to_string(),
    )]));
    let second = agent(
        workdir.path(),
        &model,
        memory(workdir.path(), &selector, params(MemoryMode::StaticControl)),
    );
    let events = run(&second, "Do you remember where I live?").await;
    assert!(completed(&events), "{events:#?}");

    // The selection call saw the request and the memory list.
    let picks = selector.requests();
    assert_eq!(picks.len(), 1);
    assert_eq!(
        picks[0].tool_choice,
        Some(ToolChoice::tool("select_memories"))
    );
    let ask = text(&picks[0].messages[1]);
    assert!(ask.contains("user: Do you remember where I live?"), "{ask}");
    assert!(
        ask.contains("- [user] user_profile.md (")
            && ask.contains("): When answering the user, read this"),
        "{ask}"
    );

    // The agent's model got the index in its system prompt and the memory
    // as a hint in the reply it was asked to continue.
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let messages = &requests[0].messages;
    let system = text(&messages[0]);
    assert!(
        system.contains(&format!("## MEMORY.md\n{}", index_line.trim_end())),
        "{system}"
    );
    let reply = messages.last().unwrap();
    let hints = hints(reply);
    assert_eq!(hints.len(), 1, "{messages:#?}");
    let hint = &hints[0];
    assert!(
        hint.contains(&format!(
            "Memory (saved today): {}:",
            profile_path.display()
        )),
        "{hint}"
    );
    assert!(hint.contains("The user lives in Hangzhou"), "{hint}");
    assert!(!hint.contains("invented"), "{hint}");
}

#[tokio::test]
async fn the_hint_is_injected_once_and_kept_in_the_reply() {
    let workdir = tempfile::tempdir().unwrap();
    let mem_dir = workdir.path().join("Memory");
    write(&mem_dir, "user_profile.md", PROFILE.as_bytes());
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::tool_call(
            "r1",
            "Read",
            json!({"file_path": mem_dir.join("user_profile.md")}).to_string(),
        ),
        ScriptedTurn::text("Hangzhou."),
    ]));
    let selector = Arc::new(ScriptedModel::new([ScriptedTurn::tool_call(
        "s1",
        "select_memories",
        json!({"selected_files": ["user_profile.md"]}).to_string(),
    )]));
    let agent = agent(
        workdir.path(),
        &model,
        memory(workdir.path(), &selector, params(MemoryMode::StaticControl)),
    );
    let events = run(&agent, "Where do I live?").await;
    assert!(completed(&events));
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    // The second step still has the one hint of the first (it is part of
    // the reply), not a second one.
    for request in &requests {
        assert_eq!(hints(request.messages.last().unwrap()).len(), 1);
    }
    let streamed = events
        .iter()
        .filter(|e| {
            matches!(e, oxiscope_message::AgentEvent::HintBlock(h)
            if h.hint.text("").contains("These memories from earlier conversations"))
        })
        .count();
    assert_eq!(streamed, 1);
}

#[tokio::test]
async fn an_unreadable_selection_injects_nothing_and_the_reply_goes_on() {
    let workdir = tempfile::tempdir().unwrap();
    write(
        &workdir.path().join("Memory"),
        "user_profile.md",
        PROFILE.as_bytes(),
    );
    for answer in [
        ScriptedTurn::text("I think user_profile.md"),
        ScriptedTurn::tool_call("s1", "select_memories", "{not json"),
        ScriptedTurn::tool_call("s1", "select_memories", r#"{"selected_files": "x"}"#),
        ScriptedTurn::error(oxiscope_model::ModelError::InvalidRequest {
            message: "boom".into(),
        }),
    ] {
        let model = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hello.")]));
        let selector = Arc::new(ScriptedModel::new([answer]));
        let agent = agent(
            workdir.path(),
            &model,
            memory(workdir.path(), &selector, params(MemoryMode::Both)),
        );
        let events = run(&agent, "Where do I live?").await;
        assert!(completed(&events), "{events:#?}");
        assert_eq!(selector.requests().len(), 1, "one call, no retry");
        let requests = model.requests();
        assert!(hints(requests[0].messages.last().unwrap()).is_empty());
    }
}

#[tokio::test]
async fn without_waiting_the_hint_arrives_at_a_later_step() {
    let workdir = tempfile::tempdir().unwrap();
    let mem_dir = workdir.path().join("Memory");
    write(&mem_dir, "user_profile.md", PROFILE.as_bytes());
    // A slow first step: the selection (instant) finishes during it.
    let model = Arc::new(
        ScriptedModel::new([
            ScriptedTurn::tool_call(
                "r1",
                "Read",
                json!({"file_path": mem_dir.join(MEMORY_INDEX)}).to_string(),
            ),
            ScriptedTurn::text("Hangzhou."),
        ])
        .with_chunk_delay(std::time::Duration::from_millis(300)),
    );
    let selector = Arc::new(ScriptedModel::new([ScriptedTurn::tool_call(
        "s1",
        "select_memories",
        json!({"selected_files": ["user_profile.md"]}).to_string(),
    )]));
    let params = oxiscope_memory::Parameters {
        mode: MemoryMode::StaticControl,
        ..oxiscope_memory::Parameters::default()
    };
    assert!(
        params.retrieval_wait.is_zero(),
        "AgentScope's behaviour by default"
    );
    let agent = agent(
        workdir.path(),
        &model,
        memory(workdir.path(), &selector, params),
    );
    assert!(completed(&run(&agent, "Where do I live?").await));
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let last = hints(requests[1].messages.last().unwrap());
    assert_eq!(last.len(), 1);
    assert!(last[0].contains("Hangzhou"));
}

#[tokio::test]
async fn a_selection_that_never_answers_does_not_hold_the_reply() {
    let workdir = tempfile::tempdir().unwrap();
    write(
        &workdir.path().join("Memory"),
        "user_profile.md",
        PROFILE.as_bytes(),
    );
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hello.")]));
    let selector = Arc::new(ScriptedModel::new([ScriptedTurn::text("").hang_after(0)]));
    let params = oxiscope_memory::Parameters {
        mode: MemoryMode::Both,
        retrieval_wait: std::time::Duration::from_millis(100),
        ..oxiscope_memory::Parameters::default()
    };
    let agent = agent(
        workdir.path(),
        &model,
        memory(workdir.path(), &selector, params),
    );
    let events = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        run(&agent, "Where do I live?"),
    )
    .await
    .expect("the reply ends although the selection hangs");
    assert!(completed(&events));
    assert_eq!(selector.requests().len(), 1);
    assert!(hints(model.requests()[0].messages.last().unwrap()).is_empty());
}
