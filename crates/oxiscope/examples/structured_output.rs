//! Structured output: the reply must carry JSON that follows a schema,
//! here derived from a Rust type; the agent checks (and repairs) what the
//! model gives before the reply ends.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example structured_output
//! ```
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use oxiscope::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

/// A person mentioned in the text.
#[derive(Debug, Deserialize, JsonSchema)]
struct Person {
    /// Their full name.
    name: String,
    /// Their age in years.
    age: u32,
    /// The city they live in.
    city: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = Agent::builder("Extractor", oxiscope::chat_model_from_env()?)
        .system_prompt("Extract the facts the user asks for.")
        .build()?;

    let schema = schemars::schema_for!(Person).to_value();
    let text = "Ada Lovelace, 36, lives in London and writes programs.";
    let reply = agent
        .reply_with(
            Msg::user("user", format!("Who is this? {text}"))?,
            Some(schema),
        )
        .await?;

    let output = reply
        .structured_output
        .ok_or("the reply has no structured output")?;
    let person: Person = serde_json::from_value(serde_json::Value::Object(*output))?;
    println!("{person:?}");
    println!(
        "{} is {} and lives in {}.",
        person.name, person.age, person.city
    );
    Ok(())
}
