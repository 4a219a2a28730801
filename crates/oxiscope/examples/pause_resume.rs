//! Pause, save, restore in a new process, resume: a reply that waits for a
//! confirmation is described entirely by the agent's state, so it can be
//! saved as JSON, the process can stop, and a new process continues it.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example pause_resume
//! ```
//!
//! Run without arguments, it asks the agent to archive a report, saves the
//! parked state and starts itself again as `pause_resume resume FILE`,
//! which loads the state, approves the call and finishes the reply.
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oxiscope::message::ToolCallState;
use oxiscope::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

/// Move a file into the archive.
#[derive(Deserialize, JsonSchema)]
struct Archive {
    /// The file to archive.
    path: String,
}

/// The same agent in both processes: only its state differs.
fn agent(state: AgentState) -> Result<Agent, Box<dyn std::error::Error>> {
    let mut toolkit = Toolkit::new();
    // Asks before every call: the reply parks until someone answers.
    toolkit.register(FunctionTool::new("archive", |a: Archive| async move {
        format!("archived {}", a.path)
    }))?;
    let model = oxiscope::chat_model_from_env()?;
    Ok(Agent::builder("Friday", model)
        .toolkit(Arc::new(toolkit))
        .state(state)
        .build()?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("resume") => resume(Path::new(args.get(2).ok_or("resume needs a FILE")?)).await,
        _ => pause().await,
    }
}

/// Process 1: run until the reply parks, save the state, hand over.
async fn pause() -> Result<(), Box<dyn std::error::Error>> {
    let agent = agent(AgentState::default())?;
    let mut events = agent.reply_stream(Msg::user("user", "Archive report.pdf, please.")?);
    while let Some(event) = events.next().await {
        if let AgentEvent::RequireUserConfirm(request) = event {
            println!(
                "[1] parked: {} call(s) wait for a confirmation",
                request.tool_calls.len()
            );
        }
    }
    let state = agent.state().await;
    let file = std::env::temp_dir().join(format!("oxiscope-paused-{}.json", std::process::id()));
    std::fs::write(&file, serde_json::to_vec_pretty(&state)?)?;
    println!("[1] state saved to {}", file.display());

    let status = std::process::Command::new(std::env::current_exe()?)
        .arg("resume")
        .arg(&file)
        .status()?;
    std::fs::remove_file(&file)?;
    if !status.success() {
        return Err(format!("the resuming process failed: {status}").into());
    }
    Ok(())
}

/// Process 2: load the state, approve what waits, finish the reply.
async fn resume(file: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let state: AgentState = serde_json::from_slice(&std::fs::read(PathBuf::from(file))?)?;
    let reply_id = state
        .reply_msg()
        .map(|m| m.id.to_string())
        .ok_or("nothing is parked")?;
    let approvals: Vec<ConfirmResult> = state
        .pending_tool_calls()
        .into_iter()
        .filter(|call| call.state == ToolCallState::Asking)
        .map(|call| {
            println!("[2] approving {}({})", call.name, call.input);
            ConfirmResult {
                confirmed: true,
                tool_call: call.clone(),
                rules: None,
            }
        })
        .collect();
    let agent = agent(state)?;
    let reply = agent
        .reply(UserConfirmResultEvent::new(reply_id, approvals))
        .await?;
    println!("[2] {}", reply.text("\n"));
    Ok(())
}
