//! What is left of a reply's [`ReplyLimits`], charged chunk by chunk as a
//! model call streams.

use std::collections::HashMap;

use oxiscope_message::{ContentBlock, DataSource, Id, Msg};

use crate::config::ReplyLimits;
use crate::error::{AgentError, ReplyPart};

/// What a new text, thinking or data block costs on top of its content:
/// the block events it takes, so that a model cannot open blocks without
/// end for free.
const BLOCK_COST: usize = 64;

/// The bytes a reply may still take, and what the current call has
/// charged so far (tool calls are charged their id once and the growth of
/// their name, as the chunks repeat the whole name).
#[derive(Debug, Clone)]
pub(crate) struct Room {
    limits: ReplyLimits,
    text: usize,
    tool_input: usize,
    /// The text, thinking or data block the last chunk extended.
    last_block: Option<Id>,
    /// The name length charged per tool call of this call.
    names: HashMap<Id, usize>,
}

impl Room {
    /// The room `limits` leave after what `reply` already holds.
    pub(crate) fn left_in(reply: &Msg, limits: ReplyLimits) -> Self {
        let (mut text, mut tool_input) = (0usize, 0usize);
        for block in &reply.content {
            match block {
                ContentBlock::ToolCall(c) => {
                    tool_input = tool_input
                        .saturating_add(c.input.len())
                        .saturating_add(c.id.as_str().len());
                }
                ContentBlock::Text(_) | ContentBlock::Thinking(_) | ContentBlock::Data(_) => {
                    text = text
                        .saturating_add(BLOCK_COST)
                        .saturating_add(content_len(block));
                }
                ContentBlock::Hint(_) | ContentBlock::ToolResult(_) => {}
            }
        }
        Self {
            limits,
            text: limits.max_text_bytes.saturating_sub(text),
            tool_input: limits.max_tool_input_bytes.saturating_sub(tool_input),
            last_block: None,
            names: HashMap::new(),
        }
    }

    /// Takes a delta chunk's bytes from the room.
    ///
    /// # Errors
    /// [`AgentError::ReplyTooLarge`] when they do not fit; nothing is
    /// taken then.
    pub(crate) fn charge(&mut self, content: &[ContentBlock]) -> Result<(), AgentError> {
        let (mut text, mut tool_input) = (0usize, 0usize);
        let mut last_block = self.last_block.clone();
        let mut names = Vec::new();
        for block in content {
            match block {
                ContentBlock::ToolCall(c) => {
                    let charged = self.names.get(&c.id).copied();
                    if charged.is_none() {
                        tool_input = tool_input.saturating_add(c.id.as_str().len());
                    }
                    let growth = c.name.len().saturating_sub(charged.unwrap_or(0));
                    tool_input = tool_input
                        .saturating_add(growth)
                        .saturating_add(c.input.len());
                    names.push((c.id.clone(), c.name.len().max(charged.unwrap_or(0))));
                    last_block = None;
                }
                ContentBlock::Text(_) | ContentBlock::Thinking(_) | ContentBlock::Data(_) => {
                    let id = block_id(block);
                    if last_block.as_ref() != id {
                        text = text.saturating_add(BLOCK_COST);
                        last_block = id.cloned();
                    }
                    text = text.saturating_add(content_len(block));
                }
                ContentBlock::Hint(_) | ContentBlock::ToolResult(_) => {}
            }
        }
        if text > self.text {
            return Err(self.exceeded(ReplyPart::Text));
        }
        if tool_input > self.tool_input {
            return Err(self.exceeded(ReplyPart::ToolInput));
        }
        self.text -= text;
        self.tool_input -= tool_input;
        self.last_block = last_block;
        self.names.extend(names);
        Ok(())
    }

    fn exceeded(&self, part: ReplyPart) -> AgentError {
        let limit = match part {
            ReplyPart::Text => self.limits.max_text_bytes,
            ReplyPart::ToolInput => self.limits.max_tool_input_bytes,
        };
        AgentError::ReplyTooLarge { part, limit }
    }
}

/// The id of a text, thinking or data block.
fn block_id(block: &ContentBlock) -> Option<&Id> {
    match block {
        ContentBlock::Text(t) => Some(&t.id),
        ContentBlock::Thinking(t) => Some(&t.id),
        ContentBlock::Data(d) => Some(&d.id),
        _ => None,
    }
}

/// The bytes of a text, thinking or data block's content (0 for others).
fn content_len(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text(t) => t.text.len(),
        ContentBlock::Thinking(t) => t.thinking.len(),
        ContentBlock::Data(d) => match &d.source {
            DataSource::Base64(s) => s.data.len(),
            DataSource::Url(s) => s.url.len(),
        },
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use oxiscope_message::{TextBlock, ToolCallBlock};
    use pretty_assertions::assert_eq;

    use super::*;

    fn limits(text: usize, tools: usize) -> ReplyLimits {
        ReplyLimits {
            max_text_bytes: text,
            max_tool_input_bytes: tools,
        }
    }

    fn text(id: &str, s: &str) -> ContentBlock {
        let mut block = TextBlock::new(s);
        block.id = Id::from(id);
        ContentBlock::Text(block)
    }

    fn call(id: &str, name: &str, input: &str) -> ContentBlock {
        ContentBlock::ToolCall(ToolCallBlock::new(id, name, input))
    }

    fn empty_reply() -> Msg {
        Msg::assistant("a", Vec::<ContentBlock>::new()).unwrap()
    }

    #[test]
    fn text_within_the_limit_is_taken_and_beyond_it_refused() {
        let mut room = Room::left_in(&empty_reply(), limits(BLOCK_COST + 10, 100));
        room.charge(&[text("b1", "12345")]).unwrap();
        room.charge(&[text("b1", "12345")]).unwrap();
        assert_eq!(
            room.charge(&[text("b1", "x")]).unwrap_err(),
            AgentError::ReplyTooLarge {
                part: ReplyPart::Text,
                limit: BLOCK_COST + 10
            }
        );
    }

    #[test]
    fn a_tool_call_is_charged_its_id_once_and_its_arguments() {
        let mut room = Room::left_in(&empty_reply(), limits(100, 10));
        // id "c" (1) + name "Bash" (4) + "{}" (2)
        room.charge(&[call("c", "Bash", "{}")]).unwrap();
        // The repeated name costs nothing more: 3 bytes of arguments.
        room.charge(&[call("c", "Bash", "abc")]).unwrap();
        let err = room.charge(&[call("c", "Bash", "d")]).unwrap_err();
        assert!(
            matches!(
                err,
                AgentError::ReplyTooLarge {
                    part: ReplyPart::ToolInput,
                    limit: 10
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn what_the_reply_already_holds_counts() {
        let reply = Msg::assistant("a", vec![text("old", "0123456789")]).unwrap();
        let mut room = Room::left_in(&reply, limits(BLOCK_COST + 12, 100));
        assert!(room.charge(&[text("b", "x")]).is_err());
        let mut roomy = Room::left_in(&reply, limits(2 * BLOCK_COST + 12, 100));
        roomy.charge(&[text("b", "xy")]).unwrap();
    }

    #[test]
    fn new_blocks_cost_even_when_empty() {
        let mut room = Room::left_in(&empty_reply(), limits(3 * BLOCK_COST, 100));
        room.charge(&[text("1", "")]).unwrap();
        room.charge(&[text("2", "")]).unwrap();
        room.charge(&[text("3", "")]).unwrap();
        assert!(room.charge(&[text("4", "")]).is_err());
    }
}
