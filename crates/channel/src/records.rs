//! Channel records: created, read, edited and deleted for their owner,
//! credentials sealed at rest (never shown again), data checked once at
//! the door.

use oxiscope_permission::PermissionMode;
use oxiscope_session::{Engine, Purpose};
use oxiscope_storage::{ChannelRecord, new_id, now};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::channel::ChannelSpec;
use crate::error::{Error, Result};
use crate::registry::Registry;
use crate::routing::Routing;
use crate::runtime::store_of;
use crate::settings::{ChannelData, SessionSettings};

/// What creating a channel takes (AgentScope's `CreateChannelRequest`,
/// with the credentials already resolved).
#[derive(Debug, Clone)]
pub struct NewChannel {
    /// The type id.
    pub channel_type: String,
    /// A display name.
    pub name: Option<String>,
    /// The platform credentials.
    pub credentials: Value,
    /// Non-secret platform options.
    pub platform_config: Map<String, Value>,
    /// The routing rules.
    pub routing: Routing,
    /// The sessions' settings.
    pub session: SessionSettings,
    /// Start it enabled.
    pub enabled: bool,
}

/// What editing a channel changes (AgentScope's `UpdateChannelRequest`:
/// the type and credentials do not change); `None` keeps a field.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(rename = "UpdateChannelRequest")]
pub struct ChannelUpdate {
    /// A new display name.
    pub name: Option<String>,
    /// New platform options.
    pub platform_config: Option<Map<String, Value>>,
    /// New routing rules.
    pub routing: Option<Routing>,
    /// New session settings.
    pub session: Option<SessionSettings>,
    /// Enable or disable.
    pub enabled: Option<bool>,
}

/// A channel as its owner sees it (AgentScope's `ChannelResponse`): no
/// credentials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "ChannelResponse")]
pub struct ChannelView {
    /// The channel id.
    pub id: String,
    /// The type id.
    pub channel_type: String,
    /// The display name.
    pub name: Option<String>,
    /// The owner.
    pub user_id: String,
    /// The bot's platform id.
    pub platform_bot_id: String,
    /// Whether it runs.
    pub enabled: bool,
    /// Non-secret platform options.
    pub platform_config: Map<String, Value>,
    /// The routing rules.
    pub routing: Routing,
    /// The sessions' settings.
    pub session: SessionSettings,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}

impl ChannelView {
    /// The view of a stored record.
    ///
    /// # Errors
    /// [`Error::Invalid`] when its data is not a channel's.
    pub fn of(record: &ChannelRecord) -> Result<Self> {
        let data = ChannelData::from_value(&record.data)?;
        Ok(Self {
            id: record.id.clone(),
            channel_type: record.channel_type.clone(),
            name: record.name.clone(),
            user_id: record.user_id.clone(),
            platform_bot_id: record.platform_bot_id.clone(),
            enabled: record.enabled,
            platform_config: data.platform_config,
            routing: data.routing,
            session: data.session,
            created_at: record.created_at.clone(),
            updated_at: record.updated_at.clone(),
        })
    }
}

/// The owner-scoped records of channels.
#[derive(Debug, Clone)]
pub struct Channels {
    engine: Engine,
    registry: Registry,
}

impl Channels {
    /// Records over `engine`'s store, for the types of `registry`.
    #[must_use]
    pub fn new(engine: Engine, registry: Registry) -> Self {
        Self { engine, registry }
    }

    /// The accepted types.
    #[must_use]
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Creates a channel of `owner`.
    ///
    /// # Errors
    /// [`Error::UnknownType`]; [`Error::Invalid`] for credentials or config
    /// the type refuses, routing that is not total, or a rule naming an
    /// agent the owner does not have; the store's failure.
    pub async fn create(&self, owner: &str, new: NewChannel) -> Result<ChannelRecord> {
        let kind = self.registry.get(&new.channel_type)?;
        let platform_bot_id = kind.platform_bot_id(&new.credentials)?;
        let data = ChannelData {
            platform_config: new.platform_config,
            routing: new.routing,
            session: new.session,
        };
        self.check(owner, &data).await?;
        let id = new_id();
        // Opening checks the credentials and config against the type.
        kind.open(ChannelSpec {
            id: id.clone(),
            credentials: new.credentials.clone(),
            config: Value::Object(data.platform_config.clone()),
        })?;
        let stamp = now();
        let record = ChannelRecord {
            id,
            user_id: owner.to_owned(),
            channel_type: new.channel_type,
            name: new.name,
            platform_bot_id,
            enabled: new.enabled,
            sealed_credentials: self.seal(&new.credentials)?,
            data: data.to_value()?,
            created_at: stamp.clone(),
            updated_at: stamp,
        };
        store_of(&self.engine)?.create_channel(&record).await?;
        Ok(record)
    }

    /// One of `owner`'s channels.
    ///
    /// # Errors
    /// The store's failure.
    pub async fn get(&self, owner: &str, id: &str) -> Result<Option<ChannelRecord>> {
        Ok(store_of(&self.engine)?.get_channel(owner, id).await?)
    }

    /// `owner`'s channels, oldest first.
    ///
    /// # Errors
    /// The store's failure.
    pub async fn list(&self, owner: &str) -> Result<Vec<ChannelRecord>> {
        Ok(store_of(&self.engine)?.list_channels(owner).await?)
    }

    /// Applies `update` to one of `owner`'s channels; `None` when there is
    /// no such channel.
    ///
    /// # Errors
    /// As [`Channels::create`] for the new data; the store's failure.
    pub async fn update(
        &self,
        owner: &str,
        id: &str,
        update: ChannelUpdate,
    ) -> Result<Option<ChannelRecord>> {
        let store = store_of(&self.engine)?;
        let Some(mut record) = store.get_channel(owner, id).await? else {
            return Ok(None);
        };
        let mut data = ChannelData::from_value(&record.data)?;
        if let Some(config) = update.platform_config {
            data.platform_config = config;
        }
        if let Some(routing) = update.routing {
            data.routing = routing;
        }
        if let Some(session) = update.session {
            data.session = session;
        }
        self.check(owner, &data).await?;
        if update.name.is_some() {
            record.name = update.name;
        }
        if let Some(enabled) = update.enabled {
            record.enabled = enabled;
        }
        let kind = self.registry.get(&record.channel_type)?;
        kind.open(ChannelSpec {
            id: record.id.clone(),
            credentials: self.credentials(&record)?,
            config: Value::Object(data.platform_config.clone()),
        })?;
        record.data = data.to_value()?;
        record.updated_at = now();
        store.update_channel(&record).await?;
        Ok(Some(record))
    }

    /// Deletes one of `owner`'s channels; `false` when there was none.
    /// The sessions it opened stay.
    ///
    /// # Errors
    /// The store's failure.
    pub async fn delete(&self, owner: &str, id: &str) -> Result<bool> {
        Ok(store_of(&self.engine)?.delete_channel(owner, id).await?)
    }

    /// The unsealed credentials of a record.
    ///
    /// # Errors
    /// [`Error::Invalid`] when they cannot be opened (another key).
    pub fn credentials(&self, record: &ChannelRecord) -> Result<Value> {
        let plain = self
            .engine
            .sealer()
            .open(Purpose::Channel, &record.sealed_credentials)
            .map_err(|e| Error::Invalid(format!("channel {}: {e}", record.id)))?;
        serde_json::from_slice(&plain)
            .map_err(|e| Error::Invalid(format!("channel {}: {e}", record.id)))
    }

    fn seal(&self, credentials: &Value) -> Result<String> {
        self.engine
            .sealer()
            .seal(Purpose::Channel, credentials.to_string().as_bytes())
            .map_err(|e| Error::Invalid(e.to_string()))
    }

    async fn check(&self, owner: &str, data: &ChannelData) -> Result<()> {
        data.routing.validate()?;
        let mode = serde_json::from_value::<PermissionMode>(Value::from(
            data.session.permission_mode.clone(),
        ))
        .map_err(|_| {
            Error::Invalid(format!(
                "unknown permission mode {:?}",
                data.session.permission_mode
            ))
        })?;
        if self.engine.config().policy.effective_mode(mode) != mode {
            return Err(Error::Invalid(format!(
                "the permission mode {:?} is not allowed on this server",
                data.session.permission_mode
            )));
        }
        let models = [
            Some(&data.session.chat_model_config),
            data.session.fallback_chat_model_config.as_ref(),
        ];
        for config in models.into_iter().flatten() {
            let Some(id) = config.get("credential_id").and_then(Value::as_str) else {
                return Err(Error::Invalid(
                    "session.chat_model_config needs a credential_id".into(),
                ));
            };
            if self
                .engine
                .storage()
                .get_credential(owner, id)
                .await?
                .is_none()
            {
                return Err(Error::Invalid(format!("Credential {id} not found")));
            }
        }
        for agent in data.routing.agents() {
            if self
                .engine
                .storage()
                .get_agent(owner, agent)
                .await?
                .is_none()
            {
                return Err(Error::Invalid(format!("Agent {agent} not found")));
            }
        }
        Ok(())
    }
}
