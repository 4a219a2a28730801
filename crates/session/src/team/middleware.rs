//! The middleware that offers the team tools, by the session's role: a
//! worker gets `TeamSay` only; a leader, or a session in no team, gets
//! `TeamCreate`, `AgentCreate`, `TeamSay`, `TeamDelete` and, when the user
//! has invitable agents, `AgentInvite`.

use std::sync::Arc;

use oxiscope_agent::{AgentState, Middleware, ReplyEndAction, ToolList};
use oxiscope_message::Msg;
use oxiscope_storage::{AgentRecord, SessionRecord};
use oxiscope_tool::Tool;
use serde_json::Value;

use super::nudge::Nudge;
use super::roster::Caller;
use super::spawn::{invite_description, invite_target};
use super::tool::{Kind, TeamTool};
use crate::Engine;
use crate::error::SessionResult;

/// Adds the session's team tools to every reasoning step.
#[derive(Debug)]
pub struct TeamMiddleware {
    tools: Vec<Arc<dyn Tool>>,
    /// For members: the rule that they report before a reply ends.
    nudge: Option<Nudge>,
    /// Whether the session is a member (not the leader) of a team.
    worker: bool,
}

impl Middleware for TeamMiddleware {
    fn list_tools(&self, tools: &mut ToolList, _state: &AgentState) {
        if self.worker {
            // A worker works for its leader: it schedules nothing of its
            // own (a scheduled run would be a session outside the team).
            tools.retain(|t| !t.function.name.starts_with("Schedule"));
        }
        tools.add_missing(&self.tools);
    }

    fn on_reply_end(&self, reply: &Msg, state: &AgentState) -> ReplyEndAction {
        match &self.nudge {
            Some(nudge) => nudge.on_end(reply, state),
            None => ReplyEndAction::Finish,
        }
    }
}

/// The team middleware of `session` (of `agent`), its role read now: a
/// session's role does not change while it lives (a worker stays one; a
/// leader's tools check at call time whether it leads a team).
///
/// # Errors
/// The store's failure.
pub async fn team_middleware(
    state: &Engine,
    agent: &AgentRecord,
    session: &SessionRecord,
) -> SessionResult<TeamMiddleware> {
    let storage = state.storage();
    let caller = Arc::new(Caller {
        state: state.clone(),
        user_id: session.user_id.clone(),
        session_id: session.id.clone(),
        agent_id: agent.id.clone(),
    });
    let team = match storage.session_team(&session.user_id, &session.id).await? {
        Some(id) => storage.get_team(&session.user_id, &id).await?,
        None => None,
    };
    let tool = |kind| -> Arc<dyn Tool> { Arc::new(TeamTool::new(kind, Arc::clone(&caller))) };
    if let Some(team) = team.filter(|t| t.session_id != session.id) {
        let leader = match caller.leader_name(&team).await {
            Ok(name) => Some(Nudge::new(name)),
            // A team whose leader is gone: no one to report to.
            Err(_) => None,
        };
        return Ok(TeamMiddleware {
            tools: vec![tool(Kind::WorkerSay)],
            nudge: leader,
            worker: true,
        });
    }
    let mut tools = vec![
        tool(Kind::TeamCreate),
        agent_create(state, Arc::clone(&caller)),
        tool(Kind::LeaderSay),
        tool(Kind::TeamDelete),
    ];
    let pool: Vec<AgentRecord> = storage
        .list_agents(&session.user_id)
        .await?
        .into_iter()
        .filter(|a| a.id != agent.id && invite_description(a).is_some())
        .collect();
    if !pool.is_empty() {
        let invite = TeamTool::new(Kind::AgentInvite, Arc::clone(&caller));
        let mut description = invite.description().to_owned();
        for a in &pool {
            description.push_str(&format!(
                "\n- {:?}: {}",
                invite_target(a),
                invite_description(a).unwrap_or_default()
            ));
        }
        let mut schema = invite.input_schema().clone();
        let targets: Vec<Value> = pool.iter().map(|a| invite_target(a).into()).collect();
        if let Some(target) = schema.pointer_mut("/properties/target") {
            target["enum"] = Value::Array(targets);
        }
        tools.push(Arc::new(invite.with(description, schema)));
    }
    Ok(TeamMiddleware {
        tools,
        nudge: None,
        worker: false,
    })
}

/// `AgentCreate`, with a `subagent_type` choice when the operator added
/// templates besides `default`.
fn agent_create(state: &Engine, caller: Arc<Caller>) -> Arc<dyn Tool> {
    let tool = TeamTool::new(Kind::AgentCreate, caller);
    let templates = &state.config().team_templates;
    if !templates.has_choice() {
        return Arc::new(tool);
    }
    let kinds: Vec<Value> = templates.kinds().into_iter().map(Value::from).collect();
    let mut listed = String::from(
        "The template the member is made from (its system prompt and permissions); \
         `default` when omitted. Types:",
    );
    for t in templates.iter() {
        listed.push_str(&format!("\n- {:?}: {}", t.kind, t.description));
    }
    let mut schema = tool.input_schema().clone();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "subagent_type".to_owned(),
            serde_json::json!({"type": "string", "enum": kinds, "description": listed}),
        );
    }
    let description = tool.description().to_owned();
    Arc::new(tool.with(description, schema))
}
