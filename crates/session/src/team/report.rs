//! Telling the leader about a member's failed turn: a member reports with
//! `TeamSay`, but a turn that failed or was interrupted never got there,
//! so the service sends the leader a team message in its stead.

use oxiscope_agent::Agent;
use oxiscope_message::{ReplyFinishedReason, Role};

use super::roster::team_hint;
use crate::Engine;
use crate::deliver::deliver_hint;

/// After a turn of `session_id` that did not complete (`failure` is the
/// run's error, if it failed outright): when the session is a team member
/// and its reply is not parked on the user, its leader gets a team
/// message saying so; a reply parked on a confirmation is shown on the
/// leader's stream instead. Failures to tell are logged, never raised.
pub async fn turn_not_completed(
    state: &Engine,
    user: &str,
    session_id: &str,
    agent: &Agent,
    failure: Option<String>,
) {
    let storage = state.storage();
    let team = match storage.session_team(user, session_id).await {
        Ok(Some(team_id)) => storage.get_team(user, &team_id).await,
        Ok(None) => return,
        Err(e) => Err(e),
    };
    let team = match team {
        Ok(Some(team)) if team.session_id != session_id => team,
        Ok(_) => return,
        Err(e) => {
            tracing::warn!(session_id, error = %e, "cannot read the member's team");
            return;
        }
    };
    let agent_state = agent.state().await;
    if agent_state.is_parked() {
        super::confirm::member_parked(state, &team, session_id, agent, &agent_state).await;
        return;
    }
    let reply = agent_state
        .context
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && m.finished_reason.is_some());
    let why = match (failure, reply) {
        (Some(error), _) => format!("it failed: {error}"),
        (None, Some(m)) => match m.finished_reason {
            Some(ReplyFinishedReason::Interrupted) => "it was interrupted".to_owned(),
            Some(ReplyFinishedReason::ExceedMaxIters) => {
                "it ran out of reasoning rounds".to_owned()
            }
            Some(ReplyFinishedReason::Error) => format!(
                "it failed: {}",
                m.error
                    .as_ref()
                    .map_or("an unknown error", |e| e.message.as_str())
            ),
            _ => return,
        },
        (None, None) => "it did not complete".to_owned(),
    };
    let name = agent.name().to_owned();
    let text = format!(
        "[notice from the service] {name}'s last turn ended before it reported: {why}. \
         Send it a new instruction with TeamSay, or carry on without it."
    );
    let hint = team_hint(&name, &text, "team");
    if let Err(e) = deliver_hint(state, user, &team.session_id, &name, hint).await {
        tracing::warn!(session_id, error = %e, "cannot tell the leader of a failed turn");
    }
}
