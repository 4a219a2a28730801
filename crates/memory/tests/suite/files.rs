//! Bad files, limits and path confinement: skipped with a warning, never
//! a failure.

use std::sync::Arc;

use oxiscope_memory::{AgenticMemoryMiddleware, Error, MemoryMode, Parameters};
use oxiscope_model::DynChatModel;
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::*;

#[tokio::test]
async fn bad_files_are_left_out_of_the_selection() {
    let workdir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mem_dir = workdir.path().join("Memory");
    write(&mem_dir, "user_profile.md", PROFILE.as_bytes());
    write(
        &mem_dir,
        "no_front_matter.md",
        b"# Just notes\nNothing here.\n",
    );
    write(&mem_dir, "unclosed.md", b"---\nname: x\n");
    write(
        &mem_dir,
        "binary.md",
        b"---\nname: bin\ndescription: d\ntype: user\n---\n\xff\xfe\n",
    );
    let mut huge = b"---\nname: huge\ndescription: big\ntype: user\n---\n".to_vec();
    huge.resize(5_000, b'x');
    write(&mem_dir, "huge.md", &huge);
    write(&mem_dir, "notes.txt", b"---\nname: t\n---\n");
    write(
        outside.path(),
        "secret.md",
        b"---\nname: s\ndescription: secret\n---\nTOP SECRET\n",
    );
    std::os::unix::fs::symlink(outside.path().join("secret.md"), mem_dir.join("link.md")).unwrap();
    std::os::unix::fs::symlink(outside.path(), mem_dir.join("linked_dir")).unwrap();

    let selector = Arc::new(ScriptedModel::new([ScriptedTurn::tool_call(
        "s1",
        "select_memories",
        json!({"selected_files": ["user_profile.md", "link.md", "linked_dir/secret.md",
            "huge.md", "binary.md", "../secret.md"]})
        .to_string(),
    )]));
    let model: Arc<dyn DynChatModel> = selector.clone();
    let memory = AgenticMemoryMiddleware::builder(workdir.path(), model)
        .parameters(Parameters {
            max_file_bytes: 4_096,
            ..Parameters::default()
        })
        .build()
        .unwrap();
    let hint = memory
        .relevant_memories("user: where do I live?")
        .await
        .unwrap();
    assert!(hint.contains("The user lives in Hangzhou"), "{hint}");
    assert!(!hint.contains("TOP SECRET"), "{hint}");
    assert_eq!(hint.matches("Memory (saved").count(), 1, "{hint}");

    let ask = text(&selector.requests()[0].messages[1]);
    let listed: Vec<&str> = ask.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(listed.len(), 1, "{ask}");
    assert!(listed[0].starts_with("- [user] user_profile.md ("), "{ask}");
}

#[tokio::test]
async fn a_memory_is_cut_to_its_token_budget() {
    let workdir = tempfile::tempdir().unwrap();
    let mut long = PROFILE.to_owned();
    long.push_str(&"padding line\n".repeat(200));
    long.push_str("THE END\n");
    write(
        &workdir.path().join("Memory"),
        "user_profile.md",
        long.as_bytes(),
    );
    let selector = Arc::new(ScriptedModel::new([ScriptedTurn::tool_call(
        "s1",
        "select_memories",
        r#"{"selected_files": ["user_profile.md"]}"#,
    )]));
    let model: Arc<dyn DynChatModel> = selector.clone();
    let memory = AgenticMemoryMiddleware::builder(workdir.path(), model)
        .parameters(Parameters {
            retrieval_max_tokens_per_md: 100,
            ..Parameters::default()
        })
        .build()
        .unwrap();
    let hint = memory.relevant_memories("user: hi").await.unwrap();
    assert!(hint.contains("The user lives in Hangzhou"), "{hint}");
    assert!(!hint.contains("THE END"), "{hint}");
}

#[tokio::test]
async fn a_long_index_is_cut_in_the_system_prompt() {
    let workdir = tempfile::tempdir().unwrap();
    let index: String = (0..300)
        .map(|i| format!("- [M{i}](m{i}.md) — memory {i}\n"))
        .collect();
    write(
        &workdir.path().join("Memory"),
        "MEMORY.md",
        index.as_bytes(),
    );
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hi.")]));
    let selector = Arc::new(ScriptedModel::new([]));
    let agent = agent(
        workdir.path(),
        &model,
        memory(workdir.path(), &selector, params(MemoryMode::AgentControl)),
    );
    assert!(completed(&run(&agent, "Hello").await));
    let system = text(&model.requests()[0].messages[0]);
    assert!(system.contains("- [M199](m199.md)"), "{system}");
    assert!(!system.contains("- [M200](m200.md)"), "{system}");
    assert!(system.contains("100 more lines"), "{system}");
    assert!(system.contains("offset 200"), "{system}");
}

#[tokio::test]
async fn an_index_linked_out_of_the_directory_is_not_read() {
    let workdir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mem_dir = workdir.path().join("Memory");
    std::fs::create_dir_all(&mem_dir).unwrap();
    write(outside.path(), "secret.txt", b"TOP SECRET\n");
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), mem_dir.join("MEMORY.md"))
        .unwrap();
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hi.")]));
    let selector = Arc::new(ScriptedModel::new([]));
    let agent = agent(
        workdir.path(),
        &model,
        memory(workdir.path(), &selector, params(MemoryMode::AgentControl)),
    );
    assert!(completed(&run(&agent, "Hello").await));
    let system = text(&model.requests()[0].messages[0]);
    assert!(!system.contains("TOP SECRET"), "{system}");
    assert!(system.contains("MEMORY.md is empty"), "{system}");
}

#[test]
fn bad_setups_are_refused() {
    let model: Arc<dyn DynChatModel> = Arc::new(ScriptedModel::new([]));
    let dir = tempfile::tempdir().unwrap();
    let refused = |b: oxiscope_memory::AgenticMemoryMiddlewareBuilder| {
        matches!(b.build(), Err(Error::InvalidParameters(_)))
    };
    assert!(refused(AgenticMemoryMiddleware::builder(
        "relative",
        Arc::clone(&model)
    )));
    for name in ["", "../up", "/abs", "a/../../b"] {
        assert!(
            refused(
                AgenticMemoryMiddleware::builder(dir.path(), Arc::clone(&model)).memory_dir(name)
            ),
            "{name}"
        );
    }
    assert!(refused(
        AgenticMemoryMiddleware::builder(dir.path(), Arc::clone(&model)).parameters(Parameters {
            top_k: 0,
            ..Parameters::default()
        })
    ));
    let ok = AgenticMemoryMiddleware::builder(dir.path(), model)
        .memory_dir("notes/memory")
        .build()
        .unwrap();
    assert_eq!(ok.memory_dir(), dir.path().join("notes/memory"));
    assert_eq!(ok.parameters().mode, MemoryMode::Both);
}
