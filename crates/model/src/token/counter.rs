//! The [`TokenCounter`] trait and the framing costs it adds around text.

use std::fmt::Debug;

use oxiscope_message::{ContentBlock, MediaBlock, Msg, RichContent};

use crate::chat::ToolSchema;

/// Tokens of framing per message (role markers, separators), whatever its
/// content. OpenAI documents 3 for its current chat models.
pub const MESSAGE_OVERHEAD: usize = 3;

/// Extra tokens for a message that carries a sender name.
pub const NAME_OVERHEAD: usize = 1;

/// Tokens the model's own answer starts with, added once per conversation.
pub const REPLY_PRIMING: usize = 3;

/// Framing per tool call or tool result (call id, function wrapper).
pub const TOOL_CALL_OVERHEAD: usize = 3;

/// Framing per tool schema offered to the model.
pub const TOOL_SCHEMA_OVERHEAD: usize = 8;

/// The flat cost of one data block (image, audio, file). Base64 length says
/// little about what a provider charges (an image costs by its pixels, not
/// its bytes), so a conservative constant is used: a high-detail 1024×1024
/// image costs OpenAI 765 tokens and Anthropic about 1,400.
pub const DATA_BLOCK_TOKENS: usize = 1_500;

/// Counts tokens the way a model family's tokenizer would.
///
/// Object safe: hold it as `Box<dyn TokenCounter>` (see
/// [`counter_for`](super::counter_for)).
///
/// # Contract
/// - [`count_messages`](TokenCounter::count_messages) equals
///   [`REPLY_PRIMING`] plus the sum of
///   [`count_message`](TokenCounter::count_message) over the messages (0 for
///   no messages). A message's count depends only on that message, so a
///   caller that counts a growing context every step should cache
///   `count_message` per message (by id, recounting a message only when it
///   changed) and add `REPLY_PRIMING` itself: each step then costs one
///   count of the new messages instead of a pass over the whole context.
/// - A message costs [`MESSAGE_OVERHEAD`], its role, its name plus
///   [`NAME_OVERHEAD`] when it has one, and its blocks: text, thinking and
///   hint text as text; a tool call as its name and raw arguments plus
///   [`TOOL_CALL_OVERHEAD`]; a tool result as its name and output plus
///   [`TOOL_CALL_OVERHEAD`]; every data block (also inside tool results and
///   hints) as [`data_block_tokens`](TokenCounter::data_block_tokens),
///   never by its base64 length.
/// - Counting never fails and never panics; it is an estimate of what the
///   provider will bill, exact for the text part with a real tokenizer.
pub trait TokenCounter: Send + Sync + Debug {
    /// The tokens of plain text.
    fn count_text(&self, text: &str) -> usize;

    /// The flat cost of one data block; [`DATA_BLOCK_TOKENS`] by default.
    fn data_block_tokens(&self) -> usize {
        DATA_BLOCK_TOKENS
    }

    /// The tokens of rich content (a tool result's output, a hint): its
    /// texts, and every data block at the flat data-block cost.
    fn count_rich(&self, content: &RichContent) -> usize {
        count_rich(self, content)
    }

    /// The tokens of one message, framing included (see the trait contract).
    fn count_message(&self, msg: &Msg) -> usize {
        count_message(self, msg)
    }

    /// The tokens of a conversation: [`REPLY_PRIMING`] plus every message.
    fn count_messages(&self, msgs: &[Msg]) -> usize {
        if msgs.is_empty() {
            return 0;
        }
        msgs.iter()
            .fold(REPLY_PRIMING, |n, m| n + self.count_message(m))
    }

    /// The tokens of the tool schemas offered to the model: each schema's
    /// JSON text plus [`TOOL_SCHEMA_OVERHEAD`]. Providers render tools in
    /// their own way, so this is an estimate.
    fn count_tools(&self, tools: &[ToolSchema]) -> usize {
        tools
            .iter()
            .map(|t| {
                let json = serde_json::to_string(&t.function).unwrap_or_default();
                self.count_text(&json) + TOOL_SCHEMA_OVERHEAD
            })
            .sum()
    }
}

fn count_message<C: TokenCounter + ?Sized>(c: &C, msg: &Msg) -> usize {
    let mut n = MESSAGE_OVERHEAD + c.count_text(msg.role.as_str());
    if !msg.name.is_empty() {
        n += c.count_text(&msg.name) + NAME_OVERHEAD;
    }
    for block in &msg.content {
        n += match block {
            ContentBlock::Text(t) => c.count_text(&t.text),
            ContentBlock::Thinking(t) => c.count_text(&t.thinking),
            ContentBlock::Data(_) => c.data_block_tokens(),
            ContentBlock::Hint(h) => count_rich(c, &h.hint),
            ContentBlock::ToolCall(call) => {
                TOOL_CALL_OVERHEAD + c.count_text(&call.name) + c.count_text(&call.input)
            }
            ContentBlock::ToolResult(result) => {
                TOOL_CALL_OVERHEAD + c.count_text(&result.name) + count_rich(c, &result.output)
            }
        };
    }
    n
}

fn count_rich<C: TokenCounter + ?Sized>(c: &C, content: &RichContent) -> usize {
    match content {
        RichContent::Text(t) => c.count_text(t),
        RichContent::Blocks(blocks) => blocks
            .iter()
            .map(|b| match b {
                MediaBlock::Text(t) => c.count_text(&t.text),
                MediaBlock::Data(_) => c.data_block_tokens(),
            })
            .sum(),
    }
}
