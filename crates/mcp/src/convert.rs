//! An MCP `tools/call` result as a [`ToolChunk`].
//!
//! The result is read in its wire shape (`content[]`, `isError`,
//! `structuredContent`), so content types newer than this code degrade to
//! their JSON text instead of failing.

use oxiscope_message::{
    Base64Source, DataBlock, DataSource, MediaBlock, TextBlock, ToolResultState,
};
use oxiscope_tool::ToolChunk;
use serde_json::Value;

/// Converts the JSON of a `CallToolResult`.
///
/// Text items become text (consecutive ones joined by a newline); image and
/// audio items become base64 data blocks; an embedded resource becomes its
/// text, or a data block for a binary blob; a resource link becomes a line
/// naming it. `isError: true` makes the chunk an error. A result without
/// content shows its `structuredContent` as JSON.
pub(crate) fn result_to_chunk(result: &Value) -> ToolChunk {
    let mut texts: Vec<String> = Vec::new();
    let mut blocks: Vec<MediaBlock> = Vec::new();
    let items = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for item in items {
        match item_to_block(item) {
            Item::Text(text) => texts.push(text),
            Item::Data(block) => {
                flush(&mut texts, &mut blocks);
                blocks.push(block.into());
            }
        }
    }
    if items.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        texts.push(structured.to_string());
    }
    flush(&mut texts, &mut blocks);
    let state = if result.get("isError").and_then(Value::as_bool) == Some(true) {
        ToolResultState::Error
    } else {
        ToolResultState::Success
    };
    let mut chunk = ToolChunk::new(blocks, state);
    if let Some(structured) = result.get("structuredContent") {
        chunk = chunk.with_metadata("structured_content", structured.clone());
    }
    chunk
}

enum Item {
    Text(String),
    Data(DataBlock),
}

fn flush(texts: &mut Vec<String>, blocks: &mut Vec<MediaBlock>) {
    if !texts.is_empty() {
        blocks.push(TextBlock::new(texts.join("\n")).into());
        texts.clear();
    }
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn base64_block(data: &str, media_type: &str, name: Option<&str>) -> DataBlock {
    let mut block = DataBlock::new(DataSource::Base64(Base64Source {
        data: data.to_owned(),
        media_type: media_type.to_owned(),
    }));
    block.name = name.map(str::to_owned);
    block
}

fn item_to_block(item: &Value) -> Item {
    match str_field(item, "type") {
        Some("text") => Item::Text(str_field(item, "text").unwrap_or_default().to_owned()),
        Some("image" | "audio") => match str_field(item, "data") {
            Some(data) => {
                let fallback = if str_field(item, "type") == Some("image") {
                    "image/png"
                } else {
                    "audio/wav"
                };
                let media = str_field(item, "mimeType").unwrap_or(fallback);
                Item::Data(base64_block(data, media, None))
            }
            None => Item::Text(item.to_string()),
        },
        Some("resource") => {
            let resource = item.get("resource").unwrap_or(&Value::Null);
            let uri = str_field(resource, "uri");
            if let Some(text) = str_field(resource, "text") {
                Item::Text(text.to_owned())
            } else if let Some(blob) = str_field(resource, "blob") {
                let media = str_field(resource, "mimeType").unwrap_or("application/octet-stream");
                Item::Data(base64_block(blob, media, uri))
            } else {
                Item::Text(resource.to_string())
            }
        }
        Some("resource_link") => {
            let uri = str_field(item, "uri").unwrap_or_default();
            let name = str_field(item, "name").unwrap_or(uri);
            let mut line = format!("[Resource: {name}] {uri}");
            if let Some(description) = str_field(item, "description") {
                line.push_str(" - ");
                line.push_str(description);
            }
            Item::Text(line)
        }
        _ => Item::Text(item.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn kinds(chunk: &ToolChunk) -> Vec<String> {
        chunk
            .content
            .iter()
            .map(|b| match b {
                MediaBlock::Text(t) => format!("text:{}", t.text),
                MediaBlock::Data(d) => format!("data:{}:{:?}", d.source.media_type(), d.name),
            })
            .collect()
    }

    #[test]
    fn texts_and_images_keep_their_order() {
        let chunk = result_to_chunk(&json!({"content": [
            {"type": "text", "text": "a"},
            {"type": "text", "text": "b"},
            {"type": "image", "data": "AAAA", "mimeType": "image/gif"},
            {"type": "text", "text": "c"}
        ]}));
        assert_eq!(
            kinds(&chunk),
            ["text:a\nb", "data:image/gif:None", "text:c"]
        );
        assert_eq!(chunk.state, ToolResultState::Success);
        assert!(chunk.is_last);
    }

    #[test]
    fn resources_become_text_or_named_data() {
        let chunk = result_to_chunk(&json!({"content": [
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "file:///b.gz", "blob": "H4sI", "mimeType": "application/gzip"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c", "description": "the c file"}
        ]}));
        assert_eq!(
            kinds(&chunk),
            [
                "text:hello",
                "data:application/gzip:Some(\"file:///b.gz\")",
                "text:[Resource: c] file:///c - the c file"
            ]
        );
    }

    #[test]
    fn is_error_makes_an_error_chunk() {
        let chunk = result_to_chunk(
            &json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
        );
        assert_eq!(chunk.state, ToolResultState::Error);
        assert_eq!(chunk.text_content(), "boom");
    }

    #[test]
    fn odd_results_never_fail() {
        let chunk = result_to_chunk(&json!({"structuredContent": {"x": 1}}));
        assert_eq!(chunk.text_content(), r#"{"x":1}"#);
        assert_eq!(chunk.metadata["structured_content"], json!({"x": 1}));
        let chunk = result_to_chunk(&json!({"content": [{"type": "video", "url": "u"}, 7]}));
        assert_eq!(
            chunk.text_content(),
            "{\"type\":\"video\",\"url\":\"u\"}\n7"
        );
        let chunk = result_to_chunk(&json!("not an object"));
        assert!(chunk.content.is_empty());
        assert_eq!(chunk.state, ToolResultState::Success);
    }
}
