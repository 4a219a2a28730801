//! Long-term memory: the agent keeps what it learns as Markdown files in
//! `<workdir>/Memory`, with an index (`MEMORY.md`) that every later
//! conversation gets in its system prompt.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example memory -- ./my-agent-home
//! ```
//!
//! Two conversations with two fresh agents: the first is told a fact and
//! writes it down with the Write tool; the second starts with nothing but
//! the memory and answers from it.
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oxiscope::memory::{AgenticMemoryMiddleware, MemoryMode, Parameters};
use oxiscope::permission::PathEnv;
use oxiscope::prelude::*;
use oxiscope::tool::{Edit, Read, Write};

/// An agent with a fresh conversation over the memory in `home`.
fn agent(home: &Path, model: &Arc<dyn DynChatModel>) -> Result<Agent, Box<dyn std::error::Error>> {
    let memory = AgenticMemoryMiddleware::builder(home, Arc::clone(model))
        // The agent searches its memory itself (a `memory_search` tool);
        // `StaticControl` would have the model pick memories for each reply.
        .parameters(Parameters {
            mode: MemoryMode::AgentControl,
            ..Parameters::default()
        })
        .build()?;
    let env = PathEnv::new(home, None);
    let mut toolkit = Toolkit::new();
    toolkit.register(Read::new(env.clone()))?;
    toolkit.register(Write::new(env.clone()))?;
    toolkit.register(Edit::new(env))?;
    let state = AgentState {
        // File edits inside the working directory run without asking.
        permission_context: PermissionContext::new(PermissionMode::AcceptEdits),
        ..AgentState::default()
    };
    Ok(Agent::builder("Friday", Arc::clone(model))
        .workdir(home)
        .toolkit(Arc::new(toolkit))
        .middleware(memory)
        .state(state)
        .build()?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let home = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join(format!("oxiscope-memory-{}", std::process::id())),
        PathBuf::from,
    );
    std::fs::create_dir_all(&home)?;
    let home = home.canonicalize()?;
    let model = oxiscope::chat_model_from_env()?;

    let first = agent(&home, &model)?;
    let reply = first
        .reply(Msg::user("user", "I live in Hangzhou. Remember that.")?)
        .await?;
    println!("[first conversation] {}", reply.text("\n"));

    let second = agent(&home, &model)?;
    let reply = second.reply(Msg::user("user", "Where do I live?")?).await?;
    println!("[second conversation] {}", reply.text("\n"));

    for entry in std::fs::read_dir(home.join("Memory"))? {
        println!("memory file: {}", entry?.file_name().to_string_lossy());
    }
    Ok(())
}
