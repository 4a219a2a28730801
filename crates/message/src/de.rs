//! One-pass parsing of content blocks and rich content.
//!
//! Saved states and event streams are mostly content blocks, so their
//! parsing decides how fast a state loads and how much memory it keeps:
//!
//! - A block whose first key is `type` (how both AgentScope and Oxiscope
//!   write them) is parsed straight into its typed struct. Any other block
//!   (tag elsewhere or missing) is gathered into a JSON object first, as
//!   before, so the lenient cases still parse.
//! - [`RichContent`] is a string or an array; the JSON type picks the
//!   variant without buffering the value.
//! - Parsed lists are trimmed to their length ([`shrink`]): a list grown
//!   while parsing keeps room for at least four elements, which for a
//!   one-block message is three unused blocks kept for as long as the
//!   message lives.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::block::{
    BlockKind, ContentBlock, DataBlock, HintBlock, MediaBlock, RichContent, TextBlock,
    ThinkingBlock, ToolCallBlock, ToolResultBlock,
};

/// Parses a list and trims its capacity to its length.
pub(crate) fn shrink<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    let mut items = Vec::<T>::deserialize(d)?;
    items.shrink_to_fit();
    Ok(items)
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(BlockVisitor)
    }
}

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = ContentBlock;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ContentBlock, A::Error> {
        match map.next_key_seed(KeySeed)? {
            Some(FirstKey::Type) => {
                let kind = map.next_value_seed(Tag)?;
                let rest = de::value::MapAccessDeserializer::new(map);
                typed(kind, rest)
            }
            Some(FirstKey::Other(key)) => {
                let mut object = Map::new();
                object.insert(key, map.next_value()?);
                while let Some((key, value)) = map.next_entry::<String, Value>()? {
                    object.insert(key, value);
                }
                from_object(object)
            }
            None => from_object(Map::new()),
        }
    }
}

/// A block gathered into an object: the tag anywhere, or missing (text).
fn from_object<E: de::Error>(mut object: Map<String, Value>) -> Result<ContentBlock, E> {
    let kind = match object.remove("type") {
        // A block without a tag is text, as in AgentScope.
        None => BlockKind::Text,
        Some(Value::String(tag)) => kind_of(&tag)?,
        Some(other) => {
            return Err(E::custom(format!(
                "content block `type` must be a string, got {other}"
            )));
        }
    };
    typed(kind, Value::Object(object)).map_err(|e| E::custom(e.to_string()))
}

fn kind_of<E: de::Error>(tag: &str) -> Result<BlockKind, E> {
    BlockKind::from_tag(tag).ok_or_else(|| {
        E::custom(format!(
            "unknown content block type {tag:?}: expected text, thinking, data, hint, tool_call \
             or tool_result"
        ))
    })
}

/// Parses the block's fields (the tag already read) as a block of `kind`.
fn typed<'de, D: Deserializer<'de>>(kind: BlockKind, d: D) -> Result<ContentBlock, D::Error> {
    let block = match kind {
        BlockKind::Text => TextBlock::deserialize(d).map(ContentBlock::Text),
        BlockKind::Thinking => ThinkingBlock::deserialize(d).map(ContentBlock::Thinking),
        BlockKind::Data => DataBlock::deserialize(d).map(ContentBlock::Data),
        BlockKind::Hint => HintBlock::deserialize(d).map(ContentBlock::Hint),
        BlockKind::ToolCall => ToolCallBlock::deserialize(d).map(ContentBlock::ToolCall),
        BlockKind::ToolResult => ToolResultBlock::deserialize(d).map(ContentBlock::ToolResult),
    };
    block.map_err(|e| {
        let e = e.to_string();
        de::Error::custom(format!(
            "invalid {} block: {}",
            kind.as_str(),
            without_position(&e)
        ))
    })
}

/// The message of a parser error without its ` at line L column C` suffix
/// (the parser adds the position again to the outer error).
fn without_position(message: &str) -> &str {
    let Some(at) = message.rfind(" at line ") else {
        return message;
    };
    let tail = &message[at + " at line ".len()..];
    let mut parts = tail.splitn(2, " column ");
    let numeric =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    if numeric(parts.next()) && numeric(parts.next()) {
        &message[..at]
    } else {
        message
    }
}

/// The first key of a block: `type` or another one (kept).
enum FirstKey {
    Type,
    Other(String),
}

/// Reads a block's first key.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = FirstKey;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FirstKey, D::Error> {
        d.deserialize_str(FirstKeyVisitor)
    }
}

struct FirstKeyVisitor;

impl Visitor<'_> for FirstKeyVisitor {
    type Value = FirstKey;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<FirstKey, E> {
        Ok(if key == "type" {
            FirstKey::Type
        } else {
            FirstKey::Other(key.to_owned())
        })
    }

    fn visit_string<E: de::Error>(self, key: String) -> Result<FirstKey, E> {
        Ok(if key == "type" {
            FirstKey::Type
        } else {
            FirstKey::Other(key)
        })
    }
}

/// The value of a block's `type`.
struct Tag;

impl<'de> DeserializeSeed<'de> for Tag {
    type Value = BlockKind;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<BlockKind, D::Error> {
        d.deserialize_any(TagVisitor)
    }
}

struct TagVisitor;

impl<'de> Visitor<'de> for TagVisitor {
    type Value = BlockKind;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("content block `type` as a string")
    }

    fn visit_str<E: de::Error>(self, tag: &str) -> Result<BlockKind, E> {
        kind_of(tag)
    }

    fn visit_unit<E: de::Error>(self) -> Result<BlockKind, E> {
        Err(E::custom("content block `type` must be a string, got null"))
    }
}

impl<'de> Deserialize<'de> for RichContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RichVisitor)
    }
}

struct RichVisitor;

impl<'de> Visitor<'de> for RichVisitor {
    type Value = RichContent;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or a list of text and data blocks")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<RichContent, E> {
        Ok(RichContent::Text(text.to_owned()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<RichContent, E> {
        Ok(RichContent::Text(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RichContent, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(block) = seq.next_element::<MediaBlock>()? {
            blocks.push(block);
        }
        blocks.shrink_to_fit();
        Ok(RichContent::Blocks(blocks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn a_block_with_its_tag_last_parses_like_one_with_it_first() {
        let first = json!({"type": "tool_call", "id": "c", "name": "n", "input": "{}",
                           "created_at": "t"});
        let last = r#"{"id": "c", "name": "n", "input": "{}", "created_at": "t",
                       "type": "tool_call"}"#;
        let a: ContentBlock = serde_json::from_value(first.clone()).unwrap();
        let b: ContentBlock = serde_json::from_str(last).unwrap();
        let c: ContentBlock = serde_json::from_str(&first.to_string()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
    }

    #[test]
    fn a_bad_block_names_its_kind_and_the_position_once() {
        let err = serde_json::from_str::<ContentBlock>(r#"{"type": "text", "id": "x"}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(err.matches(" at line ").count(), 1, "{err}");
        assert!(
            err.starts_with("invalid text block: missing field `text`"),
            "{err}"
        );
        let err = serde_json::from_str::<ContentBlock>(r#"{"type": 3, "text": "x"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("type"), "{err}");
        let err = serde_json::from_str::<ContentBlock>(r#"{"text": "x", "type": 3}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("must be a string, got 3"), "{err}");
    }

    #[test]
    fn rich_content_keeps_the_form_it_was_written_in() {
        let text: RichContent = serde_json::from_str(r#""plain""#).unwrap();
        assert_eq!(text, RichContent::Text("plain".into()));
        let blocks: RichContent = serde_json::from_str(
            r#"[{"type": "text", "text": "a", "id": "i", "created_at": "t"}]"#,
        )
        .unwrap();
        let RichContent::Blocks(blocks) = blocks else {
            panic!("{blocks:?}")
        };
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks.capacity(), 1);
        assert!(serde_json::from_str::<RichContent>("3").is_err());
        let from_value: RichContent = serde_json::from_value(json!("v")).unwrap();
        assert_eq!(from_value, RichContent::Text("v".into()));
    }

    #[test]
    fn a_parsed_list_has_no_spare_room() {
        let blocks: Vec<ContentBlock> = serde_json::from_str::<Vec<ContentBlock>>(
            r#"[{"type": "text", "text": "a", "id": "i", "created_at": "t"}]"#,
        )
        .unwrap();
        let mut d = serde_json::Deserializer::from_str(r#"[1, 2, 3, 4, 5]"#);
        let numbers: Vec<u8> = shrink(&mut d).unwrap();
        assert_eq!(numbers.capacity(), 5);
        assert_eq!(blocks.len(), 1);
    }

    #[test]
    fn the_position_suffix_is_only_cut_when_it_is_one() {
        assert_eq!(without_position("bad at line 1 column 20"), "bad");
        assert_eq!(without_position("bad at line one"), "bad at line one");
        assert_eq!(without_position("plain"), "plain");
    }
}
