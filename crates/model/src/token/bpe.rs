//! OpenAI's byte-pair encodings, run locally.

use std::fmt;

use tiktoken_rs::CoreBPE;

use super::counter::{DATA_BLOCK_TOKENS, TokenCounter};

/// An OpenAI byte-pair encoding shipped with the crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BpeEncoding {
    /// `o200k_base`: GPT-4o, GPT-4.1, GPT-5, the o-series.
    O200kBase,
    /// `cl100k_base`: GPT-4, GPT-3.5 Turbo, `text-embedding-3-*`.
    Cl100kBase,
}

impl BpeEncoding {
    /// The encoding's name, as OpenAI spells it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::O200kBase => "o200k_base",
            Self::Cl100kBase => "cl100k_base",
        }
    }

    fn bpe(self) -> &'static CoreBPE {
        match self {
            Self::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Self::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        }
    }
}

/// Exact token counts with one of OpenAI's encodings.
///
/// The vocabulary is embedded in the binary; no file or network access
/// happens at run time. It is parsed once per process, on first use of the
/// encoding (tens of milliseconds), and shared by every counter after that.
/// Special-token markers such as `<|endoftext|>` in the text are counted as
/// ordinary text, as a provider does with user content.
///
/// ```
/// use oxiscope_model::{BpeCounter, BpeEncoding, TokenCounter};
///
/// let c = BpeCounter::new(BpeEncoding::Cl100kBase);
/// assert_eq!(c.count_text("hello world"), 2);
/// ```
#[derive(Clone, Copy)]
pub struct BpeCounter {
    encoding: BpeEncoding,
    bpe: &'static CoreBPE,
    data_block_tokens: usize,
}

impl fmt::Debug for BpeCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BpeCounter")
            .field("encoding", &self.encoding)
            .field("data_block_tokens", &self.data_block_tokens)
            .finish_non_exhaustive()
    }
}

impl BpeCounter {
    /// A counter for `encoding` (loads the vocabulary on first use).
    #[must_use]
    pub fn new(encoding: BpeEncoding) -> Self {
        Self {
            encoding,
            bpe: encoding.bpe(),
            data_block_tokens: DATA_BLOCK_TOKENS,
        }
    }

    /// Sets the flat cost of one data block.
    #[must_use]
    pub fn with_data_block_tokens(mut self, tokens: usize) -> Self {
        self.data_block_tokens = tokens;
        self
    }

    /// The encoding used.
    #[must_use]
    pub fn encoding(&self) -> BpeEncoding {
        self.encoding
    }
}

impl TokenCounter for BpeCounter {
    fn count_text(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        self.bpe.encode_ordinary(text).len()
    }

    fn data_block_tokens(&self) -> usize {
        self.data_block_tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Token counts from the tiktoken-rs test suite and the tiktoken README.
    const SPACES: &str = "This is a test         with a lot of spaces";

    #[test]
    fn cl100k_counts_match_the_published_encodings() {
        let c = BpeCounter::new(BpeEncoding::Cl100kBase);
        assert_eq!(c.count_text(SPACES), 10);
        assert_eq!(c.count_text("hello world"), 2);
        assert_eq!(c.count_text(""), 0);
    }

    #[test]
    fn o200k_counts_match_the_published_encodings() {
        let c = BpeCounter::new(BpeEncoding::O200kBase);
        assert_eq!(c.count_text(SPACES), 10);
        assert_eq!(c.count_text("hello world"), 2);
    }

    #[test]
    fn special_token_markers_are_counted_as_text() {
        let c = BpeCounter::new(BpeEncoding::Cl100kBase);
        assert!(c.count_text("<|endoftext|>") > 1);
    }
}
