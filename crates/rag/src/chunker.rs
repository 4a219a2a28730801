//! [`ApproxTokenChunker`]: slices text sections by an approximate token
//! count, `utf8_bytes / 4`, with no tokenizer.

use std::ops::Range;

use oxiscope_message::{MediaBlock, TextBlock};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::section::{Chunk, Section};

/// The parameters of [`ApproxTokenChunker`], with AgentScope's names and
/// defaults (`chunk_size = 512`, `overlap = 50`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ApproxTokenParameters {
    /// Most approximate tokens in one chunk (at least 1).
    pub chunk_size: usize,
    /// Approximate tokens shared by consecutive chunks (less than
    /// `chunk_size`).
    pub overlap: usize,
}

impl Default for ApproxTokenParameters {
    fn default() -> Self {
        Self {
            chunk_size: 512,
            overlap: 50,
        }
    }
}

/// Splits text sections into chunks of at most `chunk_size` approximate
/// tokens (`utf8_bytes / 4`), with no tokenizer.
///
/// The contract is AgentScope's:
/// - a text section whose approximate count is at most `chunk_size` stays
///   whole (so up to `4 * chunk_size + 3` bytes); longer text is cut into
///   pieces of at most `4 * chunk_size` bytes, each next piece starting
///   about `4 * overlap` bytes before the end of the previous one;
/// - cuts fall on character boundaries, never inside a UTF-8 sequence (and,
///   as in AgentScope, not specially on whitespace);
/// - data sections pass through as one chunk each, unchanged;
/// - no chunk spans two sections;
/// - `chunk_index` runs from 0 over the whole output and every chunk carries
///   the same `total_chunks`; `source` and `metadata` come from the section.
///
/// An empty text section yields one empty chunk, as in AgentScope. With a
/// tiny budget next to multi-byte characters a piece may lie inside the one
/// before it (as in AgentScope); it never leaves a gap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApproxTokenChunker {
    parameters: ApproxTokenParameters,
}

impl ApproxTokenChunker {
    /// The identifier AgentScope stores with a knowledge base.
    pub const CHUNKER_TYPE: &'static str = "approx_token";

    /// A chunker with `parameters`.
    ///
    /// # Errors
    /// [`Error::InvalidParameters`] when `chunk_size` is 0 or `overlap` is
    /// not less than `chunk_size`.
    pub fn new(parameters: ApproxTokenParameters) -> Result<Self> {
        if parameters.chunk_size == 0 {
            return Err(Error::InvalidParameters(
                "chunk_size must be at least 1".into(),
            ));
        }
        if parameters.overlap >= parameters.chunk_size {
            return Err(Error::InvalidParameters(format!(
                "overlap must be less than chunk_size, got overlap={}, chunk_size={}",
                parameters.overlap, parameters.chunk_size
            )));
        }
        Ok(Self { parameters })
    }

    /// The parameters.
    #[must_use]
    pub fn parameters(&self) -> ApproxTokenParameters {
        self.parameters
    }

    /// The approximate token count of `text`: its UTF-8 length divided by 4.
    #[must_use]
    pub fn approx_tokens(text: &str) -> usize {
        text.len() / 4
    }

    /// Chunks `sections`, in order.
    #[must_use]
    pub fn chunk(&self, sections: &[Section]) -> Vec<Chunk> {
        let mut chunks = Vec::new();
        for section in sections {
            match &section.content {
                MediaBlock::Text(block) => {
                    for range in self.split_ranges(&block.text) {
                        let piece = block.text.get(range).unwrap_or_default();
                        chunks.push(new_chunk(MediaBlock::Text(TextBlock::new(piece)), section));
                    }
                }
                MediaBlock::Data(_) => chunks.push(new_chunk(section.content.clone(), section)),
            }
        }
        let total = chunks.len();
        for (index, chunk) in chunks.iter_mut().enumerate() {
            chunk.chunk_index = index;
            chunk.total_chunks = total;
        }
        chunks
    }

    /// The byte ranges of `text` that become chunks, in order. Every range
    /// starts and ends on a character boundary; consecutive ranges overlap
    /// by about `4 * overlap` bytes and together cover the whole text.
    #[must_use]
    pub fn split_ranges(&self, text: &str) -> Vec<Range<usize>> {
        if Self::approx_tokens(text) <= self.parameters.chunk_size {
            return std::iter::once(0..text.len()).collect();
        }
        let budget = self.parameters.chunk_size.saturating_mul(4);
        let overlap = self.parameters.overlap.saturating_mul(4);
        let mut ranges = Vec::new();
        let mut start = 0;
        while start < text.len() {
            let after_start = next_boundary(text, start);
            let end = floor_boundary(text, start.saturating_add(budget)).max(after_start);
            ranges.push(start..end);
            if end >= text.len() {
                break;
            }
            start = floor_boundary(text, end.saturating_sub(overlap)).max(after_start);
        }
        ranges
    }
}

fn new_chunk(content: MediaBlock, section: &Section) -> Chunk {
    Chunk {
        content,
        source: section.source.clone(),
        chunk_index: 0,
        total_chunks: 0,
        metadata: section.metadata.clone(),
    }
}

/// The largest character boundary of `text` at or before `at` (clamped to
/// the text's length).
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut i = at.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The first character boundary after `at` (`at` must be < `text.len()`).
fn next_boundary(text: &str, at: usize) -> usize {
    let mut i = at.saturating_add(1).min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
#[path = "chunker_tests.rs"]
mod tests;
