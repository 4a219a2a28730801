//! The console over an agent of your own: `launch_console` gives any agent
//! or pipeline the `user>` prompt, live rendering and confirmation
//! questions of `oxiscope chat`. Type `exit` (or press Ctrl+D) to leave.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example console
//! ```
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use std::sync::Arc;

use oxiscope::console::launch_console;
use oxiscope::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

/// Add a note to the user's list.
#[derive(Deserialize, JsonSchema)]
struct Note {
    /// The note's text.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut toolkit = Toolkit::new();
    // Asks before each call: the console puts the question to the user.
    toolkit.register(FunctionTool::new("add_note", |n: Note| async move {
        format!("noted: {}", n.text)
    }))?;
    let agent = Agent::builder("Friday", oxiscope::chat_model_from_env()?)
        .system_prompt("You keep the user's notes with add_note.")
        .toolkit(Arc::new(toolkit))
        .build()?;

    let summary = launch_console(&agent).await?;
    println!(
        "{} replies, {} questions answered",
        summary.replies, summary.confirmations
    );
    Ok(())
}
