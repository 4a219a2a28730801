//! The same replies through Oxiscope: an [`Agent`] over the OpenAI chat
//! provider with one `echo` tool, every event of the reply stream read.

use std::sync::Arc;

use futures_util::StreamExt;
use oxiscope_agent::{Agent, AgentBuilder, AgentState, InjectionConfig, Middleware, ReActConfig};
use oxiscope_message::{AgentEvent, Msg, PermissionBehavior, PermissionRule, ReplyFinishedReason};
use oxiscope_model::DynChatModel;
use oxiscope_providers::openai_chat::OpenAiChatModel;
use oxiscope_tool::{FunctionTool, ToolFlags, Toolkit};
use schemars::JsonSchema;
use serde::Deserialize;

use super::floor::Outcome;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// A number.
    n: u32,
}

/// The toolkit every agent shares: `echo`, safe to run concurrently.
pub fn toolkit() -> Arc<Toolkit> {
    let mut toolkit = Toolkit::new();
    let echo = FunctionTool::new("echo", |a: EchoArgs| async move { a.n.to_string() })
        .with_description("Echo a number.")
        .with_flags(ToolFlags {
            concurrency_safe: true,
            read_only: true,
            ..ToolFlags::default()
        });
    toolkit.register(echo).unwrap();
    Arc::new(toolkit)
}

/// The model every agent of a scenario shares (one connection pool).
pub fn model(base_url: &str) -> Arc<dyn DynChatModel> {
    let model = OpenAiChatModel::builder("gpt-bench")
        .with_api_key("sk-bench")
        .with_base_url(base_url)
        .build()
        .unwrap();
    Arc::new(model)
}

/// A fresh agent allowed to call `echo`, without runtime-state hints (so
/// that its requests carry what the floor's carry).
pub fn agent(model: &Arc<dyn DynChatModel>, toolkit: &Arc<Toolkit>) -> Agent {
    builder(model, toolkit).build().unwrap()
}

/// The same agent with `middleware` (a tape's recorder or replayer).
pub fn agent_with(
    model: &Arc<dyn DynChatModel>,
    toolkit: &Arc<Toolkit>,
    middleware: impl Middleware + 'static,
) -> Agent {
    builder(model, toolkit)
        .middleware(middleware)
        .build()
        .unwrap()
}

fn builder(model: &Arc<dyn DynChatModel>, toolkit: &Arc<Toolkit>) -> AgentBuilder {
    let mut state = AgentState::default();
    state.permission_context.add_rule(PermissionRule::new(
        "echo",
        None,
        PermissionBehavior::Allow,
        "session",
    ));
    Agent::builder("bench", Arc::clone(model))
        .system_prompt(super::SYSTEM_PROMPT)
        .toolkit(Arc::clone(toolkit))
        .react_config(ReActConfig {
            max_iters: 100,
            ..ReActConfig::default()
        })
        .injection_config(InjectionConfig {
            inject_runtime_state: false,
            ..InjectionConfig::default()
        })
        .state(state)
}

/// One reply of `agent` to `user`, counted like the floor's.
pub async fn reply(agent: &Agent, user: &str) -> Outcome {
    let mut stream = agent.reply_stream(Msg::user("user", user).unwrap());
    let mut outcome = Outcome::default();
    let mut ended = false;
    while let Some(event) = stream.next().await {
        match event {
            AgentEvent::ModelCallEnd(end) => {
                outcome.calls += 1;
                outcome.tokens += end.input_tokens + end.output_tokens;
            }
            AgentEvent::TextBlockDelta(d) => outcome.text += d.delta.len(),
            AgentEvent::ToolResultEnd(_) => outcome.tools += 1,
            AgentEvent::ReplyEnd(end) => {
                assert_eq!(
                    end.finished_reason,
                    ReplyFinishedReason::Completed,
                    "{end:?}"
                );
                ended = true;
            }
            _ => {}
        }
    }
    assert!(ended, "the reply stream ended without REPLY_END");
    outcome
}
