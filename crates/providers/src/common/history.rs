//! How a conversation is cut into provider messages, shared by the Anthropic
//! and Ollama formatters.
//!
//! One stored message can hold a whole turn of an agent: thinking, text, tool
//! calls, their results and hints, in order. Providers want that as separate
//! messages: the assistant's part, then the tool results (answered by the
//! user role), then the assistant again. A hint is a note to the model and
//! always becomes its own user-role message.

use oxiscope_message::{BlockKind, ContentBlock, Msg, RichContent, Role, ToolResultBlock};

/// A piece of one message, in order.
#[derive(Debug)]
pub(crate) enum Part<'a> {
    /// Blocks spoken by the message's role: text, thinking, data, tool calls.
    Turn(Vec<&'a ContentBlock>),
    /// A run of consecutive tool results.
    Results(Vec<&'a ToolResultBlock>),
    /// A hint to the model.
    Hint(&'a RichContent),
}

/// Cuts `msg` into parts at every tool result run and every hint. Empty
/// turns are left out.
pub(crate) fn split(msg: &Msg) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    let mut turn: Vec<&ContentBlock> = Vec::new();
    let mut results: Vec<&ToolResultBlock> = Vec::new();
    for block in &msg.content {
        match block {
            ContentBlock::ToolResult(result) => {
                flush_turn(&mut parts, &mut turn);
                results.push(result);
            }
            ContentBlock::Hint(hint) => {
                flush_turn(&mut parts, &mut turn);
                flush_results(&mut parts, &mut results);
                parts.push(Part::Hint(&hint.hint));
            }
            other => {
                flush_results(&mut parts, &mut results);
                turn.push(other);
            }
        }
    }
    flush_turn(&mut parts, &mut turn);
    flush_results(&mut parts, &mut results);
    parts
}

fn flush_turn<'a>(parts: &mut Vec<Part<'a>>, turn: &mut Vec<&'a ContentBlock>) {
    if !turn.is_empty() {
        parts.push(Part::Turn(std::mem::take(turn)));
    }
}

fn flush_results<'a>(parts: &mut Vec<Part<'a>>, results: &mut Vec<&'a ToolResultBlock>) {
    if !results.is_empty() {
        parts.push(Part::Results(std::mem::take(results)));
    }
}

/// A stretch of a multi-agent conversation.
#[derive(Debug)]
pub(crate) enum Group<'a> {
    /// A system message, formatted as in a one-to-one chat.
    System(&'a Msg),
    /// Consecutive messages of speakers, folded into one user message that
    /// quotes each speaker by name.
    Speakers(Vec<&'a Msg>),
    /// A message with tool calls or results, formatted as in a one-to-one
    /// chat so the provider sees its native tool protocol.
    Tools(&'a Msg),
}

/// Groups `msgs` for a multi-agent formatter.
pub(crate) fn group(msgs: &[Msg]) -> Vec<Group<'_>> {
    let mut groups = Vec::new();
    let mut speakers: Vec<&Msg> = Vec::new();
    for msg in msgs {
        let tools = msg.has_blocks(BlockKind::ToolCall) || msg.has_blocks(BlockKind::ToolResult);
        if msg.role == Role::System || tools {
            if !speakers.is_empty() {
                groups.push(Group::Speakers(std::mem::take(&mut speakers)));
            }
            groups.push(if tools {
                Group::Tools(msg)
            } else {
                Group::System(msg)
            });
        } else {
            speakers.push(msg);
        }
    }
    if !speakers.is_empty() {
        groups.push(Group::Speakers(speakers));
    }
    groups
}

/// The texts of `msg`'s text blocks, in order (hints and thinking are not
/// part of what a speaker said).
pub(crate) fn spoken_texts(msg: &Msg) -> Vec<&str> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

/// The kind of a media type for prose: `image/png` -> `image`.
pub(crate) fn media_kind(media_type: &str) -> &str {
    media_type.split('/').next().unwrap_or(media_type)
}

/// Whether `media_type` matches one of `patterns` (`image/*`, `application/pdf`).
pub(crate) fn media_supported(patterns: &[String], media_type: &str) -> bool {
    patterns.iter().any(|p| match p.strip_suffix("/*") {
        Some(major) => media_kind(media_type).eq_ignore_ascii_case(major),
        None => p.eq_ignore_ascii_case(media_type),
    })
}

/// The note that replaces data a model cannot read, so nothing disappears
/// silently from the conversation.
pub(crate) fn unsupported_note(id: &str, media_type: &str) -> String {
    format!(
        "<system-reminder>A(n) {} file ({media_type}) with the identifier [{id}] was \
         omitted: this model cannot read it.</system-reminder>",
        media_kind(media_type)
    )
}

/// The tool arguments of a call as a JSON object. Arguments that are not a
/// JSON object (a model can produce broken JSON) become an empty object,
/// since providers reject anything else in this position.
pub(crate) fn arguments_object(input: &str) -> serde_json::Value {
    match serde_json::from_str::<serde_json::Value>(input) {
        Ok(value @ serde_json::Value::Object(_)) => value,
        _ => serde_json::Value::Object(serde_json::Map::new()),
    }
}
