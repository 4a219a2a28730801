//! `TeamCreate`, `TeamSay` and `TeamDelete`.

use oxiscope_storage::{TeamRecord, new_id, now};
use serde_json::{Map, Value, json};

use super::roster::{Caller, TeamData, TeamResult, dissolve, refuse, team_hint};
use super::tool::arg;
use crate::deliver::deliver_hint;

/// Founds a team led by the caller's session.
pub(super) async fn team_create(caller: &Caller, input: &Value) -> TeamResult<String> {
    let name = arg(input, "name")?;
    let description = input
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let storage = caller.state.storage();
    if let Some(team) = storage
        .session_team(&caller.user_id, &caller.session_id)
        .await?
    {
        return refuse(format!(
            "this session is already part of team {team}. A session leads at most one team: \
             dissolve it with TeamDelete first."
        ));
    }
    let data = TeamData {
        name: name.to_owned(),
        description: description.to_owned(),
        member_ids: Vec::new(),
        members: Vec::new(),
        extra: Map::new(),
    };
    let stamp = now();
    let team = TeamRecord {
        id: new_id(),
        user_id: caller.user_id.clone(),
        session_id: caller.session_id.clone(),
        leader_agent_id: Some(caller.agent_id.clone()),
        data: serde_json::to_value(&data)?,
        created_at: stamp.clone(),
        updated_at: stamp,
    };
    storage.create_team(&team).await?;
    if !storage
        .set_session_team(&caller.user_id, &caller.session_id, Some(&team.id))
        .await?
    {
        storage.delete_team(&caller.user_id, &team.id).await?;
        return refuse(format!("session {} not found.", caller.session_id));
    }
    Ok(format!(
        "Team {} ({name}) created; you lead it. Add members with AgentCreate, then coordinate \
         them with TeamSay.",
        team.id
    ))
}

/// Sends a message to one member by name, or to every other member.
pub(super) async fn team_say(caller: &Caller, input: &Value) -> TeamResult<String> {
    let content = arg(input, "content")?;
    let to = match input.get("to") {
        None | Some(Value::Null) => None,
        Some(Value::String(to)) => Some(to.as_str()),
        Some(_) => return refuse("the argument \"to\" must be a member's name or null."),
    };
    let team = caller.team().await?;
    let data = TeamData::of(&team)?;
    let directory = caller.directory(&team, &data).await?;
    if !directory.iter().any(|(_, s)| *s == caller.session_id) {
        return refuse(format!("this session is not a member of team {}.", team.id));
    }
    let recipients: Vec<&(String, String)> = match to {
        None => directory
            .iter()
            .filter(|(_, s)| *s != caller.session_id)
            .collect(),
        Some(name) => {
            let Some(entry) = directory.iter().find(|(n, _)| n == name) else {
                let mut known: Vec<&str> = directory.iter().map(|(n, _)| n.as_str()).collect();
                known.sort_unstable();
                return refuse(format!(
                    "no team member is named {name:?}. Members: {}.",
                    json!(known)
                ));
            };
            if entry.1 == caller.session_id {
                return refuse("you cannot send a message to yourself.");
            }
            vec![entry]
        }
    };
    let sender = caller.agent_name(&caller.user_id, &caller.agent_id).await?;
    let mut delivered = 0usize;
    let mut failed = Vec::new();
    for (name, session) in &recipients {
        let hint = team_hint(&sender, content, "team");
        match deliver_hint(&caller.state, &caller.user_id, session, &sender, hint).await {
            Ok(()) => delivered += 1,
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    let target = to.map_or_else(|| "broadcast".to_owned(), |n| format!("member {n:?}"));
    if !failed.is_empty() {
        return refuse(format!(
            "delivered to {delivered} recipient(s) ({target}); not delivered to {}",
            failed.join("; ")
        ));
    }
    Ok(format!("Delivered to {delivered} recipient(s) ({target})."))
}

/// Dissolves the team the caller leads.
pub(super) async fn team_delete(caller: &Caller) -> TeamResult<String> {
    let team = caller.led_team("dissolve the team").await?;
    dissolve(&caller.state, &caller.user_id, &team.id).await?;
    Ok(format!(
        "Team {} dissolved: its workers are deleted and your session no longer leads a team.",
        team.id
    ))
}
