//! [`replay_agent`]: an agent rebuilt from a tape alone, for replaying a
//! tape without the program that recorded it (`oxiscope replay TAPE`), and
//! [`live_agent`], the same over a live model (`--live`).

use std::sync::Arc;

use oxiscope_agent::pipeline::CancellationToken;
use oxiscope_agent::{Agent, AgentError, Middleware};
use oxiscope_message::{AgentEvent, Role};
use oxiscope_model::{ChatModel, ChatRequest, ChatStream, DynChatModel, ModelError, ToolSchema};
use oxiscope_permission::{PermissionContext, PermissionDecision};
use oxiscope_tool::{Tool, ToolCallContext, ToolChunk, ToolStream, Toolkit};
use serde_json::Value;

use super::normalize::normalized;
use super::{Tape, TapeEntry, TapeRecorder, TapeReplayer};

/// An agent shaped like the one that recorded `tape`, with `replayer` as
/// its middleware: the name of its replies, the system prompt and tools of
/// its first model request, and the model name of its model calls. Its
/// tools never run (the replayer answers them); those the recorded run
/// asked the user about ask again, the others are allowed.
///
/// # Errors
/// [`AgentError`] when the agent cannot be built.
pub fn replay_agent(tape: &Tape, replayer: &TapeReplayer) -> Result<Agent, AgentError> {
    shaped(tape, offline_model(tape), replayer.clone())
}

/// The same agent over a live `model`, recorded by `recorder`, for
/// [`diff_live`](super::diff_live): its tools answer with the result the
/// tape recorded for the same tool and input (they never run), or an
/// error result when the tape has none.
///
/// # Errors
/// [`AgentError`] when the agent cannot be built.
pub fn live_agent(
    tape: &Tape,
    model: Arc<dyn DynChatModel>,
    recorder: &TapeRecorder,
) -> Result<Agent, AgentError> {
    shaped(tape, model, recorder.clone())
}

fn shaped(
    tape: &Tape,
    model: Arc<dyn DynChatModel>,
    middleware: impl Middleware + 'static,
) -> Result<Agent, AgentError> {
    let mut name = "agent".to_owned();
    let mut asked: Vec<String> = Vec::new();
    for event in tape.events() {
        match event {
            AgentEvent::ReplyStart(e) if name == "agent" => name.clone_from(&e.name),
            AgentEvent::RequireUserConfirm(e) => {
                asked.extend(e.tool_calls.iter().map(|c| c.name.clone()));
            }
            _ => {}
        }
    }
    let (prompt, tools) = tape
        .entries
        .iter()
        .find_map(|e| match e {
            TapeEntry::ModelRequest {
                messages, tools, ..
            } => {
                let prompt = messages
                    .first()
                    .filter(|m| m.role == Role::System)
                    .map(|m| m.text(""))
                    .unwrap_or_default();
                Some((prompt, tools.clone()))
            }
            _ => None,
        })
        .unwrap_or_default();
    let shared = Arc::new(tape.clone());
    let mut toolkit = Toolkit::new();
    for schema in tools {
        let ask = asked.contains(&schema.function.name);
        // A tool the agent adds itself (structured output, ...) is refused
        // as a duplicate: the agent offers it anyway.
        let _ = toolkit.register(TapeTool {
            schema,
            ask,
            tape: Arc::clone(&shared),
        });
    }
    Agent::builder(name, model)
        .system_prompt(prompt)
        .toolkit(Arc::new(toolkit))
        .middleware(middleware)
        .state(oxiscope_agent::AgentState {
            permission_context: PermissionContext::default(),
            ..Default::default()
        })
        .build()
}

/// The model of an agent that replays `tape`: named as the recorded
/// model calls name theirs, it answers nothing itself (the agent's
/// [`TapeReplayer`] answers every call; one that reaches the model fails).
#[must_use]
pub fn offline_model(tape: &Tape) -> Arc<dyn DynChatModel> {
    Arc::new(OfflineModel {
        name: recorded_model_name(tape),
    })
}

/// The model name of the tape's first model call.
fn recorded_model_name(tape: &Tape) -> String {
    tape.events()
        .find_map(|event| match event {
            AgentEvent::ModelCallStart(e) => Some(e.model_name.clone()),
            _ => None,
        })
        .unwrap_or_else(|| "replayed-model".to_owned())
}

/// A tool known only by its recorded schema.
#[derive(Debug)]
struct TapeTool {
    schema: ToolSchema,
    ask: bool,
    tape: Arc<Tape>,
}

impl Tool for TapeTool {
    fn name(&self) -> &str {
        &self.schema.function.name
    }

    fn description(&self) -> &str {
        &self.schema.function.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema.function.parameters
    }

    fn check_permissions(
        &self,
        _input: &Value,
        _context: &PermissionContext,
    ) -> PermissionDecision {
        if self.ask {
            PermissionDecision::ask("asked in the recorded run")
        } else {
            PermissionDecision::allow("allowed in the recorded run")
        }
    }

    fn call(&self, input: Value, _ctx: ToolCallContext) -> ToolStream {
        // A replayer answers before the tool is reached; in a live run the
        // tape's result for the same input stands in for running it.
        let wanted = normalized(input);
        let recorded = self.tape.entries.iter().find_map(|e| match e {
            TapeEntry::ToolResult {
                name,
                input,
                chunks,
                ..
            } if name == self.name() && normalized(input.clone()) == wanted => Some(chunks.clone()),
            _ => None,
        });
        let chunks = recorded.unwrap_or_else(|| {
            vec![ToolChunk::error(format!(
                "the tape has no result of {} with this input",
                self.name()
            ))]
        });
        Box::pin(futures_util::stream::iter(chunks))
    }
}

/// The model of a replayed agent: the replayer answers every call, so a
/// call that reaches it fails.
#[derive(Debug)]
struct OfflineModel {
    name: String,
}

impl ChatModel for OfflineModel {
    fn model_name(&self) -> &str {
        &self.name
    }

    async fn call(
        &self,
        _request: ChatRequest<'_>,
        _cancel: CancellationToken,
    ) -> Result<ChatStream, ModelError> {
        Err(ModelError::InvalidRequest {
            message: "a replayed agent calls no model".to_owned(),
        })
    }
}
