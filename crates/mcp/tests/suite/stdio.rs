//! A real stdio server: listing, calling, result conversion, filters.

use oxiscope_mcp::{McpClient, McpTool};
use oxiscope_message::{MediaBlock, ToolResultState};
use oxiscope_tool::{Tool, ToolCallContext, collect};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{require_everything, stdio_client, stdio_config, timeouts};

fn find<'a>(tools: &'a [McpTool], name: &str) -> &'a McpTool {
    tools
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", names(tools)))
}

fn names(tools: &[McpTool]) -> Vec<&str> {
    tools.iter().map(|t| t.name()).collect()
}

async fn run(tool: &McpTool, input: Value) -> oxiscope_tool::ToolResponse {
    collect(tool.call(input, ToolCallContext::local(std::env::temp_dir()))).await
}

#[tokio::test]
async fn stdio_server_tools_are_listed_with_prefixed_names_and_server_schemas() {
    let script = require_everything!();
    let client = stdio_client(&script);
    let tools = client.list_tools().await.unwrap();
    let sum = find(&tools, "mcp__everything__get-sum");
    assert_eq!(sum.remote_name(), "get-sum");
    assert_eq!(sum.description(), "Returns the sum of two numbers");
    let schema = sum.input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["a"]["type"], "number");
    assert_eq!(schema["required"], json!(["a", "b"]));
    // readOnlyHint reaches the flags, true or false.
    assert!(sum.flags().read_only && sum.flags().mcp && sum.flags().concurrency_safe);
    assert!(sum.check_read_only(&json!({"a": 1, "b": 2})));
    let toggle = find(&tools, "mcp__everything__toggle-simulated-logging");
    assert!(!toggle.flags().read_only && toggle.flags().mcp);
    assert!(!toggle.check_read_only(&json!({})));
    // A tool without input gets an object schema with no properties.
    let env = find(&tools, "mcp__everything__get-env");
    assert_eq!(env.input_schema()["type"], "object");
    assert!(env.input_schema()["properties"].is_object());
    client.close().await;
}

#[tokio::test]
async fn calling_a_stdio_tool_returns_its_text() {
    let script = require_everything!();
    let client = stdio_client(&script);
    let tools = client.list_tools().await.unwrap();
    let response = run(
        find(&tools, "mcp__everything__echo"),
        json!({"message": "hi there"}),
    )
    .await;
    assert_eq!(response.state, ToolResultState::Success);
    assert_eq!(response.text(), "Echo: hi there");
    assert_eq!(response.metadata["mcp_server"], "everything");
    let response = run(
        find(&tools, "mcp__everything__get-sum"),
        json!({"a": 2, "b": 40}),
    )
    .await;
    assert!(response.text().contains("42"), "{}", response.text());
    client.close().await;
}

#[tokio::test]
async fn image_results_become_data_blocks_between_the_texts() {
    let script = require_everything!();
    let client = stdio_client(&script);
    let tools = client.list_tools().await.unwrap();
    let response = run(find(&tools, "mcp__everything__get-tiny-image"), json!({})).await;
    assert_eq!(response.state, ToolResultState::Success);
    assert_eq!(response.content.len(), 3, "{:?}", response.content);
    let MediaBlock::Data(image) = &response.content[1] else {
        panic!("expected an image block, got {:?}", response.content[1]);
    };
    assert_eq!(image.source.media_type(), "image/png");
    let oxiscope_message::DataSource::Base64(source) = &image.source else {
        panic!("expected inline data");
    };
    // The PNG signature, base64-encoded.
    assert!(
        source.data.starts_with("iVBORw0KGgo"),
        "{}",
        &source.data[..20]
    );
    assert!(
        matches!(&response.content[0], MediaBlock::Text(t) if t.text.contains("image you requested"))
    );
    assert!(matches!(&response.content[2], MediaBlock::Text(t) if t.text.contains("MCP logo")));
    client.close().await;
}

#[tokio::test]
async fn embedded_resources_become_text_or_data() {
    let script = require_everything!();
    let client = stdio_client(&script);
    let tools = client.list_tools().await.unwrap();
    let tool = find(&tools, "mcp__everything__get-resource-reference");
    let text = run(tool, json!({"resourceType": "Text", "resourceId": 3})).await;
    assert_eq!(text.state, ToolResultState::Success);
    assert_eq!(text.content.len(), 1, "{:?}", text.content);
    assert!(
        text.text()
            .contains("Resource 3: This is a plaintext resource"),
        "{}",
        text.text()
    );
    let blob = run(tool, json!({"resourceType": "Blob", "resourceId": 2})).await;
    let data: Vec<_> = blob
        .content
        .iter()
        .filter_map(|b| match b {
            MediaBlock::Data(d) => Some(d),
            MediaBlock::Text(_) => None,
        })
        .collect();
    assert_eq!(data.len(), 1, "{:?}", blob.content);
    assert_eq!(data[0].source.media_type(), "text/plain");
    assert!(
        data[0].name.as_deref().is_some_and(|n| n.contains('2')),
        "{:?}",
        data[0].name
    );
    client.close().await;
}

#[tokio::test]
async fn is_error_results_and_unknown_tools_become_error_results() {
    let script = require_everything!();
    let client = stdio_client(&script);
    let tools = client.list_tools().await.unwrap();
    // The handler throws on id 0; the server answers with isError.
    let tool = find(&tools, "mcp__everything__get-resource-reference");
    let response = run(tool, json!({"resourceType": "Text", "resourceId": 0})).await;
    assert_eq!(response.state, ToolResultState::Error);
    assert!(
        response.text().contains("Invalid resourceId"),
        "{}",
        response.text()
    );
    // Arguments the server's own validation rejects.
    let sum = find(&tools, "mcp__everything__get-sum");
    let response = run(sum, json!({"a": "two", "b": 1})).await;
    assert_eq!(
        response.state,
        ToolResultState::Error,
        "{}",
        response.text()
    );
    // A tool the server does not have.
    let chunk = client
        .call_tool("no-such-tool", serde_json::Map::new(), &Default::default())
        .await;
    match chunk {
        Ok(chunk) => assert_eq!(
            chunk.state,
            ToolResultState::Error,
            "{}",
            chunk.text_content()
        ),
        Err(e) => assert!(e.to_string().contains("no-such-tool"), "{e}"),
    }
    // The session survived all of it.
    let response = run(
        find(&tools, "mcp__everything__echo"),
        json!({"message": "still here"}),
    )
    .await;
    assert_eq!(response.text(), "Echo: still here");
    client.close().await;
}

#[tokio::test]
async fn enable_and_disable_filters_choose_the_exposed_tools() {
    let script = require_everything!();
    let only = McpClient::builder("everything", stdio_config(&script))
        .enable_tools(["echo", "get-sum", "not-a-tool"])
        .timeouts(timeouts())
        .build()
        .unwrap();
    let mut listed = names(&only.list_tools().await.unwrap())
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    listed.sort();
    assert_eq!(
        listed,
        ["mcp__everything__echo", "mcp__everything__get-sum"]
    );
    only.close().await;

    let without = McpClient::builder("everything", stdio_config(&script))
        .disable_tools(["echo"])
        .timeouts(timeouts())
        .build()
        .unwrap();
    let listed = without.list_tools().await.unwrap();
    assert!(!names(&listed).contains(&"mcp__everything__echo"));
    assert!(names(&listed).contains(&"mcp__everything__get-sum"));
    without.close().await;
}

#[tokio::test]
async fn list_changed_notifications_refresh_the_tool_list() {
    let script = require_everything!();
    let client = stdio_client(&script);
    client.connect().await.unwrap();
    let before = client.list_tools().await.unwrap();
    assert!(names(&before).contains(&"mcp__everything__echo"));
    // server-everything registers more tools right after `initialized` and
    // announces them with notifications/tools/list_changed.
    super::support::eventually("the server announced a tool list change", || {
        let client = client.clone();
        async move { client.tools_changed() > 0 }
    })
    .await;
    let tools = client.list_tools().await.unwrap();
    assert!(
        names(&tools).contains(&"mcp__everything__simulate-research-query"),
        "{:?}",
        names(&tools)
    );
    client.close().await;
}
