//! A remote agent over the A2A protocol, used like a local one: its card is
//! fetched from `/.well-known/agent-card.json`, each reply is one A2A
//! message, and the remote task's updates arrive as the same events a local
//! agent streams. The second reply continues the same remote conversation.
//!
//! ```sh
//! cargo run -p oxiscope --example a2a_remote -- http://127.0.0.1:9999
//! ```
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use oxiscope::a2a::A2AAgent;
use oxiscope::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "http://127.0.0.1:9999".to_owned());
    let remote = A2AAgent::connect(&url).await?;
    println!(
        "connected to {}: {}",
        remote.name(),
        remote.card().description
    );

    let mut events = remote.reply_stream(Msg::user("user", "Plan a weekend in Lisbon.")?);
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::TextBlockDelta(delta) => print!("{}", delta.delta),
            AgentEvent::ReplyEnd(end) => println!("\n[{:?}]", end.finished_reason),
            _ => {}
        }
    }

    let reply = remote.reply(Msg::user("user", "Make it cheaper.")?).await?;
    println!("{}", reply.text("\n"));
    let state = remote.state().await;
    println!("remote conversation: {:?}", state.context_id);
    Ok(())
}
