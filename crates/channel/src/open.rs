//! The session a route names: found by its key, or opened — in a
//! workspace of its own, with `origin: channel` and the channel's session
//! settings. Two replicas opening the same key at once end up in one
//! session: the first claim of the key wins.

use std::time::Duration;

use oxiscope_agent::AgentState;
use oxiscope_permission::PermissionMode;
use oxiscope_session::{Engine, SessionError, check_session_cap};
use oxiscope_storage::{ChannelSessionRecord, ChannelStore, SessionRecord, new_id, now};
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::inbound::Inbound;
use crate::routing::{Route, SessionScope};
use crate::settings::SessionSettings;

/// Who opens: the channel and its owner.
pub(crate) struct Opener<'a> {
    pub(crate) engine: &'a Engine,
    pub(crate) store: &'a dyn ChannelStore,
    pub(crate) channel_id: &'a str,
    pub(crate) owner: &'a str,
    pub(crate) platform: &'a str,
    pub(crate) settings: &'a SessionSettings,
}

impl Opener<'_> {
    /// The session of `route` for `message`, opened when the key has none.
    ///
    /// # Errors
    /// The store's failure; [`SessionError::Limit`] when the owner keeps as
    /// many sessions as the policy allows.
    pub(crate) async fn session(&self, route: &Route, message: &Inbound) -> Result<SessionRecord> {
        // A claim another replica has not stored the session of yet is
        // waited for briefly; a key whose session was deleted is claimed
        // again.
        for attempt in 0..50 {
            let claim = ChannelSessionRecord {
                channel_id: self.channel_id.to_owned(),
                session_key: route.session_key.clone(),
                session_id: new_id(),
                user_id: self.owner.to_owned(),
                agent_id: route.agent_id.clone(),
                chat_id: message.chat_id.clone(),
                created_at: now(),
            };
            let held = self.store.claim_channel_session(&claim).await?;
            if held.session_id == claim.session_id {
                return self.open(&held, route, message).await;
            }
            let storage = self.engine.storage();
            if let Some(session) = storage.get_session(self.owner, &held.session_id).await? {
                return Ok(session);
            }
            // Stored times are the store's local `now()`.
            let age =
                chrono::NaiveDateTime::parse_from_str(&held.created_at, "%Y-%m-%dT%H:%M:%S%.f")
                    .map(|t| chrono::Local::now().naive_local().signed_duration_since(t))
                    .unwrap_or_default();
            if age > chrono::Duration::seconds(2) || attempt >= 25 {
                self.store
                    .release_channel_session(self.channel_id, &route.session_key)
                    .await?;
            } else {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        Err(Error::Storage(format!(
            "the session of {} could not be claimed",
            route.session_key
        )))
    }

    async fn open(
        &self,
        claim: &ChannelSessionRecord,
        route: &Route,
        message: &Inbound,
    ) -> Result<SessionRecord> {
        let opened = async {
            check_session_cap(self.engine, self.owner).await?;
            let session = self.record(claim, route, message)?;
            self.engine.storage().create_session(&session).await?;
            Ok::<_, Error>(session)
        }
        .await;
        if opened.is_err() {
            // Leave the key free for the next message.
            self.store
                .release_channel_session(self.channel_id, &claim.session_key)
                .await?;
        }
        if let Ok(session) = &opened {
            tracing::info!(
                channel_id = self.channel_id,
                session_id = session.id,
                chat_id = message.chat_id,
                "a channel opened a session"
            );
        }
        opened
    }

    fn record(
        &self,
        claim: &ChannelSessionRecord,
        route: &Route,
        message: &Inbound,
    ) -> Result<SessionRecord> {
        let id = claim.session_id.clone();
        let name = match &message.chat_name {
            Some(name) => format!("{} · {name}", self.platform),
            None => format!(
                "{} · {}",
                self.platform,
                message.sender.name.as_deref().unwrap_or(&message.chat_id)
            ),
        };
        let per_user = route.scope == SessionScope::PerChatUser;
        let mut config = Map::new();
        config.insert("workspace_id".into(), id.clone().into());
        config.insert("name".into(), name.into());
        config.insert("naming".into(), json!({"auto": false}));
        config.insert("cwd".into(), Value::Null);
        config.insert(
            "chat_model_config".into(),
            Value::Object(self.settings.chat_model_config.clone()),
        );
        config.insert(
            "fallback_chat_model_config".into(),
            self.settings
                .fallback_chat_model_config
                .clone()
                .map_or(Value::Null, Value::Object),
        );
        for key in [
            "tts_model_config",
            "realtime_model_config",
            "knowledge_config",
        ] {
            config.insert(key.into(), Value::Null);
        }
        config.insert(
            "origin".into(),
            json!({
                "type": "channel",
                "channel_id": self.channel_id,
                "chat_id": message.chat_id,
                "chat_name": message.chat_name,
                "channel_user_id": per_user.then_some(&message.sender.id),
            }),
        );
        let mode = serde_json::from_value::<PermissionMode>(json!(self.settings.permission_mode))
            .unwrap_or_default();
        let mut state = AgentState {
            session_id: id.clone(),
            ..AgentState::default()
        };
        state.permission_context.mode = self.engine.config().policy.effective_mode(mode);
        let stamp = now();
        Ok(SessionRecord {
            id: id.clone(),
            user_id: self.owner.to_owned(),
            agent_id: route.agent_id.clone(),
            workspace_id: id,
            created_at: stamp.clone(),
            updated_at: stamp,
            config: Value::Object(config),
            state: serde_json::to_value(&state)
                .map_err(|e| SessionError::Internal(e.to_string()))?,
            revision: 0,
        })
    }
}
