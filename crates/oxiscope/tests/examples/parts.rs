//! The examples about the optional parts: an MCP server, RAG over a
//! folder, long-term memory and a remote A2A agent.

use std::path::PathBuf;

use oxiscope_test_support::ScriptedResponse;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::harness::{ExampleRun, calls, system_prompt, text, tool_results};

/// server-everything as the MCP tests install it (`npm ci --prefix
/// crates/mcp/tests/servers`, done by scripts/test), if node can run it.
fn everything() -> Option<PathBuf> {
    let script = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../mcp/tests/servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    ));
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if script.is_file() && node {
        return Some(script);
    }
    oxiscope_test_support::skip(&format!(
        "the MCP test server is not installed (node on PATH: {node}; {} exists: {}); \
         run `npm ci --prefix crates/mcp/tests/servers`",
        script.display(),
        script.is_file()
    ));
    None
}

#[test]
fn mcp_server_tools_are_called_by_the_agent() {
    let Some(script) = everything() else { return };
    let run = ExampleRun::new();
    run.answer(calls(&[(
        "c1",
        "mcp__everything__get-sum",
        r#"{"a": 20, "b": 22}"#,
    )]))
    .answer(text("20 + 22 = 42."));
    // get-sum is read-only by server-everything's annotations: the engine
    // runs it without asking (the example answers no confirmation).
    let out = run.run("mcp_server", &["node", script.to_str().unwrap()]);
    assert!(out.contains("calling mcp__everything__get-sum\n"), "{out}");
    assert!(out.contains("42"), "{out}");
    let offered = run.chat_requests()[0]["tools"].as_array().unwrap().len();
    assert!(
        out.starts_with(&format!("{offered} tools, among them mcp__everything__")),
        "{out}"
    );
    let results = tool_results(&run.chat_requests()[1]);
    assert!(results[0].1.contains("42"), "{results:?}");
}

#[test]
fn rag_folder_indexes_files_and_the_agent_searches_them() {
    let run = ExampleRun::new();
    let docs = run.dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(
        docs.join("cats.md"),
        "# Cats\nCats sleep sixteen hours a day.\n",
    )
    .unwrap();
    std::fs::write(docs.join("dogs.md"), "# Dogs\nDogs love long walks.\n").unwrap();
    run.answer(calls(&[(
        "c1",
        "search_knowledge",
        r#"{"query": "how long do cats sleep"}"#,
    )]))
    .answer(text("Sixteen hours a day (cats.md)."));
    let out = run.run(
        "rag_folder",
        &[docs.to_str().unwrap(), "How long do cats sleep?"],
    );
    assert_eq!(
        out,
        "indexed cats.md\nindexed dogs.md\nSixteen hours a day (cats.md).\n"
    );
    let results = tool_results(&run.chat_requests()[1]);
    let (id, hits) = &results[0];
    assert_eq!(id, "c1");
    assert!(hits.starts_with("[1] (source: cats.md)"), "{hits}");
    assert!(hits.contains("Cats sleep sixteen hours"), "{hits}");
}

#[test]
fn memory_written_in_one_conversation_reaches_the_next() {
    let run = ExampleRun::new();
    let home = run.dir.path().canonicalize().unwrap().join("home");
    let memory = home.join("Memory");
    let profile = json!({
        "file_path": memory.join("user_profile.md"),
        "content": "---\nname: User profile\ndescription: Where the user lives\ntype: user\n---\nLives in Hangzhou.\n"
    });
    let index = memory.join("MEMORY.md");
    run.answer(calls(&[
        ("c1", "Write", &profile.to_string()),
        ("c2", "Read", &json!({"file_path": index}).to_string()),
    ]))
    .answer(calls(&[(
        "c3",
        "Write",
        &json!({"file_path": index, "content": "- [User profile](user_profile.md) — where the user lives\n"})
            .to_string(),
    )]))
    .answer(text("Noted: you live in Hangzhou."))
    .answer(text("You live in Hangzhou."));
    let out = run.run("memory", &[home.to_str().unwrap()]);
    assert!(
        out.contains("[first conversation] Noted: you live in Hangzhou.\n"),
        "{out}"
    );
    assert!(
        out.contains("[second conversation] You live in Hangzhou.\n"),
        "{out}"
    );
    let mut files: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("memory file: "))
        .collect();
    files.sort_unstable();
    assert_eq!(files, ["MEMORY.md", "user_profile.md"]);
    // The second conversation starts with nothing but the memory index.
    let requests = run.chat_requests();
    let last = requests.last().unwrap();
    let earlier = last["messages"].as_array().unwrap().iter().skip(1);
    assert!(earlier.clone().all(|m| m["role"] == "user"), "{last}");
    assert!(
        !earlier
            .map(Value::to_string)
            .any(|m| m.contains("Hangzhou")),
        "{last}"
    );
    assert!(
        system_prompt(last).contains("[User profile](user_profile.md)"),
        "{last}"
    );
    assert!(!system_prompt(&requests[0]).contains("[User profile]"));
}

#[test]
fn a2a_remote_agent_streams_and_keeps_its_conversation() {
    let run = ExampleRun::new();
    let card = json!({
        "name": "planner",
        "description": "Plans trips.",
        "supportedInterfaces": [
            {"url": run.server.url("/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true},
        "version": "1"
    });
    run.serve(
        "/.well-known/agent-card.json",
        ScriptedResponse::json(200, &card),
    );
    let frame = |result: Value| {
        let envelope = json!({"jsonrpc": "2.0", "id": 1, "result": result});
        ScriptedResponse::sse_frame(None, &envelope.to_string())
    };
    let chunk = |text: &str, append: bool, last: bool| {
        json!({"artifactUpdate": {"taskId": "t1", "contextId": "ctx-1",
            "artifact": {"artifactId": "a1", "parts": [{"text": text}]},
            "append": append, "lastChunk": last}})
    };
    let status = |state: &str| json!({"statusUpdate": {"taskId": "t1", "contextId": "ctx-1", "status": {"state": state}}});
    let task = json!({"task": {"id": "t1", "contextId": "ctx-1",
        "status": {"state": "TASK_STATE_SUBMITTED"}}});
    run.serve(
        "/rpc",
        ScriptedResponse::sse(vec![
            frame(task.clone()),
            frame(chunk("Saturday: Alfama. ", false, false)),
            frame(chunk("Sunday: Belém.", true, true)),
            frame(status("TASK_STATE_COMPLETED")),
        ]),
    );
    run.serve(
        "/rpc",
        ScriptedResponse::sse(vec![
            frame(task),
            frame(chunk("Walk instead of taxis.", false, true)),
            frame(status("TASK_STATE_COMPLETED")),
        ]),
    );
    let out = run.run("a2a_remote", &[&run.server.base_url()]);
    assert_eq!(
        out,
        "connected to planner: Plans trips.\n\
         Saturday: Alfama. Sunday: Belém.\n[Completed]\n\
         Walk instead of taxis.\n\
         remote conversation: Some(\"ctx-1\")\n"
    );
    // The second message went in the first one's context.
    let bodies: Vec<Value> = run
        .server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/rpc")
        .map(|r| r.body_json().unwrap())
        .collect();
    assert_eq!(bodies.len(), 2);
    assert_eq!(
        bodies[1]["params"]["message"]["contextId"], "ctx-1",
        "{}",
        bodies[1]
    );
}
