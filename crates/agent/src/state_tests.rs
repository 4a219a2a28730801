#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;

use oxiscope_message::{
    Base64Source, ContentBlock, DataBlock, DataSource, ErrorInfo, ErrorType, HintBlock, MediaBlock,
    Msg, PermissionBehavior, PermissionRule, ReplyFinishedReason, RichContent, TextBlock,
    ThinkingBlock, ToolCallBlock, ToolCallState, ToolResultBlock, ToolResultState, UrlSource,
    Usage,
};
use oxiscope_test_support::fixtures;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;

/// Keys whose values are maps with free keys (tool names, paths, user data).
const FREE_MAPS: &[&str] = &[
    "metadata",
    "middle_context",
    "working_directories",
    "allow_rules",
    "deny_rules",
    "ask_rules",
    "structured_output",
    "structured_schema",
];

/// Every `(where, key)` of the objects in `value`: `where` is the path of
/// the object, with list items as `[]`, blocks and sources by their `type`,
/// and the entries of free maps as `*`.
fn shape(value: &Value, path: &str, out: &mut BTreeSet<(String, String)>) {
    match value {
        Value::Array(items) => {
            for item in items {
                shape(item, &format!("{path}[]"), out);
            }
        }
        Value::Object(map) => {
            let path = match map.get("type").and_then(Value::as_str) {
                Some(tag) => format!("{path}<{tag}>"),
                None => path.to_owned(),
            };
            let free = FREE_MAPS.iter().any(|f| path.ends_with(&format!(".{f}")));
            for (key, child) in map {
                if free {
                    shape(child, &format!("{path}.*"), out);
                } else {
                    out.insert((path.clone(), key.clone()));
                    shape(child, &format!("{path}.{key}"), out);
                }
            }
        }
        _ => {}
    }
}

/// The shapes AgentScope 2.0.11 writes: its state examples, its message
/// examples placed in a state's context, its block examples in a message.
fn reference_shapes() -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (_, state) in fixtures::examples("agent_state.examples.json") {
        shape(&state, "", &mut out);
    }
    let msgs: Vec<Value> = fixtures::examples("msg.examples.json")
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    shape(&json!({ "context": msgs }), "", &mut out);
    let blocks: Vec<Value> = fixtures::examples("content_block.examples.json")
        .into_iter()
        .map(|(_, b)| b)
        .collect();
    shape(&json!({ "context": [{ "content": blocks }] }), "", &mut out);
    out
}

/// A state with every kind of block, made by Oxiscope's own constructors.
fn everything() -> AgentState {
    let populated = fixtures::examples("agent_state.examples.json")
        .into_iter()
        .nth(1)
        .unwrap()
        .1;
    let mut state: AgentState = serde_json::from_value(populated).unwrap();
    let image = DataBlock::new(DataSource::Url(
        UrlSource::new("https://example.com/cat.png", "image/png").unwrap(),
    ))
    .with_name("cat.png");
    let inline = DataBlock::new(DataSource::Base64(Base64Source {
        data: "iVBORw0KGgo=".into(),
        media_type: "image/png".into(),
    }));
    state.context.push(
        Msg::user(
            "user",
            vec![
                TextBlock::new("look").into(),
                image.clone().into(),
                inline.into(),
            ],
        )
        .unwrap(),
    );
    state
        .context
        .push(Msg::system("system", "be brief").unwrap());
    let mut call = ToolCallBlock::new("c1", "Bash", r#"{"command": "ls"}"#);
    call.state = ToolCallState::Asking;
    call.suggested_rules.push(PermissionRule::new(
        "Bash",
        Some("ls:*".into()),
        PermissionBehavior::Allow,
        "session",
    ));
    let mut result = ToolResultBlock::new(
        "c1",
        "Bash",
        RichContent::Blocks(vec![
            MediaBlock::Text(TextBlock::new("a b")),
            MediaBlock::Data(image),
        ]),
        ToolResultState::Error,
    );
    result.metadata.insert("exit_code".into(), json!(1));
    let mut answer = Msg::assistant(
        "Friday",
        vec![
            ThinkingBlock::new("hm").into(),
            TextBlock::new("running").into(),
            HintBlock::new("note", Some("system".into())).into(),
            call.into(),
            result.into(),
            ToolResultBlock::new("c2", "Read", "text", ToolResultState::Success).into(),
        ],
    )
    .unwrap();
    answer.usage = Some(Usage {
        input_tokens: 10,
        output_tokens: 2,
        cache_input_tokens: 1,
        cache_creation_input_tokens: 0,
    });
    answer.finished_at = Some(answer.created_at.clone());
    answer.finished_reason = Some(ReplyFinishedReason::Error);
    answer.error = Some(Box::new(ErrorInfo::new(ErrorType::RateLimit, "slow down")));
    answer.structured_output = Some(Box::new(
        json!({"city": "Paris"}).as_object().unwrap().clone(),
    ));
    answer.metadata.insert("source".into(), json!("test"));
    state.reply_context.reply_id = answer.id.to_string();
    state.reply_context.structured_schema = Some(json!({"type": "object"}));
    state.context.push(answer);
    state.summary = RichContent::Blocks(vec![MediaBlock::Text(TextBlock::new("so far"))]);
    state
}

#[test]
fn a_saved_state_has_no_field_agentscope_does_not_save() {
    let reference = reference_shapes();
    let mut ours = BTreeSet::new();
    shape(&serde_json::to_value(everything()).unwrap(), "", &mut ours);
    let extra: Vec<_> = ours.difference(&reference).collect();
    assert!(
        extra.is_empty(),
        "fields AgentScope 2.0.11 does not save: {extra:#?}"
    );
    // The walk sees the blocks, not just the top level: one extra field in a
    // block is caught.
    let mut tampered = serde_json::to_value(everything()).unwrap();
    tampered["context"][0]["content"][0]["shade"] = json!("blue");
    let mut seen = BTreeSet::new();
    shape(&tampered, "", &mut seen);
    assert_eq!(seen.difference(&reference).count(), 1);
    assert!(ours.contains(&(
        ".context[].content[]<tool_call>".into(),
        "suggested_rules".into()
    )));
}

#[test]
fn agentscopes_state_is_saved_back_byte_for_byte() {
    for (label, value) in fixtures::examples("agent_state.examples.json") {
        let text = serde_json::to_vec(&value).unwrap();
        let state: AgentState = serde_json::from_slice(&text).unwrap();
        assert_eq!(serde_json::to_vec(&state).unwrap(), text, "{label}");
    }
}

#[test]
fn save_and_load_give_the_same_state_and_the_same_bytes() {
    let state = everything();
    let saved = serde_json::to_vec(&state).unwrap();
    let loaded: AgentState = serde_json::from_slice(&saved).unwrap();
    assert_eq!(loaded, state);
    assert_eq!(serde_json::to_vec(&loaded).unwrap(), saved);
}

#[test]
fn a_loaded_state_keeps_no_spare_room_in_its_lists() {
    let mut state = everything();
    for _ in 0..5 {
        let copy = state.context.clone();
        state.context.extend(copy);
    }
    let saved = serde_json::to_vec(&state).unwrap();
    let loaded: AgentState = serde_json::from_slice(&saved).unwrap();
    assert_eq!(loaded.context.capacity(), loaded.context.len());
    for msg in &loaded.context {
        assert_eq!(msg.content.capacity(), msg.content.len());
        for block in &msg.content {
            if let ContentBlock::ToolResult(r) = block
                && let RichContent::Blocks(b) = &r.output
            {
                assert_eq!(b.capacity(), b.len());
            }
        }
    }
}

#[test]
fn unknown_fields_are_ignored_and_missing_ones_default() {
    let saved = json!({
        "session_id": "s",
        "written_by": "a newer version",
        "context": [{
            "name": "user", "role": "user", "later": true,
            "content": [{"type": "text", "text": "hi", "shade": "blue"}]
        }]
    });
    let state: AgentState = serde_json::from_value(saved).unwrap();
    assert_eq!(state.session_id, "s");
    assert_eq!(state.context[0].text(""), "hi");
    assert_eq!(state.summary, RichContent::Text(String::new()));
    assert_eq!(state.reply_context.cur_iter, 0);
    assert_eq!(state.tool_context, oxiscope_tool::ToolContext::default());
}
