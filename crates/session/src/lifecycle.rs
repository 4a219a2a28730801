//! Opening, configuring, listing and deleting sessions: what
//! [`Sessions::create`], [`Sessions::update`], [`Sessions::list`] and
//! [`Sessions::delete`] do, for every door.

use oxiscope_agent::AgentState;
use oxiscope_permission::PermissionMode;
use oxiscope_storage::{SessionRecord, new_id, now};
use serde_json::Value;

use crate::api::{
    ChatModelConfig, CreateSessionRequest, ListMessagesResponse, SessionRecordView, SessionStatus,
    SessionView, UpdateSessionRequest, UsageView,
};
use crate::error::{SessionError, SessionResult};
use crate::handle::{SessionKey, Sessions};
use crate::spec::{AgentSpec, ModelSlot, SessionSpec};
use crate::{Engine, agent_state, check_session_cap, default_name, session_status, session_view};

/// The most messages one page of [`Sessions::messages`] holds.
pub const MAX_PAGE: u32 = 200;

/// Which page of a session's messages: the newest `limit` before
/// `before` (a message id), after skipping `offset`.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// Only messages before this one.
    pub before: Option<String>,
    /// How many of the newest to skip.
    pub offset: u32,
    /// How many (1 to [`MAX_PAGE`]).
    pub limit: u32,
}

impl Sessions {
    /// Opens a session of `owner` with `request`'s agent, or, when the
    /// user already has one for that agent and workspace, applies the
    /// request to it; either way, its id.
    ///
    /// # Errors
    /// [`SessionError::NotFound`] for another user's agent or credential,
    /// [`SessionError::Fields`] for a workspace id that is not safe as a
    /// directory name, [`SessionError::Forbidden`] for a permission mode
    /// the policy does not allow, [`SessionError::Limit`] when the user
    /// has as many sessions as the policy allows,
    /// [`SessionError::Conflict`] for a mode change while a run is active.
    pub async fn create(
        &self,
        owner: &str,
        request: CreateSessionRequest,
    ) -> SessionResult<String> {
        let state = self.engine();
        let agent = state
            .storage()
            .get_agent(owner, &request.agent_id)
            .await?
            .ok_or_else(|| agent_not_found(&request.agent_id))?;
        check_credential(state, owner, request.chat_model_config.as_ref()).await?;
        check_credential(state, owner, request.fallback_chat_model_config.as_ref()).await?;
        // The id a new session would get; per-session workspaces are named
        // after it.
        let id = new_id();
        let workspace_id = request.workspace_id.clone().unwrap_or_else(|| {
            state
                .workspaces()
                .assign_workspace_id(owner, &agent.id, &id)
        });
        check_workspace_id(&workspace_id)?;
        let policy = &state.config().policy;
        if let Some(mode) = request.permission_mode {
            policy.check_mode(mode)?;
        }
        let edit = Edit {
            name: request.name.clone(),
            cwd: None,
            chat: request.chat_model_config,
            fallback: request.fallback_chat_model_config,
            tts: request.tts_model_config,
            realtime: request.realtime_model_config,
            knowledge: request.knowledge_config,
        };
        let storage = state.storage();
        let existing = match storage
            .find_session(owner, &agent.id, &workspace_id)
            .await?
        {
            Some(existing) => existing,
            None => {
                // Without a name, the creation time until the first reply
                // names it.
                let mut config = SessionSpec::new(&workspace_id, request.name, default_name);
                edit.clone().apply(&mut config);
                // An agent stored with a mode the policy no longer allows
                // starts its sessions in `default`.
                let agent_mode = AgentSpec::of(&agent)
                    .permission_mode
                    .map(|m| policy.effective_mode(m));
                let mut agent_state = AgentState {
                    session_id: id.clone(),
                    ..AgentState::default()
                };
                agent_state.permission_context.mode =
                    request.permission_mode.or(agent_mode).unwrap_or_default();
                let stamp = now();
                let record = SessionRecord {
                    id: id.clone(),
                    user_id: owner.to_owned(),
                    agent_id: agent.id.clone(),
                    workspace_id: workspace_id.clone(),
                    created_at: stamp.clone(),
                    updated_at: stamp,
                    config: config.to_value(),
                    state: serde_json::to_value(&agent_state)
                        .map_err(|e| SessionError::Internal(e.to_string()))?,
                    revision: 0,
                };
                check_session_cap(state, owner).await?;
                match storage.create_session(&record).await {
                    Ok(()) => return Ok(id),
                    // Another request created it a moment ago: update that
                    // one, as if it had been found.
                    Err(oxiscope_storage::Error::AlreadyExists { .. }) => storage
                        .find_session(owner, &agent.id, &workspace_id)
                        .await?
                        .ok_or_else(|| {
                            SessionError::Internal("a clashing session vanished".to_owned())
                        })?,
                    Err(e) => return Err(e.into()),
                }
            }
        };
        let mut config = SessionSpec::of(&existing);
        edit.apply(&mut config);
        storage
            .update_session_config(owner, &existing.id, &config.to_value())
            .await?;
        let session_id = existing.id.clone();
        if let Some(mode) = request.permission_mode {
            set_permission_mode(state, existing, mode).await?;
        }
        Ok(session_id)
    }

    /// Applies `request` to the session: its name, working directory,
    /// models, knowledge, permission mode; the session as it is then.
    ///
    /// # Errors
    /// As [`Sessions::create`]; [`SessionError::Fields`] for a `cwd`
    /// outside the workspace.
    pub async fn update(
        &self,
        at: SessionKey<'_>,
        request: UpdateSessionRequest,
    ) -> SessionResult<SessionRecordView> {
        let state = self.engine();
        let session = self.load(at).await?;
        check_credential(state, at.owner, request.chat_model_config.as_ref()).await?;
        check_credential(state, at.owner, request.fallback_chat_model_config.as_ref()).await?;
        let edit = Edit {
            name: request.name,
            cwd: request.cwd.as_deref().map(check_cwd).transpose()?,
            chat: request.chat_model_config,
            fallback: request.fallback_chat_model_config,
            tts: request.tts_model_config,
            realtime: request.realtime_model_config,
            knowledge: request.knowledge_config,
        };
        if let Some(mode) = request.permission_mode {
            state.config().policy.check_mode(mode)?;
        }
        let mut config = SessionSpec::of(&session);
        edit.apply(&mut config);
        state
            .storage()
            .update_session_config(at.owner, at.session_id, &config.to_value())
            .await?;
        if let Some(mode) = request.permission_mode {
            set_permission_mode(state, self.load(at).await?, mode).await?;
        }
        let mut view = session_view(&self.load(at).await?);
        view.team_id = state
            .storage()
            .session_team(at.owner, at.session_id)
            .await?;
        Ok(view)
    }

    /// The owner's sessions with `agent_id`, with their status, team and
    /// usage.
    ///
    /// # Errors
    /// [`SessionError::NotFound`] for another user's agent; the store's
    /// failure.
    pub async fn list(&self, owner: &str, agent_id: &str) -> SessionResult<Vec<SessionView>> {
        let state = self.engine();
        state
            .storage()
            .get_agent(owner, agent_id)
            .await?
            .ok_or_else(|| agent_not_found(agent_id))?;
        let mut sessions = Vec::new();
        for session in state.storage().list_sessions(owner, agent_id).await? {
            let status = session_status(state, &session).await?;
            let usage = state.storage().session_usage(owner, &session.id).await?;
            let (team_id, team) = crate::team::session_team(state, owner, &session.id).await?;
            let mut record = session_view(&session);
            record.team_id = team_id;
            sessions.push(SessionView {
                session: record,
                is_running: status == SessionStatus::Running,
                status,
                team,
                usage: UsageView::from(&usage),
            });
        }
        Ok(sessions)
    }

    /// Deletes the session; a team it leads is dissolved, a team it
    /// belongs to loses it.
    ///
    /// # Errors
    /// [`SessionError::NotFound`] for another user's session,
    /// [`SessionError::Conflict`] while a run is active.
    pub async fn delete(&self, at: SessionKey<'_>) -> SessionResult<()> {
        let state = self.engine();
        let session = self.load(at).await?;
        if state.bus().is_locked(&session.id).await? {
            return Err(SessionError::Conflict(
                "A chat run is active for this session; interrupt it first.".to_owned(),
            ));
        }
        crate::team::session_deleting(state, at.owner, at.session_id).await?;
        state
            .storage()
            .delete_session(at.owner, at.session_id)
            .await?;
        crate::forget_session(state, at.session_id).await
    }

    /// A page of the session's messages, oldest first, with the cursor of
    /// its newest event (events after it are newer than the page).
    ///
    /// # Errors
    /// [`SessionError::Fields`] for a `limit` out of range,
    /// [`SessionError::NotFound`] for another user's session.
    pub async fn messages(
        &self,
        at: SessionKey<'_>,
        page: Page,
    ) -> SessionResult<ListMessagesResponse> {
        if !(1..=MAX_PAGE).contains(&page.limit) {
            return Err(SessionError::invalid(
                &["query", "limit"],
                format!("Input should be between 1 and {MAX_PAGE}"),
                "less_than_equal",
            ));
        }
        let state = self.engine();
        let session = self.load(at).await?;
        // The cursor first: events after it are newer than the page.
        let event_cursor = state.bus().last_cursor(&session.id).await?;
        let is_running = state.bus().is_locked(&session.id).await?;
        let found = state
            .storage()
            .list_messages(&session.id, page.before.as_deref(), page.offset, page.limit)
            .await?;
        // The page is the newest `limit` messages before `before`, drawn
        // oldest first as AgentScope returns them.
        Ok(ListMessagesResponse {
            messages: found.messages.into_iter().rev().map(|m| m.msg).collect(),
            event_cursor: event_cursor.map(|c| c.to_string()),
            is_running,
            has_more: found.has_more,
        })
    }

    /// The session's status.
    ///
    /// # Errors
    /// [`SessionError::NotFound`] for another user's session.
    pub async fn status(&self, at: SessionKey<'_>) -> SessionResult<SessionStatus> {
        let session = self.load(at).await?;
        session_status(self.engine(), &session).await
    }
}

/// The config fields a create or update request sets.
#[derive(Clone)]
struct Edit {
    name: Option<String>,
    cwd: Option<String>,
    chat: Option<ChatModelConfig>,
    fallback: Option<ChatModelConfig>,
    tts: Option<Value>,
    realtime: Option<Value>,
    knowledge: Option<Value>,
}

impl Edit {
    fn apply(self, config: &mut SessionSpec) {
        if let Some(name) = self.name {
            config.set_name(name);
        }
        if let Some(cwd) = self.cwd {
            config.set_cwd(Some(cwd));
        }
        if let Some(chat) = &self.chat {
            config.set_model(ModelSlot::Chat, chat);
        }
        if let Some(fallback) = &self.fallback {
            config.set_model(ModelSlot::Fallback, fallback);
        }
        if let Some(tts) = self.tts {
            config.set_tts(tts);
        }
        if let Some(realtime) = self.realtime {
            config.set_realtime(realtime);
        }
        if let Some(knowledge) = self.knowledge {
            config.set_knowledge(knowledge);
        }
    }
}

fn agent_not_found(id: &str) -> SessionError {
    SessionError::NotFound(format!("Agent {id} not found"))
}

/// A workspace id must be safe as a directory name.
fn check_workspace_id(id: &str) -> SessionResult<()> {
    oxiscope_workspace::validate_id("workspace id", id).map_err(|_| {
        SessionError::invalid(
            &["body", "workspace_id"],
            "workspace_id must be 1 to 64 letters, digits, '-' or '_'",
            "value_error",
        )
    })
}

async fn check_credential(
    state: &Engine,
    user: &str,
    config: Option<&ChatModelConfig>,
) -> SessionResult<()> {
    if let Some(config) = config {
        state
            .storage()
            .get_credential(user, &config.credential_id)
            .await?
            .ok_or_else(|| {
                SessionError::NotFound(format!("Credential {} not found", config.credential_id))
            })?;
    }
    Ok(())
}

/// A session's `cwd`: a directory inside its workspace, given relative to
/// the workspace (`src/app`) or under `/workspace`; stored relative.
fn check_cwd(cwd: &str) -> SessionResult<String> {
    let path = std::path::Path::new(cwd);
    let rel = path
        .strip_prefix(oxiscope_workspace::SANDBOX_ROOT)
        .unwrap_or(path);
    let mut parts = Vec::new();
    for component in rel.components() {
        match component {
            std::path::Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            std::path::Component::CurDir => {}
            _ => {
                return Err(SessionError::invalid(
                    &["body", "cwd"],
                    format!(
                        "cwd must be a directory inside the session's workspace, relative to it \
                         or under {}; {cwd:?} is not",
                        oxiscope_workspace::SANDBOX_ROOT
                    ),
                    "value_error",
                ));
            }
        }
    }
    Ok(parts.join("/"))
}

/// Writes a permission mode into the session's stored state.
async fn set_permission_mode(
    state: &Engine,
    session: SessionRecord,
    mode: PermissionMode,
) -> SessionResult<()> {
    if state.bus().is_locked(&session.id).await? {
        return Err(SessionError::Conflict(
            "The permission mode cannot change while a run is active.".to_owned(),
        ));
    }
    let mut current = agent_state(&session)?;
    current.permission_context.mode = mode;
    let snapshot =
        serde_json::to_value(&current).map_err(|e| SessionError::Internal(e.to_string()))?;
    match state
        .storage()
        .commit_reply(&session.id, session.revision, &snapshot, &[])
        .await
    {
        Err(oxiscope_storage::Error::StaleRevision { .. }) => Err(SessionError::Conflict(
            "The session changed meanwhile; retry.".to_owned(),
        )),
        other => other.map(|_| ()).map_err(SessionError::from),
    }
}

#[cfg(test)]
mod tests {
    use super::check_cwd;

    #[test]
    fn a_cwd_is_kept_inside_the_workspace() {
        assert_eq!(check_cwd("src/app").unwrap(), "src/app");
        assert_eq!(check_cwd("./src/./app").unwrap(), "src/app");
        assert_eq!(check_cwd("/workspace/src").unwrap(), "src");
        assert_eq!(check_cwd("").unwrap(), "");
        for bad in ["../etc", "src/../../x", "/etc/passwd"] {
            assert!(check_cwd(bad).is_err(), "{bad}");
        }
    }
}
