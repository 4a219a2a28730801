//! The smallest agent: a model, a system prompt, one question.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example minimal_agent -- "What is Rust?"
//! ```
//!
//! The model comes from the environment (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`,
//! ...; `OXISCOPE_PROVIDER`, `OXISCOPE_MODEL` and `OXISCOPE_BASE_URL` choose
//! another provider, model or endpoint), as `oxiscope chat` picks one.
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use oxiscope::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Say hello.".to_owned());

    let model = oxiscope::chat_model_from_env()?;
    let agent = Agent::builder("Friday", model)
        .system_prompt("You are Friday, a concise assistant.")
        .build()?;

    // `reply` runs the whole reasoning-acting loop and returns the answer.
    let answer = agent.reply(Msg::user("user", question)?).await?;
    println!("{}", answer.text("\n"));

    // The conversation is kept in the agent's state: the question and the answer.
    let state = agent.state().await;
    println!("({} messages in the context)", state.context.len());
    Ok(())
}
