//! What the agent is told about the chat, what the chat is shown of a
//! reply, and how a typed answer to a confirmation reads.

use oxiscope_message::{ContentBlock, Msg, ToolCallBlock};
use serde_json::{Value, json};

use crate::inbound::{ChatKind, Inbound};
use crate::settings::CommonConfig;

/// The most characters of a tool call's input a confirmation prompt shows.
const PROMPT_INPUT_CHARS: usize = 800;

/// The user message for `message`: a first text block telling the agent
/// where it is (platform, chat name, group or private, sender), the
/// message's text, then its images and files as data blocks; the same
/// context, and the platform ids, in `metadata.channel`.
pub(crate) fn user_message(platform: &str, channel_id: &str, message: &Inbound) -> Value {
    let kind = match message.kind {
        ChatKind::Group => "group chat",
        ChatKind::Private => "private chat",
    };
    let chat = message
        .chat_name
        .as_deref()
        .map(|n| format!(" \"{n}\""))
        .unwrap_or_default();
    let sender = message.sender.name.as_deref().unwrap_or(&message.sender.id);
    let header = format!(
        "[Channel: {platform}, {kind}{chat}; message from {sender} (user id {})]",
        message.sender.id
    );
    let mut content = vec![json!({"type": "text", "text": header})];
    if !message.text.trim().is_empty() {
        content.push(json!({"type": "text", "text": message.text}));
    }
    for media in message.images.iter().chain(&message.files) {
        let mut block = json!({
            "type": "data",
            "source": {"type": "base64", "data": media.data, "media_type": media.media_type},
        });
        if let Some(name) = &media.name {
            block["name"] = json!(name);
        }
        content.push(block);
    }
    json!({
        "role": "user",
        "name": sender,
        "content": content,
        "metadata": {"channel": {
            "platform": platform,
            "channel_id": channel_id,
            "chat_id": message.chat_id,
            "chat_name": message.chat_name,
            "chat_type": message.chat_type,
            "user_id": message.sender.id,
            "user_name": message.sender.name,
            "message_id": message.message_id,
        }},
    })
}

/// The platform user id a user message came from (`metadata.channel`).
pub(crate) fn sender_of(msg: &Msg) -> Option<String> {
    let meta = serde_json::to_value(&msg.metadata).ok()?;
    meta.pointer("/channel/user_id")?
        .as_str()
        .map(str::to_owned)
}

/// What the chat is shown of a reply: its text, and per the channel's
/// switches its reasoning and tool calls.
pub(crate) fn render(reply: &Msg, config: CommonConfig) -> String {
    let mut parts: Vec<String> = Vec::new();
    for block in &reply.content {
        match block {
            ContentBlock::Text(t) if !t.text.trim().is_empty() => parts.push(t.text.clone()),
            ContentBlock::Thinking(t) if config.show_thinking && !t.thinking.trim().is_empty() => {
                parts.push(format!("(thinking) {}", t.thinking));
            }
            ContentBlock::ToolCall(call) if config.show_tool_process => {
                parts.push(format!("(tool) {}: {}", call.name, clip(&call.input)));
            }
            _ => {}
        }
    }
    parts.join("\n\n")
}

/// The prompt that asks the chat to approve or deny `calls`.
pub(crate) fn confirm_prompt(calls: &[ToolCallBlock]) -> String {
    let mut text = String::from("The agent asks to run:\n");
    for call in calls {
        text.push_str(&format!("- {} {}\n", call.name, clip(&call.input)));
    }
    text.push_str("Reply \"approve\" to allow or \"deny\" to refuse.");
    text
}

/// `true` for an approval, `false` for a refusal, `None` for anything
/// else (a leading mention of the bot is ignored).
pub(crate) fn decision(text: &str) -> Option<bool> {
    let word = text
        .split_whitespace()
        .filter(|w| !w.starts_with('@'))
        .collect::<Vec<_>>();
    let [word] = word.as_slice() else {
        return None;
    };
    let word = word
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    match word.as_str() {
        "approve" | "approved" | "allow" | "yes" | "y" | "ok" | "accept" | "agree" => Some(true),
        "deny" | "denied" | "reject" | "no" | "n" | "refuse" => Some(false),
        _ => None,
    }
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(PROMPT_INPUT_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_answer_is_one_word_of_yes_or_no_after_any_mention() {
        assert_eq!(decision("approve"), Some(true));
        assert_eq!(decision("@bot  Yes!"), Some(true));
        assert_eq!(decision("DENY"), Some(false));
        assert_eq!(decision("no thanks"), None);
        assert_eq!(decision("approve the deploy"), None);
        assert_eq!(decision(""), None);
    }
}
