//! A whole (non-streamed) Anthropic message -> [`ModelDelta`]s.

use oxiscope_model::{ModelDelta, ModelError};
use serde_json::Value;

use super::stream::Decoder;

/// The deltas of a complete `message` object, usage last.
///
/// # Errors
/// [`ModelError::Stream`] when the body is not a message.
pub(crate) fn deltas(body: &Value) -> Result<Vec<ModelDelta>, ModelError> {
    let Some(Value::Array(blocks)) = body.get("content") else {
        return Err(ModelError::Stream {
            message: "the response is not a message: no `content` list".to_owned(),
        });
    };
    let mut decoder = Decoder::default();
    let mut out = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        decoder.block(index as u64, block, true, &mut out)?;
    }
    if let Some(usage) = body.get("usage") {
        decoder.merge_usage(usage);
    }
    out.extend(decoder.usage().map(ModelDelta::Usage));
    Ok(out)
}
