//! The runtime of one channel on one replica: every inbound message is
//! taken once (by its platform id, across replicas), routed, put into its
//! session through [`Sessions`](oxiscope_session::Sessions) — or queued
//! with [`Origin::Channel`] while a run is active — and its reply is sent
//! back by the session's [pump](crate::pump).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use oxiscope_agent::Awaiting;
use oxiscope_message::{Role, ToolCallState};
use oxiscope_session::inbox::{Origin, Queued};
use oxiscope_session::{
    Engine, SessionError, SessionKey, agent_state, check_media, check_quota, parse_input, queue,
};
use oxiscope_storage::{ChannelChatRecord, ChannelRecord, ChannelStore, SessionRecord, now};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::channel::{Channel, Handled, InboundSink, StatusCell};
use crate::context::{decision, sender_of, user_message};
use crate::error::{Error, Result};
use crate::inbound::{ChatKind, Inbound};
use crate::open::Opener;
use crate::pump::Pumps;
use crate::settings::ChannelData;

/// One channel's door into the engine (see the module docs).
#[derive(Debug)]
pub struct ChannelRuntime {
    engine: Engine,
    record: ChannelRecord,
    data: ChannelData,
    channel: Arc<dyn Channel>,
    pumps: Pumps,
}

impl ChannelRuntime {
    /// The runtime of `record` over its open `channel`; `stop` ends its
    /// reply pumps.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the record's data is not a channel's, or
    /// its routing is not total; [`Error::Storage`] when the engine's
    /// store keeps no channels.
    pub fn new(
        engine: Engine,
        record: ChannelRecord,
        channel: Arc<dyn Channel>,
        stop: CancellationToken,
    ) -> Result<Self> {
        let data = ChannelData::from_value(&record.data)?;
        data.routing.validate()?;
        store_of(&engine)?;
        let pumps = Pumps {
            engine: engine.clone(),
            channel: channel.clone(),
            channel_id: record.id.clone(),
            config: data.common(),
            status: StatusCell::default(),
            stop,
            running: Arc::new(Mutex::new(HashSet::new())),
        };
        Ok(Self {
            engine,
            record,
            data,
            channel,
            pumps,
        })
    }

    /// The channel it serves.
    #[must_use]
    pub fn channel(&self) -> &Arc<dyn Channel> {
        &self.channel
    }

    /// The last delivery error of its pumps (empty when none).
    #[must_use]
    pub fn delivery_error(&self) -> String {
        self.pumps.status.get().last_error
    }

    fn store(&self) -> Result<&dyn ChannelStore> {
        store_of(&self.engine)
    }

    /// Handles one message; see [`InboundSink::handle`].
    ///
    /// # Errors
    /// What stopped it; the chat is told when the engine refused.
    async fn take(&self, message: Inbound) -> Result<Handled> {
        let common = self.data.common();
        if message.kind == ChatKind::Group && common.only_at_reply && !message.mentions_bot {
            return Ok(Handled::Ignored);
        }
        let store = self.store()?;
        if !store
            .take_inbound(&self.record.id, &message.message_id, &now())
            .await?
        {
            return Ok(Handled::Duplicate);
        }
        store
            .record_channel_chat(&ChannelChatRecord {
                channel_id: self.record.id.clone(),
                chat_id: message.chat_id.clone(),
                name: message.chat_name.clone().unwrap_or_default(),
                chat_type: message.chat_type.clone(),
                last_seen: now(),
            })
            .await?;
        let Some(route) = self.data.routing.route(&message) else {
            return Err(Error::Invalid("the routing has no catch-all rule".into()));
        };
        let opener = Opener {
            engine: &self.engine,
            store,
            channel_id: &self.record.id,
            owner: &self.record.user_id,
            platform: &self.record.channel_type,
            settings: &self.data.session,
        };
        let session = opener.session(&route, &message).await?;
        self.pumps.ensure(&session.id, &message.chat_id).await;
        if let Some(answer) = confirmation(&session, &message)? {
            self.submit(&session, answer).await?;
            return Ok(Handled::Answered {
                session_id: session.id,
            });
        }
        let input = user_message(&self.record.channel_type, &self.record.id, &message);
        self.submit(&session, input).await?;
        Ok(Handled::Submitted {
            session_id: session.id,
        })
    }

    /// Submits `input`; new messages for a session that is running wait
    /// in its inbox, from the channel.
    async fn submit(&self, session: &SessionRecord, input: Value) -> Result<()> {
        let at = SessionKey {
            owner: &session.user_id,
            agent_id: &session.agent_id,
            session_id: &session.id,
        };
        let sessions = self.engine.sessions();
        match sessions.submit(at, Some(input.clone()), None).await {
            Ok(_) => Ok(()),
            Err(SessionError::Conflict(_)) if input.get("role").is_some() => {
                let parsed = parse_input(Some(input))?;
                check_media(&self.engine, session, &parsed).await?;
                check_quota(&self.engine, &session.user_id).await?;
                let agent = self
                    .engine
                    .storage()
                    .get_agent(&session.user_id, &session.agent_id)
                    .await?
                    .ok_or_else(|| {
                        SessionError::NotFound(format!("Agent {} not found", session.agent_id))
                    })?;
                queue(
                    &self.engine,
                    &agent,
                    session,
                    &Queued::new(Origin::Channel, parsed),
                )
                .await?;
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn refuse(&self, chat_id: &str, why: &str) {
        let text = format!("This message could not be handled: {why}");
        if let Err(e) = self.channel.send(chat_id, &text).await {
            tracing::warn!(channel_id = self.record.id, chat_id, error = %e,
                "a refusal could not be sent");
        }
    }
}

impl InboundSink for ChannelRuntime {
    fn handle(&self, message: Inbound) -> BoxFuture<'_, Handled> {
        Box::pin(async move {
            let chat_id = message.chat_id.clone();
            match self.take(message).await {
                Ok(handled) => handled,
                Err(e) => {
                    tracing::warn!(channel_id = self.record.id, chat_id, error = %e,
                        "an inbound message was refused");
                    let why = match &e {
                        Error::Session(
                            SessionError::Limit(m)
                            | SessionError::Forbidden(m)
                            | SessionError::NotFound(m)
                            | SessionError::Invalid(m),
                        ) => m.clone(),
                        Error::Session(SessionError::Fields(_)) => {
                            "the message holds content the agent's model cannot read".into()
                        }
                        _ => "the service failed; try again later".into(),
                    };
                    self.refuse(&chat_id, &why).await;
                    Handled::Refused(e.to_string())
                }
            }
        })
    }
}

/// The confirmation a typed "approve" or "deny" answers: the calls the
/// session's parked reply asks about, from the session's state (never
/// from the chat), when the answer comes from the user whose message
/// started that reply.
fn confirmation(session: &SessionRecord, message: &Inbound) -> Result<Option<Value>> {
    let Some(approved) = decision(&message.text) else {
        return Ok(None);
    };
    let state = agent_state(session)?;
    if state.awaiting() != Some(Awaiting::Permission) {
        return Ok(None);
    }
    let asker = state
        .context
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .and_then(sender_of);
    if asker.as_deref() != Some(message.sender.id.as_str()) {
        return Ok(None);
    }
    let results: Vec<Value> = state
        .pending_tool_calls()
        .into_iter()
        .filter(|c| c.state == ToolCallState::Asking)
        .map(|call| json!({"confirmed": approved, "tool_call": call}))
        .collect();
    Ok(Some(json!({
        "type": "USER_CONFIRM_RESULT",
        "reply_id": state.reply_context.reply_id,
        "confirm_results": results,
    })))
}

/// The engine's channel store.
///
/// # Errors
/// [`Error::Storage`] when its storage backend keeps no channels.
pub(crate) fn store_of(engine: &Engine) -> Result<&dyn ChannelStore> {
    engine
        .storage()
        .channels()
        .ok_or_else(|| Error::Storage("this storage backend keeps no channels".into()))
}
