//! An MCP server's tools in an agent: the server runs as a child process
//! speaking MCP over stdio, its tools are listed and offered to the model
//! as `mcp__{server}__{tool}`, and each call goes through the permission
//! engine like any other tool (read-only tools run; the others ask).
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example mcp_server -- \
//!     npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! The arguments are the server's command line (server-everything above).
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use std::sync::Arc;

use oxiscope::mcp::{McpClient, McpConfig, register_mcp};
use oxiscope::prelude::*;
use oxiscope::tool::{BASIC_GROUP, ToolContext};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut command: Vec<String> = std::env::args().skip(1).collect();
    if command.is_empty() {
        command = ["npx", "-y", "@modelcontextprotocol/server-everything"]
            .map(String::from)
            .into();
    }
    let program = command.remove(0);
    let server = McpClient::builder("everything", McpConfig::stdio(program, command)).build()?;
    server.connect().await?;

    let mut toolkit = Toolkit::new();
    let report = register_mcp(&mut toolkit, std::slice::from_ref(&server), BASIC_GROUP).await;
    if !report.failed.is_empty() {
        return Err(format!(
            "the server's tools could not be listed: {:?}",
            report.failed
        )
        .into());
    }
    let schemas = toolkit.schemas(&ToolContext::default());
    let names: Vec<&str> = schemas.iter().map(|s| s.function.name.as_str()).collect();
    println!(
        "{} tools, among them {}",
        names.len(),
        names[..names.len().min(3)].join(", ")
    );

    let agent = Agent::builder("Friday", oxiscope::chat_model_from_env()?)
        .toolkit(Arc::new(toolkit))
        .build()?;
    let mut events = agent.reply_stream(Msg::user("user", "What is 20 + 22? Use the tools.")?);
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::ToolResultStart(call) => println!("calling {}", call.tool_call_name),
            AgentEvent::ToolResultTextDelta(out) => println!("  -> {}", out.delta),
            AgentEvent::TextBlockDelta(delta) => print!("{}", delta.delta),
            _ => {}
        }
    }
    println!();
    server.close().await;
    Ok(())
}
