//! The message type.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::block::{BlockKind, ContentBlock, TextBlock, join_text};
use crate::error::MsgError;
use crate::id::Id;
use crate::meta::Metadata;
use crate::reply::{ErrorInfo, ReplyFinishedReason, Usage};
use crate::stamp::{Stamp, Stamper, SystemStamper};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A person (or a caller speaking for one).
    #[default]
    User,
    /// An agent.
    Assistant,
    /// Instructions for the agent.
    System,
}

impl Role {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::System => "system",
        }
    }

    /// Whether a message of this role may hold a block of `kind`:
    /// user messages hold text and data, system messages text, assistant
    /// messages anything.
    #[must_use]
    pub fn allows(self, kind: BlockKind) -> bool {
        match self {
            Self::User => matches!(kind, BlockKind::Text | BlockKind::Data),
            Self::System => kind == BlockKind::Text,
            Self::Assistant => true,
        }
    }
}

/// A message: who said what, in typed blocks, with its lifecycle.
///
/// Serialises with every field present and in AgentScope's order. Parsing
/// fills missing ids and timestamps, ignores unknown top-level fields, and
/// rejects blocks the role may not hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawMsg")]
pub struct Msg {
    /// The speaker's name.
    pub name: String,
    /// The blocks, in order.
    pub content: Vec<ContentBlock>,
    /// The speaker's role.
    pub role: Role,
    /// The message id; for a reply, the reply id.
    pub id: Id,
    /// Free-form metadata.
    pub metadata: Metadata,
    /// When the message was created.
    pub created_at: Stamp,
    /// Tokens spent producing it (assistant replies).
    pub usage: Option<Usage>,
    /// When the message was complete.
    pub finished_at: Option<Stamp>,
    /// Why the reply ended (assistant replies).
    pub finished_reason: Option<ReplyFinishedReason>,
    /// The validated structured output, when one was requested (boxed: it
    /// is rare, and a conversation holds many messages).
    pub structured_output: Option<Box<Map<String, Value>>>,
    /// What went wrong, when the reply ended with an error (boxed, as rare).
    pub error: Option<Box<ErrorInfo>>,
}

#[derive(Deserialize)]
struct RawMsg {
    name: String,
    #[serde(deserialize_with = "crate::de::shrink")]
    content: Vec<ContentBlock>,
    role: Role,
    #[serde(default = "Id::random")]
    id: Id,
    #[serde(default)]
    metadata: Metadata,
    #[serde(default = "Stamp::now")]
    created_at: Stamp,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    finished_at: Option<Stamp>,
    #[serde(default)]
    finished_reason: Option<ReplyFinishedReason>,
    #[serde(default)]
    structured_output: Option<Box<Map<String, Value>>>,
    #[serde(default)]
    error: Option<Box<ErrorInfo>>,
}

impl TryFrom<RawMsg> for Msg {
    type Error = MsgError;

    fn try_from(raw: RawMsg) -> Result<Self, MsgError> {
        check_role(raw.role, &raw.content)?;
        Ok(Self {
            name: raw.name,
            content: raw.content,
            role: raw.role,
            id: raw.id,
            metadata: raw.metadata,
            created_at: raw.created_at,
            usage: raw.usage,
            finished_at: raw.finished_at,
            finished_reason: raw.finished_reason,
            structured_output: raw.structured_output,
            error: raw.error,
        })
    }
}

fn check_role(role: Role, content: &[ContentBlock]) -> Result<(), MsgError> {
    match content.iter().position(|b| !role.allows(b.kind())) {
        None => Ok(()),
        Some(index) => Err(MsgError::BlockNotAllowed {
            role,
            kind: content[index].kind(),
            index,
        }),
    }
}

/// What a message constructor accepts: a string (one text block) or blocks.
#[derive(Debug, Clone, PartialEq)]
pub enum MsgContent {
    /// Text, which becomes one text block.
    Text(String),
    /// Blocks, used as they are.
    Blocks(Vec<ContentBlock>),
}

impl MsgContent {
    fn into_blocks(self, stamper: &dyn Stamper) -> Vec<ContentBlock> {
        match self {
            Self::Text(t) => vec![ContentBlock::Text(TextBlock::stamped(t, stamper))],
            Self::Blocks(b) => b,
        }
    }
}

impl From<&str> for MsgContent {
    fn from(s: &str) -> Self {
        Self::Text(s.to_owned())
    }
}

impl From<String> for MsgContent {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<Vec<ContentBlock>> for MsgContent {
    fn from(b: Vec<ContentBlock>) -> Self {
        Self::Blocks(b)
    }
}

impl From<ContentBlock> for MsgContent {
    fn from(b: ContentBlock) -> Self {
        Self::Blocks(vec![b])
    }
}

impl<const N: usize> From<[ContentBlock; N]> for MsgContent {
    fn from(b: [ContentBlock; N]) -> Self {
        Self::Blocks(b.into())
    }
}

impl Msg {
    /// A message of any role, checking that the role may hold every block.
    ///
    /// User and system messages are complete when created (`finished_at` is
    /// set); assistant messages are open until their reply ends.
    ///
    /// # Errors
    /// [`MsgError::BlockNotAllowed`] for a block the role may not hold.
    pub fn new(
        name: impl Into<String>,
        role: Role,
        content: impl Into<MsgContent>,
    ) -> Result<Self, MsgError> {
        Self::stamped(name, role, content, &SystemStamper)
    }

    /// Like [`Msg::new`], with the id and time from `stamper`.
    ///
    /// # Errors
    /// [`MsgError::BlockNotAllowed`] for a block the role may not hold.
    pub fn stamped(
        name: impl Into<String>,
        role: Role,
        content: impl Into<MsgContent>,
        stamper: &dyn Stamper,
    ) -> Result<Self, MsgError> {
        let content = content.into().into_blocks(stamper);
        check_role(role, &content)?;
        let created_at = stamper.now();
        let finished_at = (role != Role::Assistant).then(|| created_at.clone());
        Ok(Self {
            name: name.into(),
            content,
            role,
            id: stamper.new_id(),
            metadata: Metadata::new(),
            created_at,
            usage: None,
            finished_at,
            finished_reason: None,
            structured_output: None,
            error: None,
        })
    }

    /// A message of one text block. Every role may hold text, so this
    /// cannot fail.
    pub fn from_text(name: impl Into<String>, role: Role, text: impl Into<String>) -> Self {
        let stamper = &SystemStamper;
        let created_at = stamper.now();
        let finished_at = (role != Role::Assistant).then(|| created_at.clone());
        Self {
            name: name.into(),
            content: vec![ContentBlock::Text(TextBlock::stamped(text, stamper))],
            role,
            id: stamper.new_id(),
            metadata: Metadata::new(),
            created_at,
            usage: None,
            finished_at,
            finished_reason: None,
            structured_output: None,
            error: None,
        }
    }

    /// A user message (text and data blocks).
    ///
    /// # Errors
    /// [`MsgError::BlockNotAllowed`] for any other block.
    pub fn user(name: impl Into<String>, content: impl Into<MsgContent>) -> Result<Self, MsgError> {
        Self::new(name, Role::User, content)
    }

    /// An assistant message (any block).
    ///
    /// # Errors
    /// Never fails today; kept fallible like the other constructors.
    pub fn assistant(
        name: impl Into<String>,
        content: impl Into<MsgContent>,
    ) -> Result<Self, MsgError> {
        Self::new(name, Role::Assistant, content)
    }

    /// A system message (text blocks only).
    ///
    /// # Errors
    /// [`MsgError::BlockNotAllowed`] for any other block.
    pub fn system(
        name: impl Into<String>,
        content: impl Into<MsgContent>,
    ) -> Result<Self, MsgError> {
        Self::new(name, Role::System, content)
    }

    /// An empty, open assistant message with the given id: the message a
    /// reply's events are appended to (see [`Msg::append_event`]).
    pub fn reply(name: impl Into<String>, reply_id: impl Into<Id>) -> Self {
        Self::reply_stamped(name, reply_id, &SystemStamper)
    }

    /// Like [`Msg::reply`], with the creation time from `stamper`.
    pub fn reply_stamped(
        name: impl Into<String>,
        reply_id: impl Into<Id>,
        stamper: &dyn Stamper,
    ) -> Self {
        Self {
            name: name.into(),
            content: Vec::new(),
            role: Role::Assistant,
            id: reply_id.into(),
            metadata: Metadata::new(),
            created_at: stamper.now(),
            usage: None,
            finished_at: None,
            finished_reason: None,
            structured_output: None,
            error: None,
        }
    }

    /// Checks the role constraints again (after editing `content` directly).
    ///
    /// # Errors
    /// [`MsgError::BlockNotAllowed`] for the first offending block.
    pub fn validate(&self) -> Result<(), MsgError> {
        check_role(self.role, &self.content)
    }

    /// The text blocks joined with `separator`.
    #[must_use]
    pub fn text(&self, separator: &str) -> String {
        join_text(
            self.content.iter().filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            }),
            separator,
        )
    }

    /// The blocks of one kind, in order.
    pub fn blocks_of(&self, kind: BlockKind) -> impl Iterator<Item = &ContentBlock> {
        self.content.iter().filter(move |b| b.kind() == kind)
    }

    /// Whether the message holds at least one block of `kind`.
    #[must_use]
    pub fn has_blocks(&self, kind: BlockKind) -> bool {
        self.content.iter().any(|b| b.kind() == kind)
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &crate::ToolCallBlock> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolCall(c) => Some(c),
            _ => None,
        })
    }

    /// The tool results, in order.
    pub fn tool_results(&self) -> impl Iterator<Item = &crate::ToolResultBlock> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolResult(r) => Some(r),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataBlock, DataSource, HintBlock, ToolCallBlock, UrlSource};
    use pretty_assertions::assert_eq;

    fn image() -> ContentBlock {
        let src = UrlSource::new("https://example.com/cat.jpg", "image/jpeg").unwrap();
        DataBlock::new(DataSource::Url(src)).into()
    }

    #[test]
    fn constructors_enforce_role_constraints_with_a_typed_error() {
        assert!(Msg::user("u", vec![TextBlock::new("hi").into(), image()]).is_ok());
        let err = Msg::system("s", vec![TextBlock::new("x").into(), image()]).unwrap_err();
        assert_eq!(
            err,
            MsgError::BlockNotAllowed {
                role: Role::System,
                kind: BlockKind::Data,
                index: 1
            }
        );
        let call: ContentBlock = ToolCallBlock::new("c", "Bash", "{}").into();
        assert!(Msg::user("u", call.clone()).is_err());
        assert!(Msg::user("u", ContentBlock::from(HintBlock::new("h", None))).is_err());
        assert!(Msg::assistant("a", call).is_ok());
    }

    #[test]
    fn user_messages_are_finished_when_created_and_assistant_ones_are_open() {
        let u = Msg::user("u", "hi").unwrap();
        assert_eq!(u.finished_at.as_ref(), Some(&u.created_at));
        let a = Msg::assistant("a", "hello").unwrap();
        assert_eq!(a.finished_at, None);
    }

    #[test]
    fn text_joins_text_blocks_with_the_separator() {
        let m = Msg::assistant(
            "a",
            vec![
                TextBlock::new("one").into(),
                image(),
                TextBlock::new("two").into(),
            ],
        )
        .unwrap();
        assert_eq!(m.text("\n"), "one\ntwo");
        assert_eq!(m.blocks_of(BlockKind::Data).count(), 1);
        assert!(m.has_blocks(BlockKind::Text));
        assert!(!m.has_blocks(BlockKind::ToolCall));
    }

    #[test]
    fn parsing_rejects_a_role_block_mismatch_and_a_plain_string_content() {
        let bad = serde_json::json!({"name": "u", "role": "user",
            "content": [{"type": "tool_call", "id": "c", "name": "n", "input": "{}"}]});
        let err = serde_json::from_value::<Msg>(bad).unwrap_err().to_string();
        assert!(err.contains("tool_call"), "{err}");
        let s = serde_json::json!({"name": "u", "role": "user", "content": "hi"});
        assert!(serde_json::from_value::<Msg>(s).is_err());
    }
}
