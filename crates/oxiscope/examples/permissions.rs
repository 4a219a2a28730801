//! Permissions: rules the engine applies to every tool call, and a
//! confirmation answered in code instead of by a person.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example permissions
//! ```
//!
//! `delete_file` asks before every call (the default of a function tool);
//! a deny rule stops every `format_disk` call before anyone is asked. When
//! a reply needs a confirmation it parks: the stream ends on
//! `REQUIRE_USER_CONFIRM`, and the answer starts the next stream.
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use std::sync::Arc;

use oxiscope::permission::parse_rule;
use oxiscope::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

/// Delete a file.
#[derive(Deserialize, JsonSchema)]
struct Delete {
    /// The file's path.
    path: String,
}

/// Erase a disk.
#[derive(Deserialize, JsonSchema)]
struct Format {
    /// The device.
    device: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut toolkit = Toolkit::new();
    toolkit.register(FunctionTool::new("delete_file", |d: Delete| async move {
        format!("deleted {}", d.path)
    }))?;
    toolkit.register(FunctionTool::new("format_disk", |f: Format| async move {
        format!("erased {}", f.device)
    }))?;

    let mut permissions = PermissionContext::new(PermissionMode::Default);
    permissions.add_rule(parse_rule(
        "format_disk",
        PermissionBehavior::Deny,
        "session",
    )?);
    let state = AgentState {
        permission_context: permissions,
        ..AgentState::default()
    };
    let agent = Agent::builder("Friday", oxiscope::chat_model_from_env()?)
        .toolkit(Arc::new(toolkit))
        .state(state)
        .build()?;

    let mut input: ReplyInput = Msg::user(
        "user",
        "Delete /tmp/old.log and ~/notes.txt, then format /dev/sda.",
    )?
    .into();
    loop {
        let mut asked = None;
        let mut events = agent.reply_stream(input);
        while let Some(event) = events.next().await {
            match event {
                AgentEvent::RequireUserConfirm(request) => asked = Some(request),
                AgentEvent::ToolResultEnd(result) => {
                    println!("{}: {:?}", result.tool_call_id, result.state);
                }
                _ => {}
            }
        }
        let Some(request) = asked else { break };
        // Our policy in code: allow deleting under /tmp, refuse anything else.
        let answers = request
            .tool_calls
            .iter()
            .map(|call| {
                let confirmed = call.input.contains("/tmp/");
                let answer = if confirmed { "yes" } else { "no" };
                println!("asked about {} {}: {answer}", call.name, call.input);
                ConfirmResult {
                    confirmed,
                    tool_call: call.clone(),
                    rules: None,
                }
            })
            .collect();
        input = UserConfirmResultEvent::new(request.reply_id, answers).into();
    }
    let answer = agent.state().await.context.last().map(|m| m.text("\n"));
    println!("{}", answer.unwrap_or_default());
    Ok(())
}
