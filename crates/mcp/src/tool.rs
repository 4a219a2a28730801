//! [`McpTool`]: one tool of an MCP server as an Oxiscope [`Tool`].

use oxiscope_message::ToolResultState;
use oxiscope_tool::{Tool, ToolCallContext, ToolChunk, ToolFlags, ToolStream};
use serde_json::{Map, Value};

use crate::client::McpClient;
use crate::error::Error;

/// A tool of an MCP server, named `mcp__{server}__{tool}`.
///
/// Its input schema is the server's; a `readOnlyHint` annotation makes it
/// read-only (and concurrency-safe) for the permission engine and the
/// agent loop. A call goes through the [`McpClient`], so it shares its
/// connection, timeouts and restarts; any failure — a dead server, a
/// timeout, an `isError` result — is an error tool result the model reads.
#[derive(Debug, Clone)]
pub struct McpTool {
    client: McpClient,
    name: String,
    remote: String,
    description: String,
    schema: Value,
    read_only: bool,
}

/// The name a server's tool gets in a toolkit.
#[must_use]
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

impl McpTool {
    pub(crate) fn new(client: McpClient, tool: &rmcp::model::Tool) -> Self {
        let mut schema = (*tool.input_schema).clone();
        schema
            .entry("type")
            .or_insert_with(|| Value::String("object".to_owned()));
        if schema.get("type").and_then(Value::as_str) == Some("object") {
            schema
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
        }
        let description = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .unwrap_or_default()
            .to_owned();
        let read_only = tool
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false);
        Self {
            name: tool_name(client.name(), &tool.name),
            remote: tool.name.to_string(),
            client,
            description,
            schema: Value::Object(schema),
            read_only,
        }
    }

    /// The tool's name on its server.
    #[must_use]
    pub fn remote_name(&self) -> &str {
        &self.remote
    }

    /// The client the tool calls through.
    #[must_use]
    pub fn client(&self) -> &McpClient {
        &self.client
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn flags(&self) -> ToolFlags {
        ToolFlags {
            mcp: true,
            read_only: self.read_only,
            concurrency_safe: self.read_only,
            ..ToolFlags::default()
        }
    }

    fn call(&self, input: Value, ctx: ToolCallContext) -> ToolStream {
        let client = self.client.clone();
        let remote = self.remote.clone();
        let name = self.name.clone();
        Box::pin(futures_util::stream::once(async move {
            let arguments = match input {
                Value::Object(map) => map,
                Value::Null => Map::new(),
                other => {
                    return ToolChunk::error(format!(
                        "{name} expects a JSON object of arguments, got {other}"
                    ));
                }
            };
            match client.call_tool(&remote, arguments, &ctx.cancel).await {
                Ok(chunk) => chunk.with_metadata("mcp_server", client.name()),
                Err(Error::Cancelled { .. }) => {
                    ToolChunk::error(format!("{name} was interrupted."))
                        .with_state(ToolResultState::Interrupted)
                }
                Err(e) => ToolChunk::error(format!("Error calling {name}: {e}"))
                    .with_metadata("mcp_server", client.name()),
            }
        }))
    }
}
