//! What a tool streams ([`ToolChunk`]) and what the chunks add up to
//! ([`ToolResponse`]).

use oxiscope_message::stamp;
use oxiscope_message::{
    DataBlock, MediaBlock, RichContent, TextBlock, ToolResultBlock, ToolResultState,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One piece of a tool's output.
///
/// A tool yields any number of chunks; the last one has `is_last = true`
/// and a final `state`. Text in a chunk continues the text of the previous
/// chunk (see [`ToolResponse::append_chunk`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolChunk {
    /// Text and data blocks.
    pub content: Vec<MediaBlock>,
    /// `running` while more is coming, then how the call ended.
    #[serde(default)]
    pub state: ToolResultState,
    /// Whether this is the tool's final chunk.
    #[serde(default = "yes")]
    pub is_last: bool,
    /// Tool-specific data (exit code, counts, paths, ...).
    #[serde(default)]
    pub metadata: Map<String, Value>,
    /// The chunk id.
    #[serde(default = "stamp::new_id")]
    pub id: String,
}

fn yes() -> bool {
    true
}

impl ToolChunk {
    /// A final chunk with `content` and `state`.
    pub fn new(content: Vec<MediaBlock>, state: ToolResultState) -> Self {
        Self {
            content,
            state,
            is_last: true,
            metadata: Map::new(),
            id: stamp::new_id(),
        }
    }

    /// A final, successful text chunk.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![TextBlock::new(text).into()], ToolResultState::Success)
    }

    /// A final error chunk the model reads.
    pub fn error(text: impl Into<String>) -> Self {
        Self::new(vec![TextBlock::new(text).into()], ToolResultState::Error)
    }

    /// A final, successful data chunk (an image, a document, ...).
    pub fn data(block: DataBlock) -> Self {
        Self::new(vec![block.into()], ToolResultState::Success)
    }

    /// An intermediate text chunk: `running`, more to come.
    pub fn partial(text: impl Into<String>) -> Self {
        Self {
            is_last: false,
            ..Self::new(vec![TextBlock::new(text).into()], ToolResultState::Running)
        }
    }

    /// Replaces the state.
    #[must_use]
    pub fn with_state(mut self, state: ToolResultState) -> Self {
        self.state = state;
        self
    }

    /// Adds one metadata entry.
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// The text parts joined without a separator.
    #[must_use]
    pub fn text_content(&self) -> String {
        RichContent::Blocks(self.content.clone()).text("")
    }
}

/// Chunks of one call added up: the finished response of a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResponse {
    /// Text and data blocks; consecutive text is merged into one block.
    pub content: Vec<MediaBlock>,
    /// How the call ended; an `error` seen in any chunk is kept.
    #[serde(default = "success")]
    pub state: ToolResultState,
    /// Metadata of all chunks, later keys overwriting earlier ones.
    #[serde(default)]
    pub metadata: Map<String, Value>,
    /// The response id.
    #[serde(default = "stamp::new_id")]
    pub id: String,
}

fn success() -> ToolResultState {
    ToolResultState::Success
}

impl Default for ToolResponse {
    fn default() -> Self {
        Self {
            content: Vec::new(),
            state: ToolResultState::Running,
            metadata: Map::new(),
            id: stamp::new_id(),
        }
    }
}

impl ToolResponse {
    /// An empty response, still `running`.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one chunk.
    ///
    /// A text block continues the previous block when that is text too (its
    /// id and timestamps stay); data blocks are appended. The state follows
    /// the chunks, except that once `error` was seen it stays `error`.
    /// Metadata keys are merged.
    pub fn append_chunk(&mut self, chunk: ToolChunk) {
        for block in chunk.content {
            match (self.content.last_mut(), block) {
                (Some(MediaBlock::Text(prev)), MediaBlock::Text(next)) => {
                    prev.text.push_str(&next.text);
                }
                (_, block) => self.content.push(block),
            }
        }
        if self.state != ToolResultState::Error {
            self.state = chunk.state;
        }
        self.metadata.extend(chunk.metadata);
    }

    /// Whether the response says the call failed.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.state == ToolResultState::Error
    }

    /// The text parts joined without a separator.
    #[must_use]
    pub fn text(&self) -> String {
        RichContent::Blocks(self.content.clone()).text("")
    }

    /// The response as the result block of the call `call_id` to `name`.
    ///
    /// A response still `running` (the tool never sent a final state) is
    /// reported as `success`.
    #[must_use]
    pub fn into_result_block(
        self,
        call_id: impl Into<oxiscope_message::Id>,
        name: impl Into<String>,
    ) -> ToolResultBlock {
        let state = match self.state {
            ToolResultState::Running => ToolResultState::Success,
            other => other,
        };
        let mut block =
            ToolResultBlock::new(call_id, name, RichContent::Blocks(self.content), state);
        block.metadata = self.metadata.into();
        block
    }
}
