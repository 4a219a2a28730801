//! Tools from typed Rust functions: the argument struct's doc comments
//! become the tool's description and JSON Schema; the model's arguments
//! are parsed (and repaired: `"2"` becomes `2`) before the function runs.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example typed_tools
//! ```
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use std::sync::Arc;

use oxiscope::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

/// Get the current weather of a city.
#[derive(Deserialize, JsonSchema)]
struct Weather {
    /// The city, e.g. "Paris".
    city: String,
}

/// Add two integers.
#[derive(Deserialize, JsonSchema)]
struct Add {
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut toolkit = Toolkit::new();
    // A function tool asks the user before each call unless told otherwise;
    // these two only compute, so they are allowed outright.
    toolkit.register(
        FunctionTool::new("get_weather", |w: Weather| async move {
            format!("Sunny, 21 °C in {}", w.city)
        })
        .with_permission(PermissionBehavior::Allow),
    )?;
    toolkit.register(
        FunctionTool::new("add", |x: Add| async move { (x.a + x.b).to_string() })
            .with_permission(PermissionBehavior::Allow),
    )?;

    let agent = Agent::builder("Friday", oxiscope::chat_model_from_env()?)
        .system_prompt("Use the tools to answer.")
        .toolkit(Arc::new(toolkit))
        .build()?;

    let mut events = agent.reply_stream(Msg::user("user", "Weather in Paris, and 20 + 22?")?);
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::ToolResultStart(call) => println!("running {}", call.tool_call_name),
            AgentEvent::ToolResultTextDelta(out) => println!("  -> {}", out.delta),
            AgentEvent::ReplyEnd(end) => println!("reply ended: {:?}", end.finished_reason),
            _ => {}
        }
    }
    let reply = agent.state().await.context.last().map(|m| m.text("\n"));
    println!("{}", reply.unwrap_or_default());
    Ok(())
}
