//! Serde shapes against AgentScope's recorded JSON.

use oxiscope_message::{MediaBlock, ToolResultState};
use oxiscope_tool::{ReadCacheEntry, TasksContext, ToolChunk, ToolContext, ToolResponse};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::support::fixture;

#[test]
fn tool_chunk_examples_round_trip() {
    let examples = fixture("wire/tool_chunk.examples.json");
    for example in examples.as_array().unwrap() {
        let value = &example["value"];
        let chunk: ToolChunk = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(
            &serde_json::to_value(&chunk).unwrap(),
            value,
            "{}",
            example["label"]
        );
    }
}

#[test]
fn tool_response_example_round_trips() {
    let examples = fixture("wire/tool_response.examples.json");
    let value = &examples[0]["value"];
    let response: ToolResponse = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(&serde_json::to_value(&response).unwrap(), value);
}

#[test]
fn accumulating_the_example_chunks_gives_the_example_response() {
    let chunks = fixture("wire/tool_chunk.examples.json");
    let expected: ToolResponse =
        serde_json::from_value(fixture("wire/tool_response.examples.json")[0]["value"].clone())
            .unwrap();
    let mut response = ToolResponse::new();
    for i in [0, 1] {
        response.append_chunk(serde_json::from_value(chunks[i]["value"].clone()).unwrap());
    }
    response.id.clone_from(&expected.id);
    assert_eq!(response, expected);
}

#[test]
fn an_error_chunk_keeps_the_response_in_error() {
    let mut response = ToolResponse::new();
    response.append_chunk(ToolChunk::partial("step 1 ").with_state(ToolResultState::Error));
    response.append_chunk(ToolChunk::text("step 2"));
    assert_eq!(response.state, ToolResultState::Error);
    assert_eq!(response.text(), "step 1 step 2");
    let block = response.into_result_block("call-1", "t");
    assert_eq!(block.state, ToolResultState::Error);
    assert_eq!(block.id, "call-1");
}

#[test]
fn a_response_that_never_finished_is_reported_as_success() {
    let mut response = ToolResponse::new();
    response.append_chunk(ToolChunk::partial("half"));
    assert_eq!(response.state, ToolResultState::Running);
    let block = response.into_result_block("c", "t");
    assert_eq!(block.state, ToolResultState::Success);
    match block.output {
        oxiscope_message::RichContent::Blocks(blocks) => {
            assert!(matches!(&blocks[0], MediaBlock::Text(t) if t.text == "half"));
        }
        other @ oxiscope_message::RichContent::Text(_) => panic!("unexpected output {other:?}"),
    }
}

#[test]
fn tool_and_tasks_context_match_every_agent_state_example() {
    let examples = fixture("wire/agent_state.examples.json");
    for example in examples.as_array().unwrap() {
        let state = &example["value"];
        let tool: ToolContext = serde_json::from_value(state["tool_context"].clone()).unwrap();
        assert_eq!(serde_json::to_value(&tool).unwrap(), state["tool_context"]);
        let tasks: TasksContext = serde_json::from_value(state["tasks_context"].clone()).unwrap();
        assert_eq!(
            serde_json::to_value(&tasks).unwrap(),
            state["tasks_context"]
        );
    }
}

#[test]
fn a_fresh_tool_context_serialises_like_agentscope_defaults() {
    let examples = fixture("wire/agent_state.examples.json");
    let fresh = &examples[0]["value"]["tool_context"];
    assert_eq!(
        &serde_json::to_value(ToolContext::default()).unwrap(),
        fresh
    );
    let empty: ToolContext = serde_json::from_value(Value::Object(Default::default())).unwrap();
    assert_eq!(empty, ToolContext::default());
}

#[test]
fn the_read_cache_entry_size_is_in_kibibytes() {
    let entry = ReadCacheEntry::new(
        "/p/README.md",
        vec!["line 1\n".into(), "line 2\n".into()],
        1.5,
    );
    // The reference example stores these 14 bytes as 0.013671875.
    assert!((entry.bytes - 0.013_671_875).abs() < 1e-12);
}

#[test]
fn the_read_cache_evicts_the_oldest_files_beyond_its_limits() {
    let mut ctx = ToolContext {
        max_cache_files: 2,
        ..ToolContext::default()
    };
    for name in ["a", "b", "c"] {
        ctx.record_read(ReadCacheEntry::new(name, vec!["x\n".into()], 0.0));
    }
    let names: Vec<&str> = ctx
        .read_file_cache
        .iter()
        .map(|e| e.file_path.as_str())
        .collect();
    assert_eq!(names, ["b", "c"]);
    // Reading "b" again makes it the newest.
    ctx.record_read(ReadCacheEntry::new("b", vec!["y\n".into()], 1.0));
    let names: Vec<&str> = ctx
        .read_file_cache
        .iter()
        .map(|e| e.file_path.as_str())
        .collect();
    assert_eq!(names, ["c", "b"]);

    let mut small = ToolContext {
        max_cache_bytes: 1.0,
        ..ToolContext::default()
    };
    small.record_read(ReadCacheEntry::new("big1", vec!["x".repeat(800)], 0.0));
    small.record_read(ReadCacheEntry::new("big2", vec!["x".repeat(800)], 0.0));
    assert_eq!(small.read_file_cache.len(), 1);
    assert_eq!(small.read_file_cache[0].file_path, "big2");
}
