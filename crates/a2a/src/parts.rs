//! Our messages to A2A parts.

use oxiscope_message::{ContentBlock, DataSource, Msg};

use crate::error::{Error, Result};
use crate::wire::Part;

/// The parts of `msgs`, flattened into one A2A message: text blocks become
/// text parts, base64 data blocks raw parts, URL data blocks URL parts.
///
/// # Errors
/// [`Error::InvalidInput`] for any other block (thinking, tool calls,
/// hints: A2A carries no such thing) or when there is nothing to send.
pub(crate) fn to_parts(msgs: &[Msg]) -> Result<Vec<Part>> {
    let mut parts = Vec::new();
    for msg in msgs {
        for block in &msg.content {
            parts.push(block_to_part(block)?);
        }
    }
    if parts.is_empty() {
        return Err(Error::InvalidInput(
            "there is no text or data to send".to_owned(),
        ));
    }
    Ok(parts)
}

fn block_to_part(block: &ContentBlock) -> Result<Part> {
    match block {
        ContentBlock::Text(t) => Ok(Part::text(t.text.clone())),
        ContentBlock::Data(d) => {
            let mut part = Part {
                filename: d.name.clone(),
                ..Part::default()
            };
            match &d.source {
                DataSource::Base64(s) => {
                    part.raw = Some(s.data.clone());
                    part.media_type = Some(s.media_type.clone());
                }
                DataSource::Url(s) => {
                    part.url = Some(s.url.clone());
                    part.media_type = Some(s.media_type.clone());
                }
            }
            Ok(part)
        }
        other => Err(Error::InvalidInput(format!(
            "a {} block cannot be sent to an A2A agent (only text and data blocks)",
            other.kind().as_str()
        ))),
    }
}
