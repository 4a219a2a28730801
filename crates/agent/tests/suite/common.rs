//! Shared helpers: an agent over a scripted model and a toolkit of test
//! tools, and event collection.

use std::sync::Arc;

use futures_util::StreamExt;
use oxiscope_agent::{Agent, AgentState, ReplyInput, ReplyStream};
use oxiscope_message::{AgentEvent, Msg, PermissionBehavior, PermissionRule};
use oxiscope_model::DynChatModel;
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use oxiscope_tool::{FunctionTool, ToolFlags, Toolkit};
use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `get_weather`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct City {
    /// The city.
    pub(crate) city: String,
}

/// Arguments of `delete_file` and `open_url`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Target {
    /// What to act on.
    pub(crate) path: String,
}

pub(crate) fn toolkit() -> Arc<Toolkit> {
    let mut toolkit = Toolkit::new();
    toolkit
        .register(
            FunctionTool::new("get_weather", |c: City| async move {
                format!("{}: 21 degrees celsius, sunny", c.city)
            })
            .with_description("Get the weather of a city."),
        )
        .unwrap();
    toolkit
        .register(
            FunctionTool::new("delete_file", |t: Target| async move {
                format!("Deleted {}", t.path)
            })
            .with_description("Delete a file."),
        )
        .unwrap();
    toolkit
        .register(
            FunctionTool::new("open_url", |t: Target| async move {
                format!("opened {}", t.path)
            })
            .with_description("Open a URL on the user's machine.")
            .with_flags(ToolFlags {
                external: true,
                ..ToolFlags::default()
            }),
        )
        .unwrap();
    Arc::new(toolkit)
}

/// A state where `get_weather` is allowed by a rule (function tools ask by
/// default).
pub(crate) fn state_allowing_weather() -> AgentState {
    let mut state = AgentState::default();
    state.permission_context.add_rule(PermissionRule::new(
        "get_weather",
        None,
        PermissionBehavior::Allow,
        "session",
    ));
    state
}

pub(crate) fn agent(model: &Arc<ScriptedModel>, state: AgentState) -> Agent {
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    Agent::builder("Friday", dynamic)
        .system_prompt("You are Friday, a helpful assistant.")
        .toolkit(toolkit())
        .workdir(std::env::temp_dir())
        .state(state)
        .build()
        .unwrap()
}

pub(crate) fn scripted(turns: Vec<ScriptedTurn>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(turns).with_chunk_chars(4))
}

pub(crate) fn user(text: &str) -> ReplyInput {
    Msg::user("user", text).unwrap().into()
}

pub(crate) async fn collect(stream: ReplyStream) -> Vec<AgentEvent> {
    stream.collect().await
}

pub(crate) fn types(events: &[AgentEvent]) -> Vec<&'static str> {
    events.iter().map(|e| e.event_type().as_str()).collect()
}

/// Rebuilds the reply from its events as a consumer would.
pub(crate) fn rebuild(events: &[AgentEvent], previous: Option<Msg>) -> Msg {
    let mut msg = previous;
    for event in events {
        match (event, &mut msg) {
            (AgentEvent::ReplyStart(s), None) => msg = Some(oxiscope_agent::new_reply_msg(s)),
            (_, Some(m)) => {
                oxiscope_agent::apply_event(m, event).unwrap();
            }
            (_, None) => panic!("event before REPLY_START: {event:?}"),
        }
    }
    msg.expect("a reply")
}

/// The reply message as the agent's state holds it.
pub(crate) async fn state_reply(agent: &Agent) -> Msg {
    agent
        .state()
        .await
        .reply_msg()
        .cloned()
        .expect("reply in state")
}

/// Compares two messages up to what a rebuild takes from its own clock and
/// id generator (as AgentScope's `append_event` does): creation times, a
/// hint's finish time, and the ids of text blocks opened inside tool results.
pub(crate) fn same_blocks(a: &Msg, b: &Msg) {
    let strip = |m: &Msg| {
        let mut v = serde_json::to_value(m).unwrap();
        strip_clock(&mut v, false);
        v
    };
    pretty_assertions::assert_eq!(strip(a), strip(b));
}

fn strip_clock(v: &mut serde_json::Value, in_result: bool) {
    match v {
        serde_json::Value::Object(map) => {
            map.remove("created_at");
            let kind = map.get("type").and_then(|t| t.as_str()).map(str::to_owned);
            match kind.as_deref() {
                Some("hint") => {
                    map.remove("finished_at");
                }
                Some("tool_result") => {
                    // Tool metadata is kept in the state only.
                    map.remove("metadata");
                }
                Some("text") if in_result => {
                    map.remove("id");
                }
                _ => {}
            }
            let nested = in_result || kind.as_deref() == Some("tool_result");
            map.values_mut().for_each(|x| strip_clock(x, nested));
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|x| strip_clock(x, in_result)),
        _ => {}
    }
}
