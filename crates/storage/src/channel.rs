//! IM channels: the channel record, the sessions a channel opened, the
//! chats it has seen and the inbound messages it has taken, behind
//! [`ChannelStore`] (reached through [`Storage::channels`](crate::Storage::channels)).
//!
//! Credentials are sealed by the caller before they reach a record; this
//! crate keeps the sealed text and never reads it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::rows::Columns;
use crate::storage::BoxFuture;

/// A channel: one bot of one platform, owned by a user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelRecord {
    /// The channel id.
    pub id: String,
    /// The owner.
    pub user_id: String,
    /// The platform type id (`telegram`, `slack`, ...).
    pub channel_type: String,
    /// The display name.
    pub name: Option<String>,
    /// The platform's id of the bot (from the credentials).
    pub platform_bot_id: String,
    /// Whether its connection should run.
    pub enabled: bool,
    /// The credentials, sealed by the caller.
    pub sealed_credentials: String,
    /// `platform_config`, `routing` and `session`, in AgentScope's shapes.
    pub data: Value,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}

/// A session a channel opened for one routing key (a chat, or a member of
/// a chat, for one agent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelSessionRecord {
    /// The channel.
    pub channel_id: String,
    /// The routing's session key (agent, chat and, per member, user).
    pub session_key: String,
    /// The session.
    pub session_id: String,
    /// The channel's owner, who owns the session.
    pub user_id: String,
    /// The session's agent.
    pub agent_id: String,
    /// The chat its replies go to.
    pub chat_id: String,
    /// When it was claimed.
    pub created_at: String,
}

/// A chat a channel has received messages from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelChatRecord {
    /// The channel.
    pub channel_id: String,
    /// The platform's chat id.
    pub chat_id: String,
    /// The chat's name (empty when the platform gave none).
    pub name: String,
    /// The platform's chat type (`group`, `private`, ...).
    pub chat_type: String,
    /// When a message last came from it.
    pub last_seen: String,
}

/// Where channels and what they saw are kept; every backend of
/// [`Storage`](crate::Storage) that supports channels implements it.
pub trait ChannelStore: Send + Sync {
    /// Adds a channel.
    ///
    /// # Errors
    /// The backend's failure.
    fn create_channel<'a>(&'a self, channel: &'a ChannelRecord) -> BoxFuture<'a, Result<()>>;
    /// One of the user's channels.
    ///
    /// # Errors
    /// The backend's failure.
    fn get_channel<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ChannelRecord>>>;
    /// The user's channels, oldest first.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_channels<'a>(&'a self, user_id: &'a str) -> BoxFuture<'a, Result<Vec<ChannelRecord>>>;
    /// Every user's enabled channels (what a replica connects at start).
    ///
    /// # Errors
    /// The backend's failure.
    fn enabled_channels(&self) -> BoxFuture<'_, Result<Vec<ChannelRecord>>>;
    /// Replaces a channel's name, flag, data and `updated_at` (its type,
    /// bot id and credentials do not change).
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] when the user has no such channel.
    fn update_channel<'a>(&'a self, channel: &'a ChannelRecord) -> BoxFuture<'a, Result<()>>;
    /// Deletes a channel with its session keys, chats and inbound marks;
    /// `false` when the user had no such channel. The sessions stay.
    ///
    /// # Errors
    /// The backend's failure.
    fn delete_channel<'a>(&'a self, user_id: &'a str, id: &'a str) -> BoxFuture<'a, Result<bool>>;
    /// Claims `record`'s session key for its session, or returns the
    /// record that already holds the key (another replica's claim wins).
    ///
    /// # Errors
    /// The backend's failure.
    fn claim_channel_session<'a>(
        &'a self,
        record: &'a ChannelSessionRecord,
    ) -> BoxFuture<'a, Result<ChannelSessionRecord>>;
    /// Forgets a session key (its session was deleted).
    ///
    /// # Errors
    /// The backend's failure.
    fn release_channel_session<'a>(
        &'a self,
        channel_id: &'a str,
        session_key: &'a str,
    ) -> BoxFuture<'a, Result<()>>;
    /// The sessions a channel opened, oldest first.
    ///
    /// # Errors
    /// The backend's failure.
    fn channel_sessions<'a>(
        &'a self,
        channel_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ChannelSessionRecord>>>;
    /// Records (or refreshes) a chat a message came from.
    ///
    /// # Errors
    /// The backend's failure.
    fn record_channel_chat<'a>(&'a self, chat: &'a ChannelChatRecord) -> BoxFuture<'a, Result<()>>;
    /// The chats a channel has seen, most recent first.
    ///
    /// # Errors
    /// The backend's failure.
    fn channel_chats<'a>(
        &'a self,
        channel_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ChannelChatRecord>>>;
    /// Marks a platform message as taken: `true` the first time, `false`
    /// when it was taken before (by this replica or another).
    ///
    /// # Errors
    /// The backend's failure.
    fn take_inbound<'a>(
        &'a self,
        channel_id: &'a str,
        message_id: &'a str,
        at: &'a str,
    ) -> BoxFuture<'a, Result<bool>>;
    /// Forgets inbound marks older than `before`; how many went.
    ///
    /// # Errors
    /// The backend's failure.
    fn prune_inbound<'a>(&'a self, before: &'a str) -> BoxFuture<'a, Result<u64>>;
}

pub(crate) fn channel_row(row: &impl Columns) -> Result<ChannelRecord> {
    Ok(ChannelRecord {
        id: row.text("id")?,
        user_id: row.text("user_id")?,
        channel_type: row.text("channel_type")?,
        name: row.opt_text("name")?,
        platform_bot_id: row.text("platform_bot_id")?,
        enabled: row.flag("enabled")?,
        sealed_credentials: row.text("sealed_credentials")?,
        data: row.json("data")?,
        created_at: row.text("created_at")?,
        updated_at: row.text("updated_at")?,
    })
}

pub(crate) fn channel_session_row(row: &impl Columns) -> Result<ChannelSessionRecord> {
    Ok(ChannelSessionRecord {
        channel_id: row.text("channel_id")?,
        session_key: row.text("session_key")?,
        session_id: row.text("session_id")?,
        user_id: row.text("user_id")?,
        agent_id: row.text("agent_id")?,
        chat_id: row.text("chat_id")?,
        created_at: row.text("created_at")?,
    })
}

pub(crate) fn channel_chat_row(row: &impl Columns) -> Result<ChannelChatRecord> {
    Ok(ChannelChatRecord {
        channel_id: row.text("channel_id")?,
        chat_id: row.text("chat_id")?,
        name: row.text("name")?,
        chat_type: row.text("chat_type")?,
        last_seen: row.text("last_seen")?,
    })
}
