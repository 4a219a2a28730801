//! A goal pipeline: an executor works on a task and reports; a verifier
//! (a sibling agent with its own conversation and a strict prompt) checks
//! the report against the goal. A refusal goes back to the executor with
//! its reason, until the verifier passes the work, finds it impossible, or
//! the attempts run out.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example goal_pipeline
//! ```
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use oxiscope::agent::pipeline::GoalOutcome;
use oxiscope::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let executor = Agent::builder("Executor", oxiscope::chat_model_from_env()?)
        .system_prompt("You write short poems on request.")
        .build()?;
    let verifier = executor.sibling(
        "Verifier",
        "You check that a poem is exactly four lines and mentions the sea.",
    );
    let pipeline = GoalPipeline::builder(executor, verifier)
        .max_iters(3)
        .build();

    // Both agents' events come through one stream; REPLY_START names the agent.
    let goal = Msg::user("user", "A four-line poem about the sea.")?;
    let mut events = pipeline.reply_stream(goal);
    while let Some(event) = events.next().await {
        if let AgentEvent::ReplyStart(start) = event {
            println!("-- {} is working", start.name);
        }
    }

    let progress = pipeline.progress().await;
    println!("refusals: {}", progress.refusals);
    match progress.outcome {
        Some(GoalOutcome::Passed { report, message }) => {
            println!("passed: {message}\n{report}");
        }
        other => println!("not passed: {other:?}"),
    }
    Ok(())
}
