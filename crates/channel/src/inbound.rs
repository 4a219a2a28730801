//! A platform message, normalised: what every channel hands the runtime.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Whether a chat is a group or a one-to-one conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatKind {
    /// Several members (a group, a server channel).
    Group,
    /// The bot and one user.
    Private,
}

/// Who sent a message.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Sender {
    /// The platform's user id.
    pub id: String,
    /// A display name, when the platform gave one.
    pub name: Option<String>,
}

/// An image or file attached to a message, as fetched from the platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// The file name, when known.
    pub name: Option<String>,
    /// Its media type (`image/jpeg`, ...).
    pub media_type: String,
    /// Its bytes, base64.
    pub data: String,
}

/// One inbound message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inbound {
    /// The platform's id of the message, unique within the channel: how a
    /// message delivered twice (or to two replicas) is handled once.
    pub message_id: String,
    /// The platform's chat id.
    pub chat_id: String,
    /// The chat's name (a group's title), when known.
    pub chat_name: Option<String>,
    /// Group or private.
    pub kind: ChatKind,
    /// The platform's own name of the chat type (`group`, `private`,
    /// `guild`, `dm`, ...): the `chat_type` routing can match.
    pub chat_type: String,
    /// Who sent it.
    pub sender: Sender,
    /// Its text (captions included).
    pub text: String,
    /// Images, fetched.
    pub images: Vec<Attachment>,
    /// Other files, fetched.
    pub files: Vec<Attachment>,
    /// The user ids or names it mentions.
    pub mentions: Vec<String>,
    /// Whether it mentions the bot (or replies to it).
    pub mentions_bot: bool,
    /// Platform fields routing may match (`chat_type` is always there).
    pub metadata: Map<String, Value>,
}

impl Inbound {
    /// The value routing's `match_key` reads: `chat_id`, `user_id`, or a
    /// metadata key.
    #[must_use]
    pub fn field(&self, key: &str) -> Option<String> {
        match key {
            "chat_id" => Some(self.chat_id.clone()),
            "user_id" => Some(self.sender.id.clone()),
            "chat_type" => Some(self.chat_type.clone()),
            other => self.metadata.get(other).map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
        }
    }
}
