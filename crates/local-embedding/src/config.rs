//! [`BertConfig`]: the shape of the network, read from `config.json`, and
//! the sentence-transformers settings around it.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};

/// The word pieces of one input the model reads at most (special tokens
/// included), as sentence-transformers configures all-MiniLM-L6-v2
/// (`sentence_bert_config.json`); longer inputs are truncated.
pub const DEFAULT_MAX_SEQ_LEN: usize = 256;

/// The parts of a Hugging Face BERT `config.json` the encoder needs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct BertConfig {
    pub(crate) vocab_size: usize,
    pub(crate) hidden_size: usize,
    pub(crate) num_hidden_layers: usize,
    pub(crate) num_attention_heads: usize,
    pub(crate) intermediate_size: usize,
    pub(crate) max_position_embeddings: usize,
    #[serde(default = "two")]
    pub(crate) type_vocab_size: usize,
    #[serde(default = "eps")]
    pub(crate) layer_norm_eps: f64,
    #[serde(default = "gelu")]
    pub(crate) hidden_act: String,
    #[serde(default = "absolute")]
    pub(crate) position_embedding_type: String,
}

fn two() -> usize {
    2
}

fn eps() -> f64 {
    1e-12
}

fn gelu() -> String {
    "gelu".to_owned()
}

fn absolute() -> String {
    "absolute".to_owned()
}

impl BertConfig {
    /// Reads and checks `config.json`.
    pub(crate) fn read(path: &Path) -> Result<Self> {
        let text = crate::files::read(path)?;
        let config: Self = serde_json::from_slice(&text).map_err(|e| Error::corrupt(path, e))?;
        config
            .check()
            .map_err(|reason| Error::corrupt(path, reason))?;
        Ok(config)
    }

    fn check(&self) -> std::result::Result<(), String> {
        if self.hidden_act != "gelu" {
            return Err(format!(
                "hidden_act `{}` is not supported (only `gelu`)",
                self.hidden_act
            ));
        }
        if self.position_embedding_type != "absolute" {
            return Err(format!(
                "position_embedding_type `{}` is not supported (only `absolute`)",
                self.position_embedding_type
            ));
        }
        let sizes = [
            self.vocab_size,
            self.hidden_size,
            self.num_hidden_layers,
            self.num_attention_heads,
            self.intermediate_size,
            self.max_position_embeddings,
            self.type_vocab_size,
        ];
        if sizes.contains(&0) {
            return Err("a size is zero".to_owned());
        }
        if !self.hidden_size.is_multiple_of(self.num_attention_heads) {
            return Err(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

/// The longest input in word pieces: `max_seq_length` of
/// `sentence_bert_config.json` when the directory has one, else
/// [`DEFAULT_MAX_SEQ_LEN`]; never more than the position table holds.
pub(crate) fn max_seq_len(dir: &Path, config: &BertConfig) -> Result<usize> {
    let path = dir.join("sentence_bert_config.json");
    let wanted = if path.is_file() {
        let text = crate::files::read(&path)?;
        let parsed: SentenceBertConfig =
            serde_json::from_slice(&text).map_err(|e| Error::corrupt(&path, e))?;
        parsed.max_seq_length.unwrap_or(DEFAULT_MAX_SEQ_LEN)
    } else {
        DEFAULT_MAX_SEQ_LEN
    };
    if wanted < 2 {
        return Err(Error::corrupt(&path, "max_seq_length is below 2"));
    }
    Ok(wanted.min(config.max_position_embeddings))
}
