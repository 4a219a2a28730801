//! MCP servers in a Toolkit: basic group, tool groups, failing servers.

use std::time::Duration;

use oxiscope_mcp::{Error, McpClient, McpConfig, RestartPolicy, Timeouts, register_mcp};
use oxiscope_message::ToolResultState;
use oxiscope_tool::{BASIC_GROUP, ToolCallContext, ToolContext, ToolGroup, Toolkit, collect};
use pretty_assertions::assert_eq;

use super::support::{HttpServer, http_client, require_everything, stdio_client, timeouts};

fn ctx() -> ToolCallContext {
    ToolCallContext::local(std::env::temp_dir())
}

fn mute(name: &str) -> McpClient {
    McpClient::builder(name, McpConfig::stdio("sleep", ["60"]))
        .timeouts(Timeouts {
            startup: Duration::from_millis(700),
            ..timeouts()
        })
        .restart_policy(RestartPolicy::once())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_failing_server_is_skipped_and_the_others_are_registered() {
    let script = require_everything!();
    let good = McpClient::builder(
        "everything",
        oxiscope_mcp::McpConfig::stdio("node", [script.display().to_string(), "stdio".to_owned()]),
    )
    .enable_tools(["echo", "get-sum"])
    .timeouts(timeouts())
    .build()
    .unwrap();
    let mut toolkit = Toolkit::new();
    let report = register_mcp(&mut toolkit, &[mute("slow"), good.clone()], BASIC_GROUP).await;
    assert_eq!(report.failed.len(), 1);
    assert_eq!(report.failed[0].0, "slow");
    assert!(
        matches!(report.failed[0].1, Error::StartupTimeout { .. }),
        "{}",
        report.failed[0].1
    );
    let mut names = toolkit.all_tool_names();
    names.sort_unstable();
    assert_eq!(names, ["mcp__everything__echo", "mcp__everything__get-sum"]);
    assert_eq!(
        report.tools_of("everything").unwrap().len(),
        2,
        "{:?}",
        report.registered
    );
    // The toolkit validates and repairs arguments, then the server answers.
    let response = collect(
        toolkit
            .call("mcp__everything__get-sum", r#"{"a": "4", "b": 5}"#, ctx())
            .await,
    )
    .await;
    assert_eq!(
        response.state,
        ToolResultState::Success,
        "{}",
        response.text()
    );
    assert!(response.text().contains('9'), "{}", response.text());
    good.close().await;
}

#[tokio::test]
async fn mcp_tools_in_a_group_stay_hidden_until_activated() {
    let script = require_everything!();
    let server = HttpServer::start(&script).await;
    let client = http_client(&server.url(), false);
    let mut toolkit = Toolkit::new();
    toolkit
        .add_group(ToolGroup::new("remote", "Tools of the everything server"))
        .unwrap();
    let report = register_mcp(&mut toolkit, &[client], "remote").await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let names = |context: &ToolContext| {
        toolkit
            .schemas(context)
            .into_iter()
            .map(|s| s.function.name)
            .collect::<Vec<_>>()
    };
    let hidden = names(&ToolContext::default());
    assert_eq!(hidden, ["reset_tools"]);
    let active = ToolContext {
        activated_groups: vec!["remote".to_owned()],
        ..ToolContext::default()
    };
    let shown = names(&active);
    assert!(
        shown.contains(&"mcp__everything__echo".to_owned()),
        "{shown:?}"
    );
}

#[tokio::test]
async fn a_clashing_server_adds_none_of_its_tools() {
    let script = require_everything!();
    let first = stdio_client(&script);
    let second = stdio_client(&script);
    let mut toolkit = Toolkit::new();
    let report = register_mcp(&mut toolkit, &[first.clone(), second.clone()], BASIC_GROUP).await;
    assert_eq!(report.registered.len(), 1);
    assert_eq!(report.failed.len(), 1);
    assert!(
        matches!(report.failed[0].1, Error::Toolkit { .. }),
        "{}",
        report.failed[0].1
    );
    let count = toolkit.all_tool_names().len();
    assert_eq!(count, report.registered[0].1.len());
    first.close().await;
    second.close().await;
}
