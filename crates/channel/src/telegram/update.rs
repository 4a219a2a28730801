//! Bot API updates, and a message normalised into an [`Inbound`].

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::inbound::{ChatKind, Inbound, Sender};

/// An update (only messages are asked for).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Update {
    #[serde(default)]
    pub(crate) message: Option<Message>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Message {
    pub(crate) message_id: i64,
    #[serde(default)]
    pub(crate) from: Option<User>,
    pub(crate) chat: Chat,
    #[serde(default)]
    pub(crate) text: Option<String>,
    #[serde(default)]
    pub(crate) caption: Option<String>,
    #[serde(default)]
    pub(crate) entities: Vec<Entity>,
    #[serde(default)]
    pub(crate) caption_entities: Vec<Entity>,
    #[serde(default)]
    pub(crate) photo: Vec<PhotoSize>,
    #[serde(default)]
    pub(crate) document: Option<Document>,
    #[serde(default)]
    pub(crate) reply_to_message: Option<Box<Message>>,
}

/// A user or bot.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct User {
    pub(crate) id: i64,
    #[serde(default)]
    pub(crate) is_bot: bool,
    #[serde(default)]
    pub(crate) first_name: String,
    #[serde(default)]
    pub(crate) last_name: Option<String>,
    #[serde(default)]
    pub(crate) username: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Chat {
    pub(crate) id: i64,
    #[serde(rename = "type")]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) title: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Entity {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// In UTF-16 code units.
    pub(crate) offset: usize,
    /// In UTF-16 code units.
    pub(crate) length: usize,
    #[serde(default)]
    pub(crate) user: Option<User>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct PhotoSize {
    pub(crate) file_id: String,
    #[serde(default)]
    pub(crate) file_size: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Document {
    pub(crate) file_id: String,
    #[serde(default)]
    pub(crate) file_name: Option<String>,
    #[serde(default)]
    pub(crate) mime_type: Option<String>,
    #[serde(default)]
    pub(crate) file_size: Option<u64>,
}

/// The `getFile` answer.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct File {
    #[serde(default)]
    pub(crate) file_path: Option<String>,
}

/// A file a message carries, to fetch.
#[derive(Debug, Clone)]
pub(crate) struct Wanted {
    pub(crate) file_id: String,
    pub(crate) name: Option<String>,
    pub(crate) media_type: String,
    pub(crate) image: bool,
    pub(crate) size: Option<u64>,
}

impl User {
    fn display(&self) -> String {
        match &self.last_name {
            Some(last) => format!("{} {last}", self.first_name),
            None => self.first_name.clone(),
        }
    }
}

/// `message` as the runtime takes it (attachments still to fetch), or
/// `None` for what is not a person's message in a private chat or a group
/// (a channel post, a bot's message, a service message).
pub(crate) fn normalise(message: &Message, bot: &User) -> Option<(Inbound, Vec<Wanted>)> {
    let from = message.from.as_ref()?;
    if from.is_bot {
        return None;
    }
    let kind = match message.chat.kind.as_str() {
        "private" => ChatKind::Private,
        "group" | "supergroup" => ChatKind::Group,
        _ => return None,
    };
    let (text, entities) = match (&message.text, &message.caption) {
        (Some(text), _) => (text.as_str(), &message.entities),
        (None, Some(caption)) => (caption.as_str(), &message.caption_entities),
        (None, None) => ("", &message.entities),
    };
    let bot_handle = bot.username.as_deref().map(|u| format!("@{u}"));
    let mut mentions = Vec::new();
    let mut mentions_bot = message
        .reply_to_message
        .as_ref()
        .and_then(|r| r.from.as_ref())
        .is_some_and(|u| u.id == bot.id);
    for entity in entities {
        match entity.kind.as_str() {
            "mention" => {
                let handle = utf16_slice(text, entity.offset, entity.length);
                if bot_handle
                    .as_deref()
                    .is_some_and(|b| b.eq_ignore_ascii_case(&handle))
                {
                    mentions_bot = true;
                }
                mentions.push(handle);
            }
            "text_mention" => {
                if let Some(user) = &entity.user {
                    mentions_bot |= user.id == bot.id;
                    mentions.push(user.id.to_string());
                }
            }
            _ => {}
        }
    }
    let clean = match &bot_handle {
        Some(handle) => remove_handle(text, handle),
        None => text.to_owned(),
    };
    let mut wanted = Vec::new();
    if let Some(largest) = message.photo.last() {
        wanted.push(Wanted {
            file_id: largest.file_id.clone(),
            name: None,
            media_type: "image/jpeg".into(),
            image: true,
            size: largest.file_size,
        });
    }
    if let Some(doc) = &message.document {
        let media_type = doc
            .mime_type
            .clone()
            .unwrap_or_else(|| "application/octet-stream".into());
        wanted.push(Wanted {
            file_id: doc.file_id.clone(),
            name: doc.file_name.clone(),
            image: media_type.starts_with("image/"),
            media_type,
            size: doc.file_size,
        });
    }
    let chat_type = match kind {
        ChatKind::Private => "private",
        ChatKind::Group => "group",
    };
    let mut metadata = Map::new();
    metadata.insert("chat_type".into(), json!(chat_type));
    metadata.insert("telegram_chat_type".into(), json!(message.chat.kind));
    if let Some(username) = &from.username {
        metadata.insert("username".into(), Value::from(username.clone()));
    }
    let inbound = Inbound {
        message_id: format!("{}:{}", message.chat.id, message.message_id),
        chat_id: message.chat.id.to_string(),
        chat_name: message.chat.title.clone(),
        kind,
        chat_type: chat_type.into(),
        sender: Sender {
            id: from.id.to_string(),
            name: Some(from.display()).filter(|n| !n.is_empty()),
        },
        text: clean,
        images: Vec::new(),
        files: Vec::new(),
        mentions,
        mentions_bot,
        metadata,
    };
    Some((inbound, wanted))
}

/// The characters of `text` at UTF-16 `offset` for `length` units.
fn utf16_slice(text: &str, offset: usize, length: usize) -> String {
    let units: Vec<u16> = text.encode_utf16().collect();
    let end = offset.saturating_add(length).min(units.len());
    let start = offset.min(end);
    String::from_utf16_lossy(&units[start..end])
}

/// `text` without the bot's `@handle` (any case), spaces tidied.
fn remove_handle(text: &str, handle: &str) -> String {
    text.split(' ')
        .filter(|w| !w.eq_ignore_ascii_case(handle))
        .collect::<Vec<_>>()
        .join(" ")
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn bot() -> User {
        serde_json::from_value(json!({"id": 99, "is_bot": true, "first_name": "Bot",
                                      "username": "oxi_bot"}))
        .unwrap()
    }

    fn message(value: Value) -> Message {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_group_mention_is_found_by_its_utf16_offsets_and_removed_from_the_text() {
        let m = message(json!({
            "message_id": 5, "from": {"id": 7, "is_bot": false, "first_name": "Alice"},
            "chat": {"id": -100, "type": "supergroup", "title": "Team"},
            "text": "🙂 @Oxi_Bot what's up", "entities": [
                {"type": "mention", "offset": 3, "length": 8}]
        }));
        let (inbound, wanted) = normalise(&m, &bot()).unwrap();
        assert!(inbound.mentions_bot);
        assert_eq!(inbound.text, "🙂 what's up");
        assert_eq!(inbound.kind, ChatKind::Group);
        assert_eq!(inbound.chat_type, "group");
        assert_eq!(inbound.message_id, "-100:5");
        assert_eq!(inbound.chat_name.as_deref(), Some("Team"));
        assert!(wanted.is_empty());
    }

    #[test]
    fn bots_channel_posts_and_service_messages_are_not_taken() {
        let from_bot = message(json!({"message_id": 1, "from": {"id": 8, "is_bot": true},
            "chat": {"id": 1, "type": "private"}, "text": "hi"}));
        assert!(normalise(&from_bot, &bot()).is_none());
        let post = message(json!({"message_id": 1, "from": {"id": 8},
            "chat": {"id": 1, "type": "channel"}, "text": "hi"}));
        assert!(normalise(&post, &bot()).is_none());
        let anonymous = message(json!({"message_id": 1, "chat": {"id": 1, "type": "group"}}));
        assert!(normalise(&anonymous, &bot()).is_none());
        // A mention slice out of range reads as what is there.
        assert_eq!(utf16_slice("ab", 1, 99), "b");
        assert_eq!(utf16_slice("ab", 9, 9), "");
    }

    #[test]
    fn a_reply_to_the_bot_counts_as_a_mention_and_media_is_wanted() {
        let m = message(json!({
            "message_id": 6, "from": {"id": 7, "first_name": "Alice", "last_name": "A"},
            "chat": {"id": -5, "type": "group"}, "caption": "look",
            "photo": [{"file_id": "small", "file_size": 10}, {"file_id": "big", "file_size": 99}],
            "document": {"file_id": "doc", "file_name": "r.pdf", "mime_type": "application/pdf"},
            "reply_to_message": {"message_id": 4, "from": {"id": 99, "is_bot": true},
                                 "chat": {"id": -5, "type": "group"}}
        }));
        let (inbound, wanted) = normalise(&m, &bot()).unwrap();
        assert!(inbound.mentions_bot);
        assert_eq!(inbound.text, "look");
        assert_eq!(inbound.sender.name.as_deref(), Some("Alice A"));
        let ids: Vec<_> = wanted
            .iter()
            .map(|w| (w.file_id.as_str(), w.image))
            .collect();
        assert_eq!(ids, [("big", true), ("doc", false)]);
    }
}
