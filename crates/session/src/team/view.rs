//! How sessions show their team (`SessionRecord.team_id`,
//! `SessionView.team` as a `TeamDetailResponse`), and what deleting a
//! team's session does to the team.

use oxiscope_storage::{AgentRecord, TeamRecord};
use serde_json::{Map, Value, json};

use super::roster::{TeamData, dissolve_held, locked};
use crate::Engine;
use crate::error::SessionResult;

/// An agent as `AgentView` shows it (workers made for a team say so).
fn agent_view(agent: &AgentRecord) -> Value {
    serde_json::to_value(crate::records::view(agent.clone())).unwrap_or(Value::Null)
}

/// A team as `TeamRecord` shows it.
fn team_view(team: &TeamRecord) -> Value {
    json!({
        "id": team.id,
        "updated_at": team.updated_at,
        "created_at": team.created_at,
        "user_id": team.user_id,
        "session_id": team.session_id,
        "leader_agent_id": team.leader_agent_id,
        "data": team.data,
    })
}

/// The team of the user's session `session_id`: its id and its
/// `TeamDetailResponse` (leader agent, members with their sessions);
/// `(None, None)` when the session is in no team.
///
/// # Errors
/// The store's failure.
pub async fn session_team(
    state: &Engine,
    user: &str,
    session_id: &str,
) -> SessionResult<(Option<String>, Option<Value>)> {
    let storage = state.storage();
    let Some(team_id) = storage.session_team(user, session_id).await? else {
        return Ok((None, None));
    };
    let Some(team) = storage.get_team(user, &team_id).await? else {
        return Ok((Some(team_id), None));
    };
    let leader_agent_id = match &team.leader_agent_id {
        Some(id) => Some(id.clone()),
        None => storage
            .get_session(user, &team.session_id)
            .await?
            .map(|s| s.agent_id),
    };
    let leader = match leader_agent_id {
        Some(id) => storage.get_agent(user, &id).await?.map(|a| agent_view(&a)),
        None => None,
    };
    let data: TeamData = serde_json::from_value(team.data.clone()).unwrap_or_default();
    let mut members = Vec::new();
    for member in &data.members {
        if let Some(agent) = storage
            .get_agent(&member.owner_id, &member.agent_id)
            .await?
        {
            members.push(json!({
                "agent": agent_view(&agent),
                "session_id": member.session_id,
            }));
        }
    }
    let mut detail = Map::new();
    detail.insert("team".into(), team_view(&team));
    detail.insert("leader_agent".into(), leader.unwrap_or(Value::Null));
    detail.insert("members".into(), Value::Array(members));
    Ok((Some(team_id), Some(Value::Object(detail))))
}

/// Before the user's session `session_id` is deleted: a leader's team is
/// dissolved (its workers go too); a member leaves its team's roster.
///
/// # Errors
/// The store's or the bus's failure.
pub async fn session_deleting(state: &Engine, user: &str, session_id: &str) -> SessionResult<()> {
    let storage = state.storage();
    let Some(team_id) = storage.session_team(user, session_id).await? else {
        return Ok(());
    };
    locked(state, &team_id, leave(state, user, &team_id, session_id)).await
}

/// [`session_deleting`] for a session of team `team_id`, the roster lease
/// held.
async fn leave(state: &Engine, user: &str, team_id: &str, session_id: &str) -> SessionResult<()> {
    let storage = state.storage();
    let Some(mut team) = storage.get_team(user, team_id).await? else {
        return Ok(());
    };
    if team.session_id == session_id {
        return dissolve_held(state, user, &team).await;
    }
    let mut data: TeamData = serde_json::from_value(team.data.clone()).unwrap_or_default();
    let Some(gone) = data.members.iter().position(|m| m.session_id == session_id) else {
        return Ok(());
    };
    let member = data.members.remove(gone);
    data.member_ids.retain(|id| *id != member.agent_id);
    team.data = serde_json::to_value(&data)
        .map_err(|e| crate::error::SessionError::Internal(format!("a team document: {e}")))?;
    team.updated_at = oxiscope_storage::now();
    storage.update_team(&team).await?;
    // A worker the team created has no life outside it: its agent goes
    // with its session (it is not listed among the user's agents).
    if member.role == "created" {
        storage.delete_agent(user, &member.agent_id).await?;
    }
    Ok(())
}
