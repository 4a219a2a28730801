//! [`Sessions`]: the one way into sessions. Every door — the HTTP routes
//! today, IM channels and realtime voice next — submits inputs,
//! interrupts and subscribes through it, so each door only translates.

use oxiscope_agent::otel::SpanContext;
use oxiscope_storage::{AgentRecord, Cursor, EventStream, SessionRecord};
use serde_json::Value;

use crate::Engine;
use crate::error::{SessionError, SessionResult};
use crate::input::{ChatInput, check_media, parse_input};
use crate::run::{RunRequest, Submitted, interrupt, start_run};
use crate::sessions::{agent_state, load_session};
use crate::team::{self, AnsweredOn};
use crate::usage::check_quota;

/// A session as a door names it: its owner, its agent and its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionKey<'a> {
    /// The user the session belongs to (another user's session is not
    /// found).
    pub owner: &'a str,
    /// The agent of the session.
    pub agent_id: &'a str,
    /// The session.
    pub session_id: &'a str,
}

/// Inputs, interruptions and event streams of sessions. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Sessions {
    engine: Engine,
}

impl Engine {
    /// The handle every door goes through.
    #[must_use]
    pub fn sessions(&self) -> Sessions {
        Sessions {
            engine: self.clone(),
        }
    }
}

impl Sessions {
    /// Submits `input` (AgentScope's chat input: a message, a list of
    /// messages, a confirmation or external-execution result, an
    /// interrupt, or `None` to go on): a run starts in the background, or,
    /// for a result answering a parked reply while a run is active, the
    /// input waits in the session's inbox. The reply's events reach
    /// [`Sessions::subscribe`]rs.
    ///
    /// A confirmation posted to a team leader's session that names the
    /// parked reply of one of its members answers that member (see
    /// [`crate::team::parked_member`]); the leader's stream then shows
    /// `team_confirmation_answered`.
    ///
    /// `trace` parents the run's spans when tracing is on.
    ///
    /// # Errors
    /// [`SessionError::Fields`] for an input that is none of those (or
    /// media the session's models may not read), [`SessionError::NotFound`]
    /// for another user's session or agent, [`SessionError::Limit`] when
    /// the user's token quota is spent, the inbox is full or the user runs
    /// as many chats as the policy allows, [`SessionError::Forbidden`] for
    /// a confirmation rule the policy does not allow,
    /// [`SessionError::Conflict`] when a run is active for new messages or
    /// nothing is parked for a result, [`SessionError::Invalid`] for a
    /// result that names another reply or a model that cannot be built.
    pub async fn submit(
        &self,
        at: SessionKey<'_>,
        input: Option<Value>,
        trace: Option<SpanContext>,
    ) -> SessionResult<Submitted> {
        let state = &self.engine;
        let parsed = parse_input(input)?;
        let session = load_session(state, at.owner, at.session_id, at.agent_id).await?;
        // A team leader's user answers a member's confirmation on the
        // leader's session: one naming a member's parked reply goes to it.
        if let ChatInput::Confirm(event) = &parsed
            && agent_state(&session)?.reply_context.reply_id != event.reply_id
            && let Some((agent_id, session_id)) =
                team::parked_member(state, at.owner, &session.id, &event.reply_id).await?
        {
            let member = load_session(state, at.owner, &session_id, &agent_id).await?;
            let to = SessionKey {
                owner: at.owner,
                agent_id: &agent_id,
                session_id: &session_id,
            };
            return self
                .submit_parsed(to, member, parsed, trace, AnsweredOn::Leader)
                .await;
        }
        self.submit_parsed(at, session, parsed, trace, AnsweredOn::Member)
            .await
    }

    /// [`Sessions::submit`] of `parsed` to `session` (the one `at` names);
    /// `on` says where a confirmation was posted.
    async fn submit_parsed(
        &self,
        at: SessionKey<'_>,
        session: SessionRecord,
        parsed: ChatInput,
        trace: Option<SpanContext>,
        on: AnsweredOn,
    ) -> SessionResult<Submitted> {
        let state = &self.engine;
        check_media(state, &session, &parsed).await?;
        check_quota(state, at.owner).await?;
        let answer = match &parsed {
            ChatInput::Confirm(event) => {
                state
                    .config()
                    .policy
                    .check_confirm(&agent_state(&session)?, event)?;
                Some(event.clone())
            }
            _ => None,
        };
        let agent = self.agent(at).await?;
        let request = RunRequest::Chat(Box::new(parsed), trace);
        let submitted = start_run(state, &agent, session, request).await?;
        if let Some(answer) = answer {
            team::confirmation_answered(state, at.owner, at.agent_id, at.session_id, &answer, on)
                .await;
        }
        Ok(submitted)
    }

    /// Interrupts the session: cancels its running reply (and its
    /// background tool calls), or closes a reply parked on a confirmation
    /// or an external result. Nothing happens when it is idle.
    ///
    /// # Errors
    /// [`SessionError::NotFound`] for another user's session or agent; as
    /// [`Sessions::submit`] when closing a parked reply fails.
    pub async fn interrupt(&self, at: SessionKey<'_>) -> SessionResult<()> {
        let session = self.load(at).await?;
        let agent = self.agent(at).await?;
        interrupt(&self.engine, &agent, session).await
    }

    /// The session's events after `after` (from the oldest the replay log
    /// keeps when `None`), then live ones, on whichever replica they are
    /// published; the stream ends when the session is deleted.
    ///
    /// # Errors
    /// [`SessionError::NotFound`] for another user's session; the bus's
    /// failure.
    pub async fn subscribe(
        &self,
        at: SessionKey<'_>,
        after: Option<Cursor>,
    ) -> SessionResult<EventStream> {
        let session = self.load(at).await?;
        Ok(self.engine.bus().subscribe(&session.id, after).await?)
    }

    /// The caller's session, or [`SessionError::NotFound`].
    ///
    /// # Errors
    /// Another user's session, a session of another agent, or none.
    pub async fn load(&self, at: SessionKey<'_>) -> SessionResult<SessionRecord> {
        load_session(&self.engine, at.owner, at.session_id, at.agent_id).await
    }

    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    async fn agent(&self, at: SessionKey<'_>) -> SessionResult<AgentRecord> {
        self.engine
            .storage()
            .get_agent(at.owner, at.agent_id)
            .await?
            .ok_or_else(|| SessionError::NotFound(format!("Agent {} not found", at.agent_id)))
    }
}
