//! The WordPiece tokenizer of the model, on Hugging Face's `tokenizers`
//! crate: built from the directory's `tokenizer.json`, or from `vocab.txt`
//! with the uncased BERT pipeline when there is no `tokenizer.json`.
//!
//! Either way the pipeline is the one sentence-transformers runs: clean
//! control characters, space out CJK characters, strip accents, lower-case,
//! split on whitespace and punctuation, greedy longest-match WordPiece with
//! `##` continuations (a word of more than 100 characters, or one that
//! cannot be matched, is `[UNK]`), then `[CLS] ... [SEP]`, truncated to the
//! model's sequence length. Padding is the encoder's business, not the
//! tokenizer's.

use std::path::Path;

use tokenizers::models::wordpiece::WordPiece;
use tokenizers::normalizers::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::processors::bert::BertProcessing;
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::error::{Error, Result};

/// The tokenizer, truncating to a fixed number of word pieces.
#[derive(Debug, Clone)]
pub(crate) struct WordPieceTokenizer {
    inner: Tokenizer,
}

impl WordPieceTokenizer {
    /// Loads `tokenizer.json` from `dir`, else builds the BERT pipeline
    /// over `vocab.txt`.
    pub(crate) fn load(dir: &Path, max_len: usize) -> Result<Self> {
        let json = dir.join("tokenizer.json");
        let mut inner = if json.is_file() {
            let bytes = crate::files::read(&json)?;
            Tokenizer::from_bytes(&bytes).map_err(|e| Error::corrupt(&json, e))?
        } else {
            from_vocab(&dir.join("vocab.txt"))?
        };
        inner.with_padding(None);
        let truncation = TruncationParams {
            direction: TruncationDirection::Right,
            max_length: max_len,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
        };
        inner
            .with_truncation(Some(truncation))
            .map_err(|e| Error::corrupt(&json, e))?;
        Ok(Self { inner })
    }

    /// The ids of `text`, `[CLS]` and `[SEP]` included.
    ///
    /// # Errors
    /// [`Error::Inference`] if the tokenizer fails (it does not for any
    /// string input of a well-formed vocabulary).
    pub(crate) fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let encoding = self
            .inner
            .encode(text, true)
            .map_err(|e| Error::Inference {
                message: format!("tokenizer: {e}"),
            })?;
        Ok(encoding.get_ids().to_vec())
    }
}

/// The uncased BERT pipeline over a `vocab.txt` (one token a line, the
/// line number its id).
fn from_vocab(path: &Path) -> Result<Tokenizer> {
    let text = crate::files::read(path)?;
    let text = String::from_utf8(text).map_err(|e| Error::corrupt(path, e))?;
    let id = |token: &str| {
        text.lines()
            .position(|line| line == token)
            .and_then(|i| u32::try_from(i).ok())
            .ok_or_else(|| Error::corrupt(path, format!("the vocabulary has no {token}")))
    };
    let (cls, sep) = (id("[CLS]")?, id("[SEP]")?);
    id("[UNK]")?;
    let name = path
        .to_str()
        .ok_or_else(|| Error::corrupt(path, "the path is not UTF-8"))?;
    let model = WordPiece::from_file(name)
        .unk_token("[UNK]".to_owned())
        .continuing_subword_prefix("##".to_owned())
        .max_input_chars_per_word(100)
        .build()
        .map_err(|e| Error::corrupt(path, e))?;
    let mut tokenizer = Tokenizer::new(model);
    tokenizer
        .with_normalizer(Some(BertNormalizer::new(true, true, None, true)))
        .map_err(|e| Error::corrupt(path, e))?;
    tokenizer.with_pre_tokenizer(Some(BertPreTokenizer));
    tokenizer.with_post_processor(Some(BertProcessing::new(
        ("[SEP]".to_owned(), sep),
        ("[CLS]".to_owned(), cls),
    )));
    Ok(tokenizer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_vocabulary_is_a_missing_file() {
        let dir = std::env::temp_dir().join("oxiscope-no-vocab-here");
        let err = WordPieceTokenizer::load(&dir, 256).unwrap_err();
        assert!(matches!(err, Error::MissingFile { .. }), "{err}");
    }
}
