//! The toolkit follows `notifications/tools/list_changed`: added and
//! removed tools, a failing re-listing that withdraws one server's tools,
//! filters on re-listings, and server-everything's late tools.

use std::sync::Arc;
use std::time::Duration;

use oxiscope_mcp::{McpClient, McpToolSource, register_mcp};
use oxiscope_message::ToolResultState;
use oxiscope_tool::{
    BASIC_GROUP, ToolCallContext, ToolContext, ToolResponse, ToolSource, Toolkit, collect,
};
use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use super::support::{
    dynamic_client, eventually, require_dynamic_tools, require_everything, stdio_client,
};

fn ctx() -> ToolCallContext {
    ToolCallContext::local(std::env::temp_dir())
}

fn names(toolkit: &Toolkit) -> Vec<String> {
    toolkit
        .schemas(&ToolContext::default())
        .into_iter()
        .map(|s| s.function.name)
        .collect()
}

fn fixed(server: &str) -> Vec<String> {
    ["echo", "add-tool", "remove-tool", "break-listing"]
        .iter()
        .map(|t| format!("mcp__{server}__{t}"))
        .collect()
}

async fn call(toolkit: &Toolkit, name: &str, input: Value) -> ToolResponse {
    collect(toolkit.call(name, &input.to_string(), ctx()).await).await
}

#[track_caller]
fn ok(response: &ToolResponse) -> String {
    assert_eq!(
        response.state,
        ToolResultState::Success,
        "{}",
        response.text()
    );
    response.text()
}

/// Waits until the toolkit's schemas are exactly `want`.
async fn until_schemas(toolkit: &Arc<Toolkit>, want: &[String]) {
    let what = format!("the schemas are {want:?}");
    eventually(&what, || {
        let toolkit = toolkit.clone();
        async move { names(&toolkit) == want }
    })
    .await;
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[tokio::test]
async fn added_and_removed_tools_reach_a_shared_toolkit() {
    let script = require_dynamic_tools!();
    let client = dynamic_client(&script, "dyn");
    let mut toolkit = Toolkit::new();
    let report = register_mcp(&mut toolkit, std::slice::from_ref(&client), BASIC_GROUP).await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.tools_of("dyn").unwrap(), fixed("dyn"));
    let toolkit = Arc::new(toolkit);
    assert_eq!(names(&toolkit), fixed("dyn"));

    let added = call(&toolkit, "mcp__dyn__add-tool", json!({"name": "greet"})).await;
    assert_eq!(ok(&added), "added greet");
    let mut with_greet = fixed("dyn");
    with_greet.push("mcp__dyn__greet".to_owned());
    until_schemas(&toolkit, &with_greet).await;
    assert!(client.tools_changed() >= 1);

    // The new tool is called through the toolkit, arguments validated.
    let greeting = call(&toolkit, "mcp__dyn__greet", json!({"text": "hi"})).await;
    assert_eq!(ok(&greeting), "greet says: hi");
    let missing = call(&toolkit, "mcp__dyn__greet", json!({})).await;
    assert_eq!(missing.state, ToolResultState::Error);
    assert!(
        missing.text().contains("Invalid arguments"),
        "{}",
        missing.text()
    );
    assert!(toolkit.tool("mcp__dyn__greet").unwrap().flags().mcp);

    let removed = call(&toolkit, "mcp__dyn__remove-tool", json!({"name": "greet"})).await;
    assert_eq!(ok(&removed), "removed greet");
    until_schemas(&toolkit, &fixed("dyn")).await;
    let gone = call(&toolkit, "mcp__dyn__greet", json!({"text": "hi"})).await;
    assert_eq!(gone.state, ToolResultState::Error);
    assert!(gone.text().contains("ToolNotFoundError"), "{}", gone.text());
    client.close().await;
}

#[tokio::test]
async fn a_failed_relisting_withdraws_only_that_servers_tools() {
    let script = require_dynamic_tools!();
    let alpha = dynamic_client(&script, "alpha");
    let beta = dynamic_client(&script, "beta");
    let mut toolkit = Toolkit::new();
    let report = register_mcp(&mut toolkit, &[alpha.clone(), beta.clone()], BASIC_GROUP).await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let toolkit = Arc::new(toolkit);
    let both: Vec<String> = fixed("alpha").into_iter().chain(fixed("beta")).collect();
    assert_eq!(names(&toolkit), both);

    let broke = call(
        &toolkit,
        "mcp__alpha__break-listing",
        json!({"broken": true}),
    )
    .await;
    assert_eq!(ok(&broke), "listing broken");
    until_schemas(&toolkit, &fixed("beta")).await;
    assert!(report.source("alpha").unwrap().tool_names().is_empty());
    let echo = call(&toolkit, "mcp__beta__echo", json!({"text": "still here"})).await;
    assert_eq!(ok(&echo), "echo: still here");
    let withdrawn = call(&toolkit, "mcp__alpha__echo", json!({"text": "x"})).await;
    assert_eq!(withdrawn.state, ToolResultState::Error);

    // The server still runs; once its listing works again and it says so,
    // its tools come back.
    let healed = alpha
        .call_tool(
            "break-listing",
            args(json!({"broken": false})),
            &Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(healed.text_content(), "listing works");
    until_schemas(&toolkit, &both).await;
    let echo = call(&toolkit, "mcp__alpha__echo", json!({"text": "back"})).await;
    assert_eq!(ok(&echo), "echo: back");
    alpha.close().await;
    beta.close().await;
}

#[tokio::test]
async fn a_closed_server_fails_its_refresh_at_once_and_recovers() {
    let script = require_dynamic_tools!();
    let client = dynamic_client(&script, "dyn");
    let source = McpToolSource::new(client.clone()).await.unwrap();
    let mut toolkit = Toolkit::new();
    toolkit
        .register_source(Arc::new(source.clone()), BASIC_GROUP)
        .unwrap();
    assert_eq!(names(&toolkit), fixed("dyn"));
    client.close().await;
    let failed = tokio::time::timeout(Duration::from_secs(10), source.refresh())
        .await
        .expect("a refresh of a closed server must not hang");
    assert!(
        matches!(failed, Err(oxiscope_mcp::Error::Closed { .. })),
        "{failed:?}"
    );
    assert!(names(&toolkit).is_empty());
    assert!(source.snapshot().is_empty());
    client.connect().await.unwrap();
    assert_eq!(source.refresh().await.unwrap(), fixed("dyn"));
    assert_eq!(names(&toolkit), fixed("dyn"));
    client.close().await;
}

#[tokio::test]
async fn relistings_keep_the_clients_filters() {
    let script = require_dynamic_tools!();
    let client = McpClient::builder(
        "dyn",
        oxiscope_mcp::McpConfig::stdio("node", [script.display().to_string()]),
    )
    .enable_tools(["echo", "add-tool", "shown", "hidden"])
    .disable_tools(["hidden"])
    .timeouts(super::support::timeouts())
    .build()
    .unwrap();
    let mut toolkit = Toolkit::new();
    let report = register_mcp(&mut toolkit, std::slice::from_ref(&client), BASIC_GROUP).await;
    assert_eq!(
        report.tools_of("dyn").unwrap(),
        ["mcp__dyn__echo", "mcp__dyn__add-tool"]
    );
    let toolkit = Arc::new(toolkit);
    for tool in ["hidden", "other", "shown"] {
        let added = call(&toolkit, "mcp__dyn__add-tool", json!({"name": tool})).await;
        ok(&added);
    }
    // `shown` was added last: once it is listed, so are the others.
    until_schemas(
        &toolkit,
        &[
            "mcp__dyn__echo".to_owned(),
            "mcp__dyn__add-tool".to_owned(),
            "mcp__dyn__shown".to_owned(),
        ],
    )
    .await;
    client.close().await;
}

#[tokio::test]
async fn server_everythings_late_tools_show_up_in_the_toolkit() {
    let script = require_everything!();
    let client = stdio_client(&script);
    let mut toolkit = Toolkit::new();
    let report = register_mcp(&mut toolkit, std::slice::from_ref(&client), BASIC_GROUP).await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let toolkit = Arc::new(toolkit);
    // server-everything registers more tools right after `initialized` and
    // announces them with notifications/tools/list_changed.
    eventually("the late tools are in the toolkit", || {
        let toolkit = toolkit.clone();
        async move {
            names(&toolkit).contains(&"mcp__everything__simulate-research-query".to_owned())
        }
    })
    .await;
    let echo = call(&toolkit, "mcp__everything__echo", json!({"message": "hi"})).await;
    assert!(ok(&echo).contains("hi"));
    client.close().await;
}

#[tokio::test]
async fn withdrawn_tools_come_back_without_an_announcement() {
    let script = require_dynamic_tools!();
    let client = dynamic_client(&script, "dyn");
    let mut toolkit = Toolkit::new();
    let report = register_mcp(&mut toolkit, std::slice::from_ref(&client), BASIC_GROUP).await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let toolkit = Arc::new(toolkit);
    let broke = call(&toolkit, "mcp__dyn__break-listing", json!({"broken": true})).await;
    assert_eq!(ok(&broke), "listing broken");
    until_schemas(&toolkit, &[]).await;
    // Healed silently: no list_changed. The failed listing is retried
    // after its backoff (1 s) on a later read of the toolkit.
    let healed = client
        .call_tool(
            "break-listing",
            args(json!({"broken": false, "silent": true})),
            &Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(healed.text_content(), "listing works");
    until_schemas(&toolkit, &fixed("dyn")).await;
    client.close().await;
}
