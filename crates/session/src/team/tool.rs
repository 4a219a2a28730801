//! The team tools as [`Tool`]s: one type, its kind picks the schema, the
//! description and the operation. Every failure is an error result the
//! model reads.

use std::sync::Arc;

use oxiscope_permission::{PermissionContext, PermissionDecision};
use oxiscope_tool::{Tool, ToolCallContext, ToolChunk, ToolFlags, ToolStream};
use serde_json::{Value, json};

use super::roster::Caller;
use super::{ops, spawn};

/// Which team tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Found a team led by the calling session.
    TeamCreate,
    /// Spawn a worker into the led team.
    AgentCreate,
    /// Borrow an existing invitable agent into the led team.
    AgentInvite,
    /// Message a member, or everyone (the leader's wording).
    LeaderSay,
    /// Message the leader, or everyone (a worker's wording).
    WorkerSay,
    /// Dissolve the led team.
    TeamDelete,
}

/// A team tool bound to its caller.
#[derive(Debug)]
pub(super) struct TeamTool {
    kind: Kind,
    caller: Arc<Caller>,
    description: String,
    schema: Value,
}

impl TeamTool {
    /// The tool `kind` for `caller`, with its usual description and schema.
    pub(super) fn new(kind: Kind, caller: Arc<Caller>) -> Self {
        let (description, schema) = text(kind);
        Self {
            kind,
            caller,
            description: description.to_owned(),
            schema,
        }
    }

    /// The tool with another description and schema (`AgentInvite` lists
    /// its candidates in both).
    pub(super) fn with(mut self, description: String, schema: Value) -> Self {
        self.description = description;
        self.schema = schema;
        self
    }
}

impl Tool for TeamTool {
    fn name(&self) -> &str {
        match self.kind {
            Kind::TeamCreate => "TeamCreate",
            Kind::AgentCreate => "AgentCreate",
            Kind::AgentInvite => "AgentInvite",
            Kind::LeaderSay | Kind::WorkerSay => "TeamSay",
            Kind::TeamDelete => "TeamDelete",
        }
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn flags(&self) -> ToolFlags {
        ToolFlags {
            concurrency_safe: matches!(self.kind, Kind::LeaderSay | Kind::WorkerSay),
            // Only messages change nothing; the other tools create and
            // delete agents and sessions (not for a read-only mode).
            read_only: matches!(self.kind, Kind::LeaderSay | Kind::WorkerSay),
            ..ToolFlags::default()
        }
    }

    /// Always allowed: which tools a session gets is decided by its role,
    /// and every leader tool checks the caller leads the team.
    fn check_permissions(
        &self,
        _input: &Value,
        _context: &PermissionContext,
    ) -> PermissionDecision {
        PermissionDecision::allow(format!("{} is part of the team feature", self.name()))
    }

    fn call(&self, input: Value, _ctx: ToolCallContext) -> ToolStream {
        let kind = self.kind;
        let caller = Arc::clone(&self.caller);
        let name = self.name().to_owned();
        Box::pin(futures_util::stream::once(async move {
            // Detached: an interrupted reply does not cut an operation
            // that creates, enlists and deletes records together halfway
            // (dissolving a team even stops its members' runs).
            let task = async move {
                match kind {
                    Kind::TeamCreate => ops::team_create(&caller, &input).await,
                    Kind::AgentCreate => spawn::agent_create(&caller, &input).await,
                    Kind::AgentInvite => spawn::agent_invite(&caller, &input).await,
                    Kind::LeaderSay | Kind::WorkerSay => ops::team_say(&caller, &input).await,
                    Kind::TeamDelete => ops::team_delete(&caller).await,
                }
            };
            let outcome = crate::lease::detached(task)
                .await
                .map_err(super::roster::TeamError::from)
                .and_then(|done| done);
            match outcome {
                Ok(text) => ToolChunk::text(text),
                Err(e) => ToolChunk::error(format!("{name}: {e}")),
            }
        }))
    }
}

/// A required string argument.
pub(super) fn arg<'a>(input: &'a Value, key: &str) -> super::roster::TeamResult<&'a str> {
    match input.get(key).and_then(Value::as_str) {
        Some(v) if !v.trim().is_empty() => Ok(v),
        _ => super::roster::refuse(format!("the argument {key:?} must be a non-empty string.")),
    }
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn object(properties: &Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// The description and input schema of `kind`.
fn text(kind: Kind) -> (&'static str, Value) {
    match kind {
        Kind::TeamCreate => (
            TEAM_CREATE,
            object(
                &json!({
                    "name": string("The team's display name, shown to the user."),
                    "description": string(
                        "The team's purpose and shared context; every member's system prompt \
                         includes it."
                    ),
                }),
                &["name", "description"],
            ),
        ),
        Kind::AgentCreate => (
            AGENT_CREATE,
            object(
                &json!({
                    "name": string(
                        "A short name for the new member, unique in the team (the leader's \
                         name included): 1 to 64 letters, digits, '_' or '-'. TeamSay addresses it by this name."
                    ),
                    "description": string(
                        "One sentence on the member's role; it becomes part of its system prompt."
                    ),
                    "prompt": string(
                        "The member's first task. It starts on it at once, so make it complete: \
                         context, constraints, what to deliver."
                    ),
                }),
                &["name", "description", "prompt"],
            ),
        ),
        Kind::AgentInvite => (
            AGENT_INVITE,
            object(
                &json!({
                    "target": string("The agent to invite, as \"<name>@<handle>\" from the list."),
                    "prompt": string(
                        "The invited agent's first task. It starts on it at once, so make it \
                         complete."
                    ),
                }),
                &["target", "prompt"],
            ),
        ),
        Kind::LeaderSay | Kind::WorkerSay => (
            if kind == Kind::LeaderSay {
                LEADER_SAY
            } else {
                WORKER_SAY
            },
            json!({
                "type": "object",
                "properties": {
                    "content": string("The message, in plain language."),
                    "to": {
                        "anyOf": [{"type": "string"}, {"type": "null"}],
                        "default": null,
                        "description": "The member's name; null sends to every other member.",
                    },
                },
                "required": ["content"],
            }),
        ),
        Kind::TeamDelete => (TEAM_DELETE, json!({"type": "object", "properties": {}})),
    }
}

const TEAM_CREATE: &str = "Found a team that this session leads and get its id.

Use it when the task splits into parts that several agents can work on in parallel under your \
coordination; then add members with AgentCreate. A member receives the prompt you give \
AgentCreate by itself, so there is no need to TeamSay it afterwards: wait for its report.

Do not use it for a task you can finish alone, or when this session already belongs to a team \
(a session leads at most one team).";

const AGENT_CREATE: &str = "Add a new worker to the team you lead.

The worker is an agent made for this team: it works in your workspace with your model, gets \
`prompt` as its first task and starts on it immediately, and reports back to you with TeamSay. \
Address it later with TeamSay(to=<name>). Names are unique in the team, the leader's included.

Workers live as long as the team: TeamDelete deletes them. You organise the work, collect every \
report and give the final answer; keep the members reporting to you rather than to each other.";

const AGENT_INVITE: &str = "Invite one of the user's existing agents into the team you lead.

Unlike AgentCreate, the invited agent keeps its own definition (system prompt and settings) and \
works in a workspace of its own, so paths in your workspace may not exist for it. It gets \
`prompt` as its first task and starts at once. Dissolving the team removes only the session it \
was given for the team; the agent itself stays.

Invitable agents:";

const LEADER_SAY: &str = "Send a message to one member of your team, or to all of them.

Use it to pass new requirements or context to a member, to broadcast an update, or to ask a \
member a follow-up question. Members report to you by themselves when they finish: do not poll \
them, and do not repeat the prompt you just gave AgentCreate. Answer a report only when you have \
further work or questions.";

const WORKER_SAY: &str = "Send a message to your team leader, or to every member.

When you finish your task you must report the result to the leader with this tool, whether it \
succeeded or not: the leader is waiting for it. Use it too for findings others need or to ask \
the leader for clarification.";

const TEAM_DELETE: &str = "Dissolve the team you lead.

Use it when the work is done and you have every member's results, or the team is stuck beyond \
repair. Workers made with AgentCreate are deleted with their sessions; invited agents lose only \
the session they were given for the team. Your own session stays, outside any team. This cannot \
be undone.";
