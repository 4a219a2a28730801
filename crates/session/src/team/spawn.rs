//! `AgentCreate` (a worker made for the team) and `AgentInvite` (one of
//! the user's invitable agents, borrowed with a session of its own).

use oxiscope_agent::AgentState;
use oxiscope_storage::{AgentRecord, SessionRecord, TeamRecord, new_id, now};
use serde_json::{Value, json};

use super::roster::{Caller, TeamData, TeamMember, TeamResult, handle, locked, refuse, team_hint};
use super::tool::arg;
use crate::deliver::deliver_hint;
use crate::spec::{AgentSpec, ModelSlot, SessionSpec, origin_of};
use crate::{agent_state, check_quota};

/// The description other agents are offered an agent under, when its data
/// lets them invite it (see [`AgentSpec::invite_description`]).
pub(super) fn invite_description(agent: &AgentRecord) -> Option<String> {
    AgentSpec::of(agent).invite_description().map(str::to_owned)
}

/// The `"<name>@<handle>"` an invitable agent is offered as.
pub(super) fn invite_target(agent: &AgentRecord) -> String {
    let spec = AgentSpec::of(agent);
    format!("{}@{}", spec.name_or("agent"), handle(&agent.id))
}

/// The team the caller leads, its roster and leader session, after the
/// size limit and the user's token quota are checked; read with the roster
/// lease of `team_id` held (the team found before taking it).
async fn growing_team(
    caller: &Caller,
    team_id: &str,
    what: &str,
) -> TeamResult<(TeamRecord, TeamData, SessionRecord)> {
    let team = caller.led_team(what).await?;
    if team.id != team_id {
        return refuse("the team changed meanwhile; try again.");
    }
    let data = TeamData::of(&team)?;
    let most = caller.state.config().policy.max_team_members;
    if data.members.len() >= most {
        return refuse(format!(
            "the team has {} members, the most a team may have (max_team_members {most}).",
            data.members.len()
        ));
    }
    check_quota(&caller.state, &caller.user_id).await?;
    let Some(leader) = caller
        .state
        .storage()
        .get_session(&caller.user_id, &team.session_id)
        .await?
    else {
        return refuse(format!("the leader session of team {} is gone.", team.id));
    };
    Ok((team, data, leader))
}

/// Stores the new member's session as a member of `team` (the roster lease
/// held). When that fails, the member's session (and a created member's
/// agent) are deleted again: nothing is left outside the team.
async fn enlist(
    caller: &Caller,
    mut team: TeamRecord,
    mut data: TeamData,
    member: TeamMember,
) -> TeamResult<()> {
    let storage = caller.state.storage();
    let session_id = member.session_id.clone();
    let (agent_id, created) = (member.agent_id.clone(), member.role == "created");
    let joined = async {
        if !storage
            .set_session_team(&caller.user_id, &session_id, Some(&team.id))
            .await?
        {
            return refuse(format!("the member's session {session_id} is gone."));
        }
        if created {
            data.member_ids.push(agent_id.clone());
        }
        data.members.push(member);
        caller.save(&mut team, &data).await
    }
    .await;
    if joined.is_err() {
        // A created member's agent takes its sessions with it.
        let gone = if created {
            storage.delete_agent(&caller.user_id, &agent_id).await
        } else {
            storage.delete_session(&caller.user_id, &session_id).await
        };
        if let Err(e) = gone {
            tracing::warn!(session_id, error = %e, "cannot remove a member that failed to join");
        }
    }
    joined
}

/// Delivers a new member's first task (after the roster lease is let go);
/// `joined` says the member joined. It has either way, so a failed
/// delivery is said instead of failing the call (a retry would find the
/// name taken).
async fn first_task(
    caller: &Caller,
    session_id: &str,
    sender: &str,
    hint: oxiscope_message::HintBlock,
    joined: String,
) -> String {
    match deliver_hint(&caller.state, &caller.user_id, session_id, sender, hint).await {
        Ok(()) => format!("{joined} It is working on its task."),
        Err(e) => format!(
            "{joined} But its first task could not be delivered ({e}); send it again with \
             TeamSay."
        ),
    }
}

/// A session record for a member: the leader's config with a team name
/// and origin, in `workspace_id`, starting from `state`.
fn member_session(
    leader: &SessionRecord,
    agent_id: &str,
    session_id: &str,
    workspace_id: &str,
    name: String,
    state: &AgentState,
) -> TeamResult<SessionRecord> {
    let mut config = SessionSpec::of(leader);
    config.set_workspace_id(workspace_id);
    config.set_name(name);
    config.set_origin(origin_of("team"));
    let stamp = now();
    Ok(SessionRecord {
        id: session_id.to_owned(),
        user_id: leader.user_id.clone(),
        agent_id: agent_id.to_owned(),
        workspace_id: workspace_id.to_owned(),
        created_at: stamp.clone(),
        updated_at: stamp,
        config: config.to_value(),
        state: serde_json::to_value(state)?,
        revision: 0,
    })
}

/// Spawns a worker: an agent from the chosen template, a session beside
/// the leader's (same workspace and model; the leader's permissions merged
/// as the template says), its first task queued at once.
pub(super) async fn agent_create(caller: &Caller, input: &Value) -> TeamResult<String> {
    let name = arg(input, "name")?;
    let description = arg(input, "description")?;
    let prompt = arg(input, "prompt")?;
    // Names are framed into other members' messages (`from="..."`):
    // plain ones only, so no name can forge the framing.
    let plain = name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !plain {
        return refuse(format!(
            "the member name {name:?} must be 1 to 64 letters, digits, '_' or '-'."
        ));
    }
    let templates = std::sync::Arc::clone(&caller.state.config().team_templates);
    let kind = match input.get("subagent_type") {
        None | Some(Value::Null) => "default",
        Some(Value::String(kind)) => kind.as_str(),
        Some(_) => return refuse("the argument \"subagent_type\" must be a string."),
    };
    let Some(template) = templates.get(kind) else {
        return refuse(format!(
            "unknown subagent_type {kind:?}; expected one of {}.",
            json!(templates.kinds())
        ));
    };
    let team_id = caller.led_team("add members").await?.id;
    let (team_name, leader_name, session_id) = locked(&caller.state, &team_id, async {
        spawn_worker(caller, &team_id, template, name, description).await
    })
    .await?;
    let hint = team_hint(&leader_name, prompt, "team_message");
    let joined = format!("Member {name:?} added to team {team_name:?}.");
    Ok(first_task(caller, &session_id, &leader_name, hint, joined).await)
}

/// The body of [`agent_create`], the roster lease held: the worker's agent
/// and session made and enlisted. Returns the team's name, the leader's
/// name and the worker's session.
async fn spawn_worker(
    caller: &Caller,
    team_id: &str,
    template: &super::template::SubAgentTemplate,
    name: &str,
    description: &str,
) -> TeamResult<(String, String, String)> {
    let (team, data, leader) = growing_team(caller, team_id, "add members").await?;
    let directory = caller.directory(&team, &data).await?;
    if directory.iter().any(|(n, _)| n == name) {
        return refuse(format!(
            "a team member named {name:?} exists already; names are unique in the team (the \
             leader's included)."
        ));
    }
    let leader_name = caller.leader_name(&team).await?;
    let system_prompt = template.render(&data, name, description, &leader_name);
    let react = match &template.react_config {
        Some(react) => Value::Object(react.clone()),
        None => serde_json::to_value(oxiscope_agent::ReActConfig::default())?,
    };
    let stamp = now();
    let agent = AgentRecord {
        id: new_id(),
        user_id: caller.user_id.clone(),
        created_at: stamp.clone(),
        updated_at: stamp,
        data: json!({
            "name": name,
            (crate::spec::SOURCE_KEY): "team",
            "system_prompt": system_prompt,
            "chat_config": {
                "context_config": template.context_config,
                "react_config": react,
                "invite_config": {"invitable": false, "invite_description": null},
            },
        }),
    };
    let session_id = new_id();
    // The leader's permissions as they are now, layered as the template
    // says: by default a worker does not ask again for what the user
    // already allowed the leader.
    let leader_state = agent_state(&leader)?;
    let state = AgentState {
        session_id: session_id.clone(),
        permission_context: template.permissions(&leader_state.permission_context),
        ..AgentState::default()
    };
    let session = member_session(
        &leader,
        &agent.id,
        &session_id,
        &leader.workspace_id,
        format!("team:{}/{name}", team.id),
        &state,
    )?;
    let storage = caller.state.storage();
    crate::check_session_cap(&caller.state, &caller.user_id).await?;
    storage.create_agent(&agent).await?;
    if let Err(e) = storage.create_session(&session).await {
        storage.delete_agent(&caller.user_id, &agent.id).await?;
        return Err(e.into());
    }
    let member = TeamMember {
        owner_id: caller.user_id.clone(),
        agent_id: agent.id.clone(),
        session_id: session_id.clone(),
        role: "created".to_owned(),
    };
    let team_name = data.name.clone();
    enlist(caller, team, data, member).await?;
    Ok((team_name, leader_name, session_id))
}

/// Borrows one of the user's invitable agents: a fresh session of it in
/// the team, its first task queued at once. The agent's own sessions and
/// record are untouched.
pub(super) async fn agent_invite(caller: &Caller, input: &Value) -> TeamResult<String> {
    let target = arg(input, "target")?;
    let prompt = arg(input, "prompt")?;
    let Some((_, wanted)) = target.rsplit_once('@') else {
        return refuse(format!(
            "malformed target {target:?}: expected \"<name>@<handle>\"."
        ));
    };
    let storage = caller.state.storage();
    // Only the caller's own agents are candidates, read fresh: one made
    // not invitable meanwhile is refused.
    let candidates: Vec<AgentRecord> = storage
        .list_agents(&caller.user_id)
        .await?
        .into_iter()
        .filter(|a| a.id != caller.agent_id && invite_description(a).is_some())
        .filter(|a| handle(&a.id) == wanted)
        .collect();
    let invited = match candidates.as_slice() {
        [one] => one.clone(),
        [] => return refuse(format!("no invitable agent matches {target:?}.")),
        many => match many.iter().find(|a| invite_target(a) == target) {
            Some(a) => a.clone(),
            None => return refuse(format!("the target {target:?} is ambiguous.")),
        },
    };
    let team_id = caller.led_team("invite members").await?.id;
    let (team_name, leader_name, session_id) = locked(&caller.state, &team_id, async {
        borrow_member(caller, &team_id, &invited).await
    })
    .await?;
    let framed = format!(
        "<system-reminder>You have joined the team {team_name:?}, led by {leader_name:?}, in \
         this session. Team members talk only through the TeamSay tool: use it to report to \
         the leader when your task is done, or to reach the team.</system-reminder>\n\
         <team-message from=\"{leader_name}\">\n{prompt}\n</team-message>"
    );
    let hint = oxiscope_message::HintBlock::new(
        framed,
        Some(json!({"label": "team_message", "sublabel": leader_name}).to_string()),
    );
    let joined = format!(
        "Invited {:?} into team {team_name:?}.",
        invite_target(&invited)
    );
    Ok(first_task(caller, &session_id, &leader_name, hint, joined).await)
}

/// The body of [`agent_invite`], the roster lease held: a session of
/// `invited` made and enlisted. Returns the team's name, the leader's name
/// and the member's session.
async fn borrow_member(
    caller: &Caller,
    team_id: &str,
    invited: &AgentRecord,
) -> TeamResult<(String, String, String)> {
    let storage = caller.state.storage();
    let (team, data, leader) = growing_team(caller, team_id, "invite members").await?;
    if data.members.iter().any(|m| m.agent_id == invited.id) {
        return refuse(format!(
            "{} is a member of team {:?} already.",
            invite_target(invited),
            data.name
        ));
    }
    let leader_name = caller.leader_name(&team).await?;
    // The borrowed session gets a workspace of its own (one session per
    // agent and workspace), the model of the agent's newest session or
    // else the leader's, and fresh permissions.
    let session_id = new_id();
    let own = storage.list_sessions(&caller.user_id, &invited.id).await?;
    let mut base = leader.clone();
    let mut config = SessionSpec::of(&leader);
    if let Some(primary) = own.first() {
        let primary = SessionSpec::of(primary);
        for slot in [ModelSlot::Chat, ModelSlot::Fallback] {
            if let Some(value) = primary.model_value(slot) {
                config.set_model_value(slot, value.clone());
            }
        }
    }
    config.set_cwd(None);
    base.config = config.to_value();
    let state = AgentState {
        session_id: session_id.clone(),
        ..AgentState::default()
    };
    let session = member_session(
        &base,
        &invited.id,
        &session_id,
        &session_id,
        format!("team:{}/invited:{}", team.id, handle(&invited.id)),
        &state,
    )?;
    crate::check_session_cap(&caller.state, &caller.user_id).await?;
    storage.create_session(&session).await?;
    let member = TeamMember {
        owner_id: caller.user_id.clone(),
        agent_id: invited.id.clone(),
        session_id: session_id.clone(),
        role: "invited".to_owned(),
    };
    let team_name = data.name.clone();
    enlist(caller, team, data, member).await?;
    Ok((team_name, leader_name, session_id))
}
