//! A team's roster: the `data` document of a [`TeamRecord`], the caller's
//! team and role, the name directory `TeamSay` routes by, and dissolving.

use oxiscope_message::HintBlock;
use oxiscope_storage::TeamRecord;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::Engine;
use crate::error::SessionError;
use crate::lease;

/// How many characters of an agent id tell invited members apart
/// (`"<name>@<handle>"`).
pub(super) const HANDLE_LEN: usize = 8;

/// Why a team tool refused or failed; the tool turns it into an error
/// result the model reads.
#[derive(Debug, thiserror::Error)]
pub(super) enum TeamError {
    /// A precondition the caller can act on.
    #[error("{0}")]
    Refused(String),
    /// The store failed.
    #[error("the store failed: {0}")]
    Storage(#[from] oxiscope_storage::Error),
    /// A service step failed (delivery, quota).
    #[error("{0}")]
    Service(#[from] SessionError),
    /// A stored document does not have the expected shape.
    #[error("the team record is malformed: {0}")]
    Malformed(#[from] serde_json::Error),
}

/// The outcome of a team operation.
pub(super) type TeamResult<T> = Result<T, TeamError>;

/// A refusal with `text`.
pub(super) fn refuse<T>(text: impl Into<String>) -> TeamResult<T> {
    Err(TeamError::Refused(text.into()))
}

/// One entry of a team's roster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct TeamMember {
    /// Who owns the member's agent definition.
    pub(super) owner_id: String,
    /// The member's agent.
    pub(super) agent_id: String,
    /// The member's team-scoped session.
    pub(super) session_id: String,
    /// `created` (spawned by `AgentCreate`, deleted with the team) or
    /// `invited` (borrowed by `AgentInvite`; only its session goes).
    pub(super) role: String,
}

/// The `data` document of a team (AgentScope's `TeamData`); unknown keys
/// are kept.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct TeamData {
    /// The display name.
    pub(super) name: String,
    /// The team's purpose.
    #[serde(default)]
    pub(super) description: String,
    /// The worker agent ids (AgentScope's legacy roster, kept in step).
    #[serde(default)]
    pub(super) member_ids: Vec<String>,
    /// The roster.
    #[serde(default)]
    pub(super) members: Vec<TeamMember>,
    /// Anything else.
    #[serde(flatten)]
    pub(super) extra: Map<String, Value>,
}

impl TeamData {
    /// The document of `team`.
    pub(super) fn of(team: &TeamRecord) -> TeamResult<Self> {
        Ok(serde_json::from_value(team.data.clone())?)
    }
}

/// Who calls a team tool: the request-scoped ids the tools are built with.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    /// The service.
    pub(super) state: Engine,
    /// The session's owner.
    pub(super) user_id: String,
    /// The calling session.
    pub(super) session_id: String,
    /// The calling session's agent.
    pub(super) agent_id: String,
}

impl Caller {
    /// The team this session takes part in, read fresh (a `TeamCreate`
    /// earlier in the same reply counts).
    pub(super) async fn team(&self) -> TeamResult<TeamRecord> {
        let storage = self.state.storage();
        let Some(team_id) = storage
            .session_team(&self.user_id, &self.session_id)
            .await?
        else {
            return refuse("this session is not in any team; call TeamCreate first.");
        };
        match storage.get_team(&self.user_id, &team_id).await? {
            Some(team) => Ok(team),
            None => refuse(format!("team {team_id} no longer exists.")),
        }
    }

    /// The team this session leads; `what` is what only a leader may do.
    pub(super) async fn led_team(&self, what: &str) -> TeamResult<TeamRecord> {
        let team = self.team().await?;
        if team.session_id != self.session_id {
            return refuse(format!(
                "only the team leader can {what}; this session is a worker."
            ));
        }
        Ok(team)
    }

    /// The display name of an agent (its id when the record is gone).
    pub(super) async fn agent_name(&self, owner: &str, agent_id: &str) -> TeamResult<String> {
        Ok(self
            .state
            .storage()
            .get_agent(owner, agent_id)
            .await?
            .and_then(|a| crate::spec::AgentSpec::of(&a).name)
            .unwrap_or_else(|| agent_id.to_owned()))
    }

    /// The leader's display name.
    pub(super) async fn leader_name(&self, team: &TeamRecord) -> TeamResult<String> {
        let agent_id = match &team.leader_agent_id {
            Some(id) => id.clone(),
            None => match self
                .state
                .storage()
                .get_session(&self.user_id, &team.session_id)
                .await?
            {
                Some(s) => s.agent_id,
                None => return refuse(format!("the leader of team {} is gone.", team.id)),
            },
        };
        self.agent_name(&self.user_id, &agent_id).await
    }

    /// Every member by the name `TeamSay` addresses it with: the leader by
    /// its agent's name, created members by theirs, invited members as
    /// `"<name>@<handle>"`. Each entry is `(name, session id)`.
    pub(super) async fn directory(
        &self,
        team: &TeamRecord,
        data: &TeamData,
    ) -> TeamResult<Vec<(String, String)>> {
        let mut out = vec![(self.leader_name(team).await?, team.session_id.clone())];
        for member in &data.members {
            let name = self.agent_name(&member.owner_id, &member.agent_id).await?;
            let display = if member.role == "invited" {
                format!("{name}@{}", handle(&member.agent_id))
            } else {
                name
            };
            out.push((display, member.session_id.clone()));
        }
        Ok(out)
    }

    /// Writes `data` back into `team`.
    pub(super) async fn save(&self, team: &mut TeamRecord, data: &TeamData) -> TeamResult<()> {
        team.data = serde_json::to_value(data)?;
        team.updated_at = oxiscope_storage::now();
        self.state.storage().update_team(team).await?;
        Ok(())
    }
}

/// Runs `work` holding the roster lease of team `team_id`. Every change of
/// a roster (a member joining or leaving, the team dissolving) is a
/// read-modify-write of the team record done under it, so two changes
/// (on any replicas) never overwrite each other; `work` reads the team
/// itself, fresh.
///
/// # Errors
/// 409 when the lease stays held; `work`'s error.
pub(super) async fn locked<T, E: From<SessionError>>(
    state: &Engine,
    team_id: &str,
    work: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, E> {
    let busy = "The team is busy with another change; try again.";
    lease::under(state, &format!("team:{team_id}"), busy, work).await
}

/// The routing handle of an agent id.
pub(super) fn handle(agent_id: &str) -> &str {
    agent_id.get(..HANDLE_LEN).unwrap_or(agent_id)
}

/// A team message from `sender`, framed so the recipient's model tells it
/// from a user turn; `label` names the kind for a UI.
pub(super) fn team_hint(sender: &str, text: &str, label: &str) -> HintBlock {
    HintBlock::new(
        format!("<team-message from=\"{sender}\">\n{text}\n</team-message>"),
        Some(json!({"label": label, "sublabel": sender}).to_string()),
    )
}

/// Dissolves `team` of `user`: members created for it lose their agent
/// and session, invited members their borrowed session only (their agent
/// stays); every such session's run is stopped and its bus state dropped.
/// The leader's session stays, out of the team.
///
/// # Errors
/// The store's or the bus's failure (members handled so far stay gone).
pub(crate) async fn dissolve(
    state: &Engine,
    user: &str,
    team_id: &str,
) -> Result<(), SessionError> {
    locked(state, team_id, async {
        match state.storage().get_team(user, team_id).await? {
            Some(team) => dissolve_held(state, user, &team).await,
            None => Ok(()),
        }
    })
    .await
}

/// [`dissolve`], the roster lease held.
pub(super) async fn dissolve_held(
    state: &Engine,
    user: &str,
    team: &TeamRecord,
) -> Result<(), SessionError> {
    let data: TeamData = serde_json::from_value(team.data.clone()).unwrap_or_default();
    let storage = state.storage();
    for member in &data.members {
        // Out of the team first, so the stopped run does not report to
        // the leader as a failed member turn.
        storage
            .set_session_team(user, &member.session_id, None)
            .await?;
        crate::forget_session(state, &member.session_id).await?;
        if member.role == "created" {
            storage.delete_agent(user, &member.agent_id).await?;
        } else {
            storage.delete_session(user, &member.session_id).await?;
        }
    }
    storage.delete_team(user, &team.id).await?;
    Ok(())
}
