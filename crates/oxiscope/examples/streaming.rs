//! Streaming a reply's events to the terminal: by hand (text deltas as they
//! arrive), then with the console renderer `oxiscope chat` prints with.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example streaming
//! ```
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use std::io::Write as _;

use oxiscope::prelude::*;
use oxiscope::render::Verbosity;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = oxiscope::chat_model_from_env()?;
    let agent = Agent::builder("Friday", model).build()?;

    // 1. Every step of a reply is an event; print the text as it streams.
    let mut events = agent.reply_stream(Msg::user("user", "Count to three.")?);
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::TextBlockDelta(delta) => {
                print!("{}", delta.delta);
                std::io::stdout().flush()?;
            }
            AgentEvent::ReplyEnd(end) => println!("\n[reply ended: {:?}]", end.finished_reason),
            _ => {}
        }
    }

    // 2. The console renderer shows thinking, tool calls, results and usage too.
    let options = RenderOptions::plain().with_verbosity(Verbosity::Default);
    let mut renderer = ConsoleRenderer::new(std::io::stdout(), options);
    let mut events = agent.reply_stream(Msg::user("user", "And now backwards.")?);
    while let Some(event) = events.next().await {
        renderer.render(&event)?;
    }
    // The renderer rebuilt the reply message from the events.
    let rebuilt = renderer.last_msg().map(|m| m.text("")).unwrap_or_default();
    println!("[rebuilt reply: {rebuilt}]");
    Ok(())
}
