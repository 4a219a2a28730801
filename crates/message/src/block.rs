//! Content blocks: the typed parts of a message.
//!
//! Every block serialises with its `type` tag first (`text`, `thinking`,
//! `data`, `hint`, `tool_call`, `tool_result`) and every declared field
//! present, `null` for absent values — the shape AgentScope writes. Parsing is
//! lenient in the same places AgentScope's is: a block without `type` is a
//! text block, and a thinking block keeps unknown provider fields (such as
//! Anthropic's `signature`).

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

use crate::id::Id;
use crate::meta::Metadata;
use crate::permission::PermissionRule;
use crate::stamp::{Stamp, Stamper};

/// A piece of text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "text")]
pub struct TextBlock {
    /// The text.
    pub text: String,
    /// The block id.
    #[serde(default = "Id::random")]
    pub id: Id,
    /// When the block was created.
    #[serde(default = "Stamp::now")]
    pub created_at: Stamp,
    /// When the block was complete; `None` while it streams.
    #[serde(default)]
    pub finished_at: Option<Stamp>,
}

impl TextBlock {
    /// A text block with a fresh id, created now.
    pub fn new(text: impl Into<String>) -> Self {
        Self::stamped(text, &crate::SystemStamper)
    }

    /// A text block whose id and time come from `stamper`.
    pub fn stamped(text: impl Into<String>, stamper: &dyn Stamper) -> Self {
        Self {
            text: text.into(),
            id: stamper.new_id(),
            created_at: stamper.now(),
            finished_at: None,
        }
    }
}

/// The model's reasoning.
///
/// Provider metadata that must be sent back verbatim (Anthropic's
/// `signature`, redacted data, ...) is kept in `extra` and written after the
/// declared fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "thinking", from = "RawThinking")]
pub struct ThinkingBlock {
    /// The reasoning text.
    pub thinking: String,
    /// The block id.
    pub id: Id,
    /// When the block was created.
    pub created_at: Stamp,
    /// When the block was complete; `None` while it streams.
    pub finished_at: Option<Stamp>,
    /// Provider fields this type does not declare, kept as they came.
    #[serde(flatten)]
    pub extra: Metadata,
}

#[derive(Deserialize)]
struct RawThinking {
    thinking: String,
    #[serde(default = "Id::random")]
    id: Id,
    #[serde(default = "Stamp::now")]
    created_at: Stamp,
    #[serde(default)]
    finished_at: Option<Stamp>,
    #[serde(flatten)]
    extra: Metadata,
}

impl From<RawThinking> for ThinkingBlock {
    fn from(mut raw: RawThinking) -> Self {
        // The tag is not an extra field: it is written by the serializer.
        raw.extra.remove("type");
        Self {
            thinking: raw.thinking,
            id: raw.id,
            created_at: raw.created_at,
            finished_at: raw.finished_at,
            extra: raw.extra,
        }
    }
}

impl ThinkingBlock {
    /// A thinking block with a fresh id, created now.
    pub fn new(thinking: impl Into<String>) -> Self {
        Self::stamped(thinking, &crate::SystemStamper)
    }

    /// A thinking block whose id and time come from `stamper`.
    pub fn stamped(thinking: impl Into<String>, stamper: &dyn Stamper) -> Self {
        Self {
            thinking: thinking.into(),
            id: stamper.new_id(),
            created_at: stamper.now(),
            finished_at: None,
            extra: Metadata::new(),
        }
    }
}

/// Inline binary data, base64-encoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Base64Source {
    /// The base64 payload (no `data:` prefix).
    pub data: String,
    /// The MIME type, e.g. `image/png`.
    pub media_type: String,
}

/// Data referenced by URL.
///
/// The URL is normalised on parse as AgentScope does (`https://Example.COM`
/// becomes `https://example.com/`, spaces are escaped); relative paths and
/// strings that are not URLs are rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrlSource {
    /// The absolute URL (`https:`, `file:`, `data:`, `s3:`, ...).
    #[serde(deserialize_with = "deserialize_url")]
    pub url: String,
    /// The MIME type, e.g. `image/jpeg`.
    pub media_type: String,
}

impl UrlSource {
    /// A URL source, normalising `url`.
    ///
    /// # Errors
    /// [`InvalidUrl`] when `url` is not an absolute URL.
    pub fn new(url: &str, media_type: impl Into<String>) -> Result<Self, InvalidUrl> {
        Ok(Self {
            url: normalize_url(url)?,
            media_type: media_type.into(),
        })
    }
}

/// A string that is not an absolute URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URL {url:?}: {reason}")]
pub struct InvalidUrl {
    /// The rejected input.
    pub url: String,
    /// Why it was rejected.
    pub reason: String,
}

/// Normalises an absolute URL the way AgentScope's URL sources are stored.
///
/// # Errors
/// [`InvalidUrl`] when `url` is not an absolute URL.
pub fn normalize_url(url: &str) -> Result<String, InvalidUrl> {
    url::Url::parse(url)
        .map(String::from)
        .map_err(|e| InvalidUrl {
            url: url.to_owned(),
            reason: e.to_string(),
        })
}

fn deserialize_url<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let raw = String::deserialize(d)?;
    normalize_url(&raw).map_err(de::Error::custom)
}

/// Where a data block's bytes are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum DataSource {
    /// Inline base64.
    Base64(Base64Source),
    /// A URL.
    Url(UrlSource),
}

impl DataSource {
    /// The MIME type of the data.
    #[must_use]
    pub fn media_type(&self) -> &str {
        match self {
            Self::Base64(s) => &s.media_type,
            Self::Url(s) => &s.media_type,
        }
    }
}

/// An image, audio clip, document or other binary payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "data")]
pub struct DataBlock {
    /// The block id.
    #[serde(default = "Id::random")]
    pub id: Id,
    /// Where the bytes are.
    pub source: DataSource,
    /// An optional file name.
    #[serde(default)]
    pub name: Option<String>,
    /// When the block was created.
    #[serde(default = "Stamp::now")]
    pub created_at: Stamp,
    /// When the block was complete; `None` while it streams.
    #[serde(default)]
    pub finished_at: Option<Stamp>,
}

impl DataBlock {
    /// A data block with a fresh id, created now.
    pub fn new(source: DataSource) -> Self {
        Self::stamped(source, &crate::SystemStamper)
    }

    /// A data block whose id and time come from `stamper`.
    pub fn stamped(source: DataSource, stamper: &dyn Stamper) -> Self {
        Self {
            id: stamper.new_id(),
            source,
            name: None,
            created_at: stamper.now(),
            finished_at: None,
        }
    }

    /// Sets the file name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// A text or data block: what tool results and hints may hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum MediaBlock {
    /// Text.
    Text(TextBlock),
    /// Binary data.
    Data(DataBlock),
}

impl<'de> Deserialize<'de> for MediaBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match ContentBlock::deserialize(d)? {
            ContentBlock::Text(b) => Ok(Self::Text(b)),
            ContentBlock::Data(b) => Ok(Self::Data(b)),
            other => Err(de::Error::custom(format!(
                "a `{}` block is not allowed here: expected a text or data block",
                other.kind().as_str()
            ))),
        }
    }
}

impl From<TextBlock> for MediaBlock {
    fn from(b: TextBlock) -> Self {
        Self::Text(b)
    }
}

impl From<DataBlock> for MediaBlock {
    fn from(b: DataBlock) -> Self {
        Self::Data(b)
    }
}

/// Either plain text or a list of text / data blocks.
///
/// Tool outputs and hints take both forms; JSON keeps whichever was written.
///
/// Parsing reads a JSON string as [`RichContent::Text`] and an array as
/// [`RichContent::Blocks`] in one pass (see `crate::de`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RichContent {
    /// Plain text.
    Text(String),
    /// Text and data blocks.
    Blocks(Vec<MediaBlock>),
}

impl Default for RichContent {
    fn default() -> Self {
        Self::Blocks(Vec::new())
    }
}

impl RichContent {
    /// The text parts joined with `separator` (data blocks are skipped).
    #[must_use]
    pub fn text(&self, separator: &str) -> String {
        match self {
            Self::Text(t) => t.clone(),
            Self::Blocks(blocks) => join_text(
                blocks.iter().filter_map(|b| match b {
                    MediaBlock::Text(t) => Some(t.text.as_str()),
                    MediaBlock::Data(_) => None,
                }),
                separator,
            ),
        }
    }
}

impl From<String> for RichContent {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<&str> for RichContent {
    fn from(s: &str) -> Self {
        Self::Text(s.to_owned())
    }
}

impl From<Vec<MediaBlock>> for RichContent {
    fn from(b: Vec<MediaBlock>) -> Self {
        Self::Blocks(b)
    }
}

pub(crate) fn join_text<'a>(parts: impl Iterator<Item = &'a str>, separator: &str) -> String {
    let mut out = String::new();
    for (i, part) in parts.enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        out.push_str(part);
    }
    out
}

/// A note for the model injected into the context (runtime state, a
/// scheduled trigger, a team message, ...). Formatters send it as a separate
/// user-role message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "hint")]
pub struct HintBlock {
    /// The hint payload.
    pub hint: RichContent,
    /// The block id.
    #[serde(default = "Id::random")]
    pub id: Id,
    /// Who sent it; often a small JSON object telling a UI how to label it.
    #[serde(default)]
    pub source: Option<String>,
    /// When the block was created.
    #[serde(default = "Stamp::now")]
    pub created_at: Stamp,
    /// When the block was complete; a hint is complete when created.
    #[serde(default = "default_finished_now")]
    pub finished_at: Option<Stamp>,
}

#[allow(clippy::unnecessary_wraps)] // serde default for an `Option` field
fn default_finished_now() -> Option<Stamp> {
    Some(Stamp::now())
}

impl HintBlock {
    /// A hint with a fresh id, created (and finished) now.
    pub fn new(hint: impl Into<RichContent>, source: Option<String>) -> Self {
        Self::stamped(hint, source, &crate::SystemStamper)
    }

    /// A hint whose id and times come from `stamper`.
    pub fn stamped(
        hint: impl Into<RichContent>,
        source: Option<String>,
        stamper: &dyn Stamper,
    ) -> Self {
        let now = stamper.now();
        Self {
            hint: hint.into(),
            id: stamper.new_id(),
            source,
            created_at: now.clone(),
            finished_at: Some(now),
        }
    }
}

/// Where a tool call is in its life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallState {
    /// Produced by the model, not yet decided.
    #[default]
    Pending,
    /// Waiting for the user to confirm it.
    Asking,
    /// Allowed to run.
    Allowed,
    /// Handed to an external executor.
    Submitted,
    /// Its result is in.
    Finished,
}

/// A call of a tool, as the model asked for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_call")]
pub struct ToolCallBlock {
    /// The call id, chosen by the provider; the result reuses it.
    pub id: Id,
    /// The tool name.
    pub name: String,
    /// The arguments as the model wrote them: a JSON string, possibly invalid.
    pub input: String,
    /// Where the call is in its life.
    #[serde(default)]
    pub state: ToolCallState,
    /// Rules the permission engine suggests to approve similar calls.
    #[serde(default)]
    pub suggested_rules: Vec<PermissionRule>,
    /// When the block was created.
    #[serde(default = "Stamp::now")]
    pub created_at: Stamp,
    /// When the arguments were complete.
    #[serde(default)]
    pub finished_at: Option<Stamp>,
}

impl ToolCallBlock {
    /// A pending tool call created now.
    pub fn new(id: impl Into<Id>, name: impl Into<String>, input: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            input: input.into(),
            state: ToolCallState::Pending,
            suggested_rules: Vec::new(),
            created_at: Stamp::now(),
            finished_at: None,
        }
    }
}

/// How a tool call ended (or that it is still running).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolResultState {
    /// The tool succeeded.
    Success,
    /// The tool failed; the output says why.
    Error,
    /// The call was interrupted.
    Interrupted,
    /// The user or a rule denied the call.
    Denied,
    /// The tool is still running.
    #[default]
    Running,
}

/// The result of a tool call; `id` equals the call's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_result")]
pub struct ToolResultBlock {
    /// The id of the tool call this answers.
    pub id: Id,
    /// The tool name.
    pub name: String,
    /// What the tool returned.
    pub output: RichContent,
    /// How the call ended.
    #[serde(default)]
    pub state: ToolResultState,
    /// Tool-specific extra data (exit code, paths, ...).
    #[serde(default)]
    pub metadata: Metadata,
    /// When the block was created.
    #[serde(default = "Stamp::now")]
    pub created_at: Stamp,
    /// When the result was complete.
    #[serde(default)]
    pub finished_at: Option<Stamp>,
}

impl ToolResultBlock {
    /// A finished result created now.
    pub fn new(
        id: impl Into<Id>,
        name: impl Into<String>,
        output: impl Into<RichContent>,
        state: ToolResultState,
    ) -> Self {
        let now = Stamp::now();
        Self {
            id: id.into(),
            name: name.into(),
            output: output.into(),
            state,
            metadata: Metadata::new(),
            created_at: now.clone(),
            finished_at: Some(now),
        }
    }
}

/// The kind of a content block, i.e. its `type` tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// `text`
    Text,
    /// `thinking`
    Thinking,
    /// `data`
    Data,
    /// `hint`
    Hint,
    /// `tool_call`
    ToolCall,
    /// `tool_result`
    ToolResult,
}

impl BlockKind {
    /// The wire tag.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Thinking => "thinking",
            Self::Data => "data",
            Self::Hint => "hint",
            Self::ToolCall => "tool_call",
            Self::ToolResult => "tool_result",
        }
    }

    pub(crate) fn from_tag(tag: &str) -> Option<Self> {
        Some(match tag {
            "text" => Self::Text,
            "thinking" => Self::Thinking,
            "data" => Self::Data,
            "hint" => Self::Hint,
            "tool_call" => Self::ToolCall,
            "tool_result" => Self::ToolResult,
            _ => return None,
        })
    }
}

/// One part of a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ContentBlock {
    /// Text.
    Text(TextBlock),
    /// Reasoning.
    Thinking(ThinkingBlock),
    /// Binary data.
    Data(DataBlock),
    /// A hint for the model.
    Hint(HintBlock),
    /// A tool call.
    ToolCall(ToolCallBlock),
    /// A tool result.
    ToolResult(ToolResultBlock),
}

impl ContentBlock {
    /// The kind of this block.
    #[must_use]
    pub fn kind(&self) -> BlockKind {
        match self {
            Self::Text(_) => BlockKind::Text,
            Self::Thinking(_) => BlockKind::Thinking,
            Self::Data(_) => BlockKind::Data,
            Self::Hint(_) => BlockKind::Hint,
            Self::ToolCall(_) => BlockKind::ToolCall,
            Self::ToolResult(_) => BlockKind::ToolResult,
        }
    }

    /// The block id (for tool calls and results, the call id).
    #[must_use]
    pub fn id(&self) -> &str {
        match self {
            Self::Text(b) => &b.id,
            Self::Thinking(b) => &b.id,
            Self::Data(b) => &b.id,
            Self::Hint(b) => &b.id,
            Self::ToolCall(b) => &b.id,
            Self::ToolResult(b) => &b.id,
        }
    }
}

macro_rules! block_from {
    ($($variant:ident($ty:ty)),* $(,)?) => {$(
        impl From<$ty> for ContentBlock {
            fn from(b: $ty) -> Self {
                Self::$variant(b)
            }
        }
    )*};
}

block_from!(
    Text(TextBlock),
    Thinking(ThinkingBlock),
    Data(DataBlock),
    Hint(HintBlock),
    ToolCall(ToolCallBlock),
    ToolResult(ToolResultBlock),
);

impl From<MediaBlock> for ContentBlock {
    fn from(b: MediaBlock) -> Self {
        match b {
            MediaBlock::Text(t) => Self::Text(t),
            MediaBlock::Data(d) => Self::Data(d),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn a_block_without_type_is_text() {
        let b: ContentBlock = serde_json::from_value(json!({"text": "x"})).unwrap();
        let ContentBlock::Text(t) = b else {
            panic!("expected text, got {b:?}")
        };
        assert_eq!(t.text, "x");
        assert_eq!(t.id.len(), 32);
    }

    #[test]
    fn an_unknown_block_type_is_an_error_naming_it() {
        let err = serde_json::from_value::<ContentBlock>(json!({"type": "image", "url": "x"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"image\""), "{err}");
    }

    #[test]
    fn thinking_keeps_provider_fields_after_declared_ones() {
        let v = json!({"type": "thinking", "thinking": "hm", "id": "a", "created_at": "t",
                       "finished_at": null, "signature": "sig"});
        let b: ContentBlock = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            serde_json::to_string(&v).unwrap()
        );
    }

    #[test]
    fn urls_are_normalised_and_relative_paths_rejected() {
        let s = UrlSource::new("HTTPS://Example.COM/a b?x=1#frag", "image/png").unwrap();
        assert_eq!(s.url, "https://example.com/a%20b?x=1#frag");
        assert!(UrlSource::new("/relative/path.png", "image/png").is_err());
        assert!(UrlSource::new("not a url", "image/png").is_err());
    }

    #[test]
    fn a_tool_call_block_is_rejected_inside_a_tool_output() {
        let v = json!([{"type": "tool_call", "id": "c", "name": "n", "input": "{}"}]);
        assert!(serde_json::from_value::<Vec<MediaBlock>>(v).is_err());
    }
}
