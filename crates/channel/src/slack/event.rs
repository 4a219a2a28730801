//! Socket Mode envelopes, and a message event normalised into an
//! [`Inbound`].

use serde_json::{Map, Value, json};

use crate::inbound::{ChatKind, Inbound, Sender};

/// `event` (a `message` or `app_mention` of an `events_api` envelope) as
/// the runtime takes it; `None` for a bot's message, an edit or another
/// subtype, or another event.
pub(crate) fn normalise(event: &Value, bot_user: &str) -> Option<Inbound> {
    let kind = event.get("type")?.as_str()?;
    if kind != "message" && kind != "app_mention" {
        return None;
    }
    if event.get("subtype").is_some() || event.get("bot_id").is_some() {
        return None;
    }
    let user = event.get("user")?.as_str()?;
    if user == bot_user {
        return None;
    }
    let channel = event.get("channel")?.as_str()?;
    let ts = event.get("ts")?.as_str()?;
    let text = event.get("text").and_then(Value::as_str).unwrap_or("");
    let chat_type = match event.get("channel_type").and_then(Value::as_str) {
        Some(t) => t.to_owned(),
        None if channel.starts_with('D') => "im".into(),
        None => "channel".into(),
    };
    let chat_kind = if chat_type == "im" {
        ChatKind::Private
    } else {
        ChatKind::Group
    };
    let mentions = mentioned(text);
    let bot_mention = format!("<@{bot_user}>");
    let mentions_bot = kind == "app_mention" || text.contains(&bot_mention);
    let clean = text.replace(&bot_mention, "").trim().to_owned();
    let mut metadata = Map::new();
    metadata.insert("chat_type".into(), json!(chat_type));
    if let Some(team) = event.get("team").and_then(Value::as_str) {
        metadata.insert("team_id".into(), json!(team));
    }
    Some(Inbound {
        // A mention arrives as `message` and as `app_mention`: one id.
        message_id: format!("{channel}:{ts}"),
        chat_id: channel.to_owned(),
        chat_name: None,
        kind: chat_kind,
        chat_type,
        sender: Sender {
            id: user.to_owned(),
            name: None,
        },
        text: clean,
        images: Vec::new(),
        files: Vec::new(),
        mentions,
        mentions_bot,
        metadata,
    })
}

/// The user ids of `<@U…>` mentions in `text`.
fn mentioned(text: &str) -> Vec<String> {
    text.split("<@")
        .skip(1)
        .filter_map(|rest| rest.split_once('>'))
        .map(|(id, _)| id.split('|').next().unwrap_or(id).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_mention_in_a_channel_is_found_removed_and_keyed_like_its_message_twin() {
        let mention = json!({"type": "app_mention", "user": "U1", "channel": "C9",
                             "ts": "1.2", "text": "<@UBOT> deploy?"});
        let message = json!({"type": "message", "user": "U1", "channel": "C9", "ts": "1.2",
                             "channel_type": "channel", "text": "<@UBOT> deploy?"});
        let a = normalise(&mention, "UBOT").unwrap();
        let b = normalise(&message, "UBOT").unwrap();
        assert_eq!(a.message_id, b.message_id);
        assert!(a.mentions_bot && b.mentions_bot);
        assert_eq!(a.text, "deploy?");
        assert_eq!(a.kind, ChatKind::Group);
        assert_eq!(b.mentions, ["UBOT"]);
    }

    #[test]
    fn bots_edits_and_other_events_are_not_taken() {
        for event in [
            json!({"type": "message", "subtype": "message_changed", "channel": "C", "ts": "1"}),
            json!({"type": "message", "bot_id": "B1", "user": "U2", "channel": "C", "ts": "1"}),
            json!({"type": "message", "user": "UBOT", "channel": "D1", "ts": "1"}),
            json!({"type": "reaction_added", "user": "U1"}),
            json!({"type": "message", "channel": "C", "ts": "1"}),
            json!("not an object"),
        ] {
            assert!(normalise(&event, "UBOT").is_none(), "{event}");
        }
        let dm = json!({"type": "message", "user": "U1", "channel": "D1", "ts": "3", "text": "hi"});
        let dm = normalise(&dm, "UBOT").unwrap();
        assert_eq!((dm.kind, dm.chat_type.as_str()), (ChatKind::Private, "im"));
    }
}
