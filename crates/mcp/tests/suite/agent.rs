//! An agent reply that calls MCP tools through the permission engine.

use std::sync::Arc;

use futures_util::StreamExt;
use oxiscope_agent::{Agent, AgentState};
use oxiscope_mcp::{McpClient, register_mcp};
use oxiscope_message::{AgentEvent, Msg, ToolResultState};
use oxiscope_model::DynChatModel;
use oxiscope_permission::{PermissionContext, PermissionMode};
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use oxiscope_tool::{BASIC_GROUP, Toolkit};
use pretty_assertions::assert_eq;

use super::support::{require_everything, stdio_client};

async fn agent_with(client: &McpClient, model: &Arc<ScriptedModel>, mode: PermissionMode) -> Agent {
    let mut toolkit = Toolkit::new();
    let report = register_mcp(&mut toolkit, std::slice::from_ref(client), BASIC_GROUP).await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let state = AgentState {
        permission_context: PermissionContext::new(mode),
        ..AgentState::default()
    };
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    Agent::builder("Friday", dynamic)
        .system_prompt("You are Friday.")
        .toolkit(Arc::new(toolkit))
        .workdir(std::env::temp_dir())
        .state(state)
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_agent_runs_read_only_mcp_tools_and_the_engine_stops_the_others() {
    let script = require_everything!();
    let client = stdio_client(&script);
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::text("Adding.")
            .and_tool_call("c1", "mcp__everything__get-sum", r#"{"a": 20, "b": 22}"#)
            .and_tool_call("c2", "mcp__everything__toggle-simulated-logging", "{}"),
        ScriptedTurn::text("The sum is 42."),
    ]));
    // Explore mode: read-only tools run, everything else is denied.
    let agent = agent_with(&client, &model, PermissionMode::Explore).await;
    let input = Msg::user("user", "What is 20 + 22?").unwrap();
    let events: Vec<AgentEvent> = agent.reply_stream(input).collect().await;
    assert!(
        events
            .iter()
            .all(|e| !matches!(e, AgentEvent::RequireUserConfirm(_))),
        "{events:?}"
    );
    // The model's second request carries both results.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let offered: Vec<&str> = requests[0]
        .tools
        .iter()
        .map(|t| t.function.name.as_str())
        .collect();
    assert!(offered.contains(&"mcp__everything__get-sum"), "{offered:?}");
    let results: Vec<_> = requests[1]
        .messages
        .iter()
        .flat_map(Msg::tool_results)
        .map(|r| (r.id.as_str(), r.state, r.output.text("")))
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].0, "c1");
    assert_eq!(results[0].1, ToolResultState::Success);
    assert!(results[0].2.contains("42"), "{}", results[0].2);
    assert_eq!(results[1].0, "c2");
    assert_eq!(results[1].1, ToolResultState::Denied, "{}", results[1].2);
    client.close().await;
}

#[tokio::test]
async fn a_non_read_only_mcp_tool_asks_the_user_in_default_mode() {
    let script = require_everything!();
    let client = stdio_client(&script);
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::tool_call(
        "c1",
        "mcp__everything__toggle-simulated-logging",
        "{}",
    )]));
    let agent = agent_with(&client, &model, PermissionMode::Default).await;
    let input = Msg::user("user", "Start the logging").unwrap();
    let events: Vec<AgentEvent> = agent.reply_stream(input).collect().await;
    let asked = events.iter().find_map(|e| match e {
        AgentEvent::RequireUserConfirm(e) => Some(e.tool_calls.clone()),
        _ => None,
    });
    let asked = asked.unwrap_or_else(|| panic!("no confirmation asked: {events:?}"));
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].name, "mcp__everything__toggle-simulated-logging");
    assert!(agent.state().await.is_parked());
    client.close().await;
}
