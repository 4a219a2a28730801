//! What parsers produce ([`Section`]) and what chunkers produce ([`Chunk`]).
//!
//! Both serialise as AgentScope's pydantic models do: `content` is a text
//! or data block with its `type` tag, `source` the file name, `metadata` a
//! JSON object (`{"page": 3}`, `{"slide": 2}`, `{"sheet": "Q3"}`,
//! `{"media_type": "image/png"}`).

use oxiscope_message::{DataBlock, MediaBlock, TextBlock};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// JSON metadata of a section or chunk.
pub type Metadata = Map<String, Value>;

/// One natural region of a source file: a PDF page, a slide, a run of Word
/// paragraphs, a sheet, an embedded image.
///
/// A chunker never builds a chunk from two sections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// Text, or an image as a data block.
    pub content: MediaBlock,
    /// The source file name.
    pub source: String,
    /// Format-specific metadata (see the module docs).
    #[serde(default)]
    pub metadata: Metadata,
}

impl Section {
    /// A text section.
    pub fn text(text: impl Into<String>, source: &str, metadata: Metadata) -> Self {
        Self {
            content: MediaBlock::Text(TextBlock::new(text)),
            source: source.to_owned(),
            metadata,
        }
    }

    /// A data (image) section.
    #[must_use]
    pub fn data(block: DataBlock, source: &str, metadata: Metadata) -> Self {
        Self {
            content: MediaBlock::Data(block),
            source: source.to_owned(),
            metadata,
        }
    }

    /// The text, when this is a text section.
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            MediaBlock::Text(t) => Some(&t.text),
            MediaBlock::Data(_) => None,
        }
    }
}

/// One unit to embed and store: a slice of a text section, or a whole data
/// section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// The slice of text, or the data block unchanged.
    pub content: MediaBlock,
    /// The source file name, from the section.
    pub source: String,
    /// Position in the chunker's output, from 0.
    pub chunk_index: usize,
    /// Length of the chunker's output; the same on every chunk.
    pub total_chunks: usize,
    /// The section's metadata.
    #[serde(default)]
    pub metadata: Metadata,
}

impl Chunk {
    /// The text, when this is a text chunk.
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            MediaBlock::Text(t) => Some(&t.text),
            MediaBlock::Data(_) => None,
        }
    }
}

/// Metadata with one entry.
pub(crate) fn meta(key: &str, value: impl Into<Value>) -> Metadata {
    let mut m = Map::new();
    m.insert(key.to_owned(), value.into());
    m
}
