//! The local workspace: layout, persisted MCP declarations, skills, reset.

use oxiscope_workspace::{
    Error, LocalWorkspace, McpDeclaration, McpServerConfig, Workspace, assemble_toolkit,
};
use pretty_assertions::assert_eq;

fn stdio(name: &str) -> McpDeclaration {
    serde_json::from_value(serde_json::json!({
        "name": name,
        "is_stateful": true,
        "mcp_config": {"type": "stdio_mcp", "command": "node", "args": ["server.js"]}
    }))
    .unwrap()
}

fn skill_dir(parent: &std::path::Path, dir: &str, name: &str) -> std::path::PathBuf {
    let path = parent.join(dir);
    std::fs::create_dir_all(path.join("scripts")).unwrap();
    std::fs::write(
        path.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Does {name} things.\n---\n# {name}\nSteps.\n"),
    )
    .unwrap();
    std::fs::write(path.join("scripts/run.sh"), "echo run\n").unwrap();
    path
}

#[tokio::test]
async fn declarations_and_skills_persist_across_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ws");
    let seed = skill_dir(tmp.path(), "seeded", "seeded-skill");
    let extra = skill_dir(tmp.path(), "extra", "extra-skill");
    {
        let ws = LocalWorkspace::builder("w", &dir)
            .skill_seed(vec![seed.clone()])
            .build()
            .unwrap();
        ws.initialize().await.unwrap();
        ws.add_mcp(stdio("fs"), "agent1", "s1").await.unwrap();
        let again = ws.add_mcp(stdio("fs"), "agent1", "s1").await.unwrap_err();
        assert!(matches!(again, Error::DuplicateMcp { .. }), "{again}");
        assert_eq!(
            ws.add_skill(extra.clone(), "agent1").await.unwrap(),
            "extra-skill"
        );
        let dup = ws.add_skill(extra.clone(), "agent1").await.unwrap_err();
        assert!(matches!(dup, Error::DuplicateSkill { .. }), "{dup}");
    }
    // A new process: a fresh workspace over the same directory.
    let ws = LocalWorkspace::new("w", &dir).unwrap();
    ws.initialize().await.unwrap();
    let decls = ws.mcp_declarations("agent1", "s1").await.unwrap();
    assert_eq!(decls, [stdio("fs")]);
    // Other sessions and agents do not see it.
    assert!(
        ws.mcp_declarations("agent1", "s2")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        ws.mcp_declarations("agent2", "s1")
            .await
            .unwrap()
            .is_empty()
    );
    let names: Vec<String> = ws
        .list_skills("agent1")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["extra-skill", "seeded-skill"]);
    let other: Vec<String> = ws
        .list_skills("agent2")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(other, ["seeded-skill"]);
    assert!(dir.join("skills/agent1/extra/scripts/run.sh").is_file());
    assert!(dir.join(".mcp/agent1/s1.json").is_file());

    assert!(ws.remove_mcp("fs", "agent1", "s1").await.unwrap());
    assert!(!ws.remove_mcp("fs", "agent1", "s1").await.unwrap());
    ws.remove_skill("extra-skill", "agent1").await.unwrap();
    assert!(matches!(
        ws.remove_skill("extra-skill", "agent1").await,
        Err(Error::UnknownSkill { .. })
    ));
}

#[tokio::test]
async fn the_toolkit_has_the_builtins_and_the_skills_and_offloads_land_in_sessions() {
    use oxiscope_tool::Offloader;

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ws");
    let ws = LocalWorkspace::new("w", &dir).unwrap();
    ws.initialize().await.unwrap();
    ws.add_skill(skill_dir(tmp.path(), "s", "review"), "a")
        .await
        .unwrap();
    let (toolkit, registration) = assemble_toolkit(&ws, "a", "s").await.unwrap();
    for tool in ["Bash", "Read", "Write", "Edit", "Glob", "Grep", "Skill"] {
        assert!(toolkit.tool(tool).is_some(), "{tool}");
    }
    assert!(registration.registered.is_empty());
    let msgs = [oxiscope_message::Msg::from_text(
        "u",
        oxiscope_message::Role::User,
        "old",
    )];
    let path = ws.offload_context("sess", &msgs).await.unwrap();
    assert_eq!(
        std::path::PathBuf::from(path),
        std::path::absolute(&dir)
            .unwrap()
            .join("sessions/sess/context.jsonl")
    );
}

#[tokio::test]
async fn reset_empties_declarations_partitions_and_sessions_but_keeps_the_seed() {
    use oxiscope_tool::Offloader;

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ws");
    let seed = skill_dir(tmp.path(), "seeded", "seeded-skill");
    let ws = LocalWorkspace::builder("w", &dir)
        .skill_seed(vec![seed])
        .build()
        .unwrap();
    ws.initialize().await.unwrap();
    ws.add_mcp(stdio("fs"), "a", "s").await.unwrap();
    ws.add_skill(skill_dir(tmp.path(), "x", "x-skill"), "a")
        .await
        .unwrap();
    let msgs = [oxiscope_message::Msg::from_text(
        "u",
        oxiscope_message::Role::User,
        "m",
    )];
    ws.offload_context("s", &msgs).await.unwrap();
    ws.reset().await.unwrap();
    assert!(ws.mcp_declarations("a", "s").await.unwrap().is_empty());
    assert!(!dir.join("sessions/s").exists());
    let names: Vec<String> = ws
        .list_skills("a")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["seeded-skill"]);
}

#[tokio::test]
async fn ids_that_could_escape_are_refused_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = LocalWorkspace::new("w", tmp.path().join("ws")).unwrap();
    ws.initialize().await.unwrap();
    for (agent, session) in [
        ("../x", "s"),
        ("a", "../../etc/passwd"),
        ("a/b", "s"),
        ("", "s"),
    ] {
        assert!(
            matches!(
                ws.add_mcp(stdio("fs"), agent, session).await,
                Err(Error::InvalidId { .. })
            ),
            "{agent} {session}"
        );
        assert!(ws.list_mcps(agent, session).await.is_err());
    }
    assert!(ws.list_skills("../other").await.is_err());
    let bad = McpDeclaration {
        name: "../evil".into(),
        ..stdio("x")
    };
    assert!(matches!(
        ws.add_mcp(bad, "a", "s").await,
        Err(Error::InvalidMcp { .. })
    ));
    let http = McpDeclaration {
        mcp_config: McpServerConfig::Http {
            url: "ftp://x".into(),
            headers: None,
            timeout: None,
        },
        ..stdio("h")
    };
    assert!(ws.add_mcp(http, "a", "s").await.is_err());
}
