//! A member's confirmations reach its leader.
//!
//! AgentScope 2.0.11 has no event of its own for this, so the service
//! uses its generic `CUSTOM` event (front ends skip names they do not
//! know) on the leader's stream:
//!
//! - `team_confirmation_required`, when a member's reply parks on a
//!   confirmation. `value` holds `team_id`, `member` (the member's name),
//!   `agent_id` and `session_id` of the member, `reply_id` of the parked
//!   reply and `tool_calls`: the asked calls as `REQUIRE_USER_CONFIRM`
//!   carries them (`id`, `name`, `input`, `suggested_rules`, ...).
//! - `team_confirmation_answered`, when an answer to a member's parked
//!   reply was accepted. `value` holds `team_id`, `member`, `agent_id`,
//!   `session_id`, `reply_id`, `answered_on` (`"leader"` or `"member"`:
//!   which session the answer was posted to) and `results`, one
//!   `{tool_call_id, name, confirmed}` per answered call.
//!
//! The leader's user answers on the leader's session with the usual
//! `USER_CONFIRM_RESULT` naming the member's `reply_id`; the service
//! routes it to the member ([`parked_member`]), whose reply resumes. What
//! the member then does reaches the leader as usual: its `TeamSay`
//! report, a notice when its turn fails, or another confirmation.

use oxiscope_agent::{Agent, AgentState, Awaiting};
use oxiscope_message::{AgentEvent, CustomEvent, UserConfirmResultEvent};
use oxiscope_storage::TeamRecord;
use serde_json::{Map, Value, json};

use super::roster::TeamData;
use crate::error::SessionResult;
use crate::spec::AgentSpec;
use crate::{Engine, agent_state, to_python_json};

/// The `CUSTOM` event name of a member's parked confirmation.
pub const CONFIRMATION_REQUIRED: &str = "team_confirmation_required";
/// The `CUSTOM` event name of an accepted answer to it.
pub const CONFIRMATION_ANSWERED: &str = "team_confirmation_answered";

/// Which session an answer to a member's confirmation was posted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnsweredOn {
    /// The leader's session (routed to the member).
    Leader,
    /// The member's own session.
    Member,
}

impl AnsweredOn {
    fn as_str(self) -> &'static str {
        match self {
            Self::Leader => "leader",
            Self::Member => "member",
        }
    }
}

/// The team `session_id` is a member (not the leader) of.
async fn member_team(
    state: &Engine,
    user: &str,
    session_id: &str,
) -> SessionResult<Option<TeamRecord>> {
    let storage = state.storage();
    let Some(team_id) = storage.session_team(user, session_id).await? else {
        return Ok(None);
    };
    Ok(storage
        .get_team(user, &team_id)
        .await?
        .filter(|team| team.session_id != session_id))
}

/// Publishes the `CUSTOM` event `name` with `value` on `session_id`'s
/// stream; failures are logged.
async fn announce(state: &Engine, session_id: &str, name: &str, value: Map<String, Value>) {
    let event = AgentEvent::from(CustomEvent::new(name.to_owned(), value));
    match to_python_json(&event) {
        Ok(payload) => {
            let limit = state.config().replay_limit;
            if let Err(e) = state.bus().publish(session_id, payload.into(), limit).await {
                tracing::warn!(session_id, error = %e, name, "publishing a team event failed");
            }
        }
        Err(e) => tracing::warn!(session_id, error = %e, name, "serialising a team event failed"),
    }
}

/// The fields every team confirmation event starts with.
fn base(team: &TeamRecord, member: &str, agent_id: &str, session_id: &str) -> Map<String, Value> {
    let mut value = Map::new();
    value.insert("team_id".into(), team.id.clone().into());
    value.insert("member".into(), member.into());
    value.insert("agent_id".into(), agent_id.into());
    value.insert("session_id".into(), session_id.into());
    value
}

/// After a turn of `session_id`, a member of `team`, parked: when it
/// waits for a confirmation, the leader's stream gets
/// `team_confirmation_required`. Failures are logged, never raised.
pub(super) async fn member_parked(
    state: &Engine,
    team: &TeamRecord,
    session_id: &str,
    agent: &Agent,
    agent_state: &AgentState,
) {
    if agent_state.awaiting() != Some(Awaiting::Permission) {
        return;
    }
    let calls: Vec<_> = agent_state
        .pending_tool_calls()
        .into_iter()
        .filter(|c| c.state == oxiscope_message::ToolCallState::Asking)
        .collect();
    let calls = match serde_json::to_value(&calls) {
        Ok(calls) => calls,
        Err(e) => {
            tracing::warn!(session_id, error = %e, "cannot show the member's tool calls");
            return;
        }
    };
    let agent_id = TeamData::of(team)
        .ok()
        .and_then(|data| {
            data.members
                .into_iter()
                .find(|m| m.session_id == session_id)
                .map(|m| m.agent_id)
        })
        .unwrap_or_default();
    let mut value = base(team, agent.name(), &agent_id, session_id);
    value.insert(
        "reply_id".into(),
        agent_state.reply_context.reply_id.clone().into(),
    );
    value.insert("tool_calls".into(), calls);
    announce(state, &team.session_id, CONFIRMATION_REQUIRED, value).await;
}

/// The member of the team `leader_session_id` leads whose reply is parked
/// on a confirmation as `reply_id`: its agent and session ids. `None` when
/// the session leads no team or no member's reply is so parked.
///
/// # Errors
/// The store's failure, or a member's malformed stored state.
pub async fn parked_member(
    state: &Engine,
    user: &str,
    leader_session_id: &str,
    reply_id: &str,
) -> SessionResult<Option<(String, String)>> {
    let storage = state.storage();
    let Some(team_id) = storage.session_team(user, leader_session_id).await? else {
        return Ok(None);
    };
    let Some(team) = storage.get_team(user, &team_id).await? else {
        return Ok(None);
    };
    if team.session_id != leader_session_id {
        return Ok(None);
    }
    let Ok(data) = TeamData::of(&team) else {
        tracing::warn!(team_id, "the team record is malformed");
        return Ok(None);
    };
    // Members are the user's own sessions (teams are one user's).
    for member in data.members.iter().filter(|m| m.owner_id == user) {
        let Some(session) = storage.get_session(user, &member.session_id).await? else {
            continue;
        };
        let member_state = agent_state(&session)?;
        if member_state.reply_context.reply_id == reply_id
            && member_state.awaiting() == Some(Awaiting::Permission)
        {
            return Ok(Some((session.agent_id, session.id)));
        }
    }
    Ok(None)
}

/// After an answer to `session_id`'s parked confirmation was accepted:
/// when the session is a team member's, its leader's stream gets
/// `team_confirmation_answered`. Failures are logged, never raised.
pub async fn confirmation_answered(
    state: &Engine,
    user: &str,
    agent_id: &str,
    session_id: &str,
    answer: &UserConfirmResultEvent,
    on: AnsweredOn,
) {
    let team = match member_team(state, user, session_id).await {
        Ok(Some(team)) => team,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!(session_id, error = %e, "cannot read the member's team");
            return;
        }
    };
    let name = match state.storage().get_agent(user, agent_id).await {
        Ok(Some(agent)) => AgentSpec::of(&agent).name_or("agent").to_owned(),
        Ok(None) => "agent".to_owned(),
        Err(e) => {
            tracing::warn!(session_id, error = %e, "cannot read the member's agent");
            return;
        }
    };
    let results: Vec<Value> = answer
        .confirm_results
        .iter()
        .map(|r| {
            json!({
                "tool_call_id": r.tool_call.id,
                "name": r.tool_call.name,
                "confirmed": r.confirmed,
            })
        })
        .collect();
    let mut value = base(&team, &name, agent_id, session_id);
    value.insert("reply_id".into(), answer.reply_id.clone().into());
    value.insert("answered_on".into(), on.as_str().into());
    value.insert("results".into(), Value::Array(results));
    announce(state, &team.session_id, CONFIRMATION_ANSWERED, value).await;
}
