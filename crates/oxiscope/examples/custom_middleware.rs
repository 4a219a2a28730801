//! A middleware of your own: hooks around the agent loop. This one adds a
//! rule to the system prompt, logs every model call, keeps a token meter in
//! the agent's state (saved with it), and refuses calls of the tools it
//! was told to block, whatever the permission engine said.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example custom_middleware
//! ```
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use oxiscope::agent::{ModelCall, ModelNext};
use oxiscope::message::ToolCallBlock;
use oxiscope::model::{ChatStream, ModelError};
use oxiscope::permission::PermissionDecision;
use oxiscope::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The key of this middleware's entry in the state's `middle_context`.
const METER: &str = "token_meter";

#[derive(Debug, Default)]
struct Supervisor {
    /// Shared with `main`, which reads it after the replies.
    model_calls: Arc<AtomicUsize>,
    blocked: Vec<String>,
}

/// Restart the machine.
#[derive(Deserialize, JsonSchema)]
struct Reboot {}

impl Middleware for Supervisor {
    fn on_system_prompt(&self, prompt: String) -> String {
        format!("{prompt}\nAnswer in one sentence.")
    }

    fn on_model_call<'a>(
        &'a self,
        call: ModelCall<'a>,
        next: ModelNext<'a>,
    ) -> BoxFuture<'a, Result<ChatStream, ModelError>> {
        let n = self.model_calls.fetch_add(1, Ordering::Relaxed) + 1;
        println!(
            "[model call {n}: {} messages, {} tools]",
            call.messages.len(),
            call.tools.len()
        );
        next.run(call)
    }

    fn on_event(&self, event: &AgentEvent, middle_context: &mut Map<String, Value>) {
        if let AgentEvent::ModelCallEnd(end) = event {
            let meter = middle_context
                .entry(METER)
                .or_insert_with(|| json!({"input": 0, "output": 0}));
            for (key, add) in [("input", end.input_tokens), ("output", end.output_tokens)] {
                let total = meter[key].as_u64().unwrap_or(0) + add;
                meter[key] = json!(total);
            }
        }
    }

    fn on_check_permission(
        &self,
        call: &ToolCallBlock,
        _input: &Value,
        _context: &PermissionContext,
        decision: PermissionDecision,
    ) -> PermissionDecision {
        if self.blocked.contains(&call.name) {
            return PermissionDecision::deny(format!("{} is blocked by the supervisor", call.name));
        }
        decision
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model_calls = Arc::new(AtomicUsize::new(0));
    let supervisor = Supervisor {
        model_calls: Arc::clone(&model_calls),
        blocked: vec!["reboot".to_owned()],
    };
    let mut toolkit = Toolkit::new();
    toolkit.register(
        FunctionTool::new("reboot", |_: Reboot| async { "rebooting" })
            .with_permission(PermissionBehavior::Allow),
    )?;
    let agent = Agent::builder("Friday", oxiscope::chat_model_from_env()?)
        .system_prompt("You are Friday.")
        .toolkit(Arc::new(toolkit))
        .middleware(supervisor)
        .build()?;

    let reply = agent
        .reply(Msg::user("user", "Reboot the machine, please.")?)
        .await?;
    println!("{}", reply.text("\n"));
    let reply = agent.reply(Msg::user("user", "And an onion?")?).await?;
    println!("{}", reply.text("\n"));

    let state = agent.state().await;
    println!(
        "token meter: {}",
        state.middle_context.get(METER).cloned().unwrap_or_default()
    );
    println!("model calls: {}", model_calls.load(Ordering::Relaxed));
    Ok(())
}
