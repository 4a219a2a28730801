//! [`MiniLmEmbeddingModel`]: all-MiniLM-L6-v2 loaded from a directory and
//! run on the CPU.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use oxiscope_model::{
    EmbeddingModel, EmbeddingRequest, EmbeddingResponse, EmbeddingSource, EmbeddingUsage,
    ModelError,
};

use crate::bert::{Batch, Bert};
use crate::config::{BertConfig, max_seq_len};
use crate::error::{Error, Result};
use crate::tokenizer::WordPieceTokenizer;
use crate::weights::Weights;

/// The model's name, as cards and responses spell it.
pub const MINILM_MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// The size of its vectors.
pub const MINILM_DIMENSIONS: usize = 384;

/// How many texts one forward pass embeds at most.
pub const DEFAULT_BATCH_SIZE: usize = 32;

/// The files [`MiniLmEmbeddingModel::load`] reads (`tokenizer.json` may
/// stand in for `vocab.txt`).
pub const MODEL_FILES: [&str; 3] = ["config.json", "vocab.txt", "model.safetensors"];

/// all-MiniLM-L6-v2 run in-process: a sentence-transformers model of 6
/// BERT layers whose vectors are the mean of the last hidden states over
/// the real tokens, L2-normalised (384 values).
///
/// Inputs longer than 256 word pieces are truncated, as sentence-transformers
/// does. Texts are embedded in batches of [`DEFAULT_BATCH_SIZE`], sorted by
/// length so that little padding is computed; the answer is in input order.
/// [`EmbeddingModel::embed`] runs the network on a blocking thread
/// (`tokio::task::spawn_blocking`), never on the async executor.
///
/// The model is cheap to clone (the weights are shared).
///
/// ```no_run
/// use oxiscope_local_embedding::MiniLmEmbeddingModel;
/// use oxiscope_model::{EmbeddingModel, EmbeddingRequest};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let model = MiniLmEmbeddingModel::load("models/all-MiniLM-L6-v2")?;
/// let texts = vec!["hello".to_owned(), "你好".to_owned()];
/// let answer = model.embed(EmbeddingRequest::new(&texts)).await?;
/// assert_eq!(answer.embeddings[0].len(), 384);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct MiniLmEmbeddingModel {
    inner: Arc<Inner>,
}

struct Inner {
    bert: Bert,
    tokenizer: WordPieceTokenizer,
    vocab_size: usize,
    dimensions: usize,
    batch_size: usize,
    dir: PathBuf,
}

impl std::fmt::Debug for MiniLmEmbeddingModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLmEmbeddingModel")
            .field("dir", &self.inner.dir)
            .field("dimensions", &self.inner.dimensions)
            .field("batch_size", &self.inner.batch_size)
            .finish_non_exhaustive()
    }
}

impl MiniLmEmbeddingModel {
    /// Loads the model from `dir`: `config.json`, `model.safetensors` (keys
    /// with or without the `bert.` prefix), and `tokenizer.json` or
    /// `vocab.txt`; `sentence_bert_config.json`, when present, sets the
    /// sequence length.
    ///
    /// # Errors
    /// [`Error::MissingFile`] for a missing file, [`Error::Io`] for one
    /// that cannot be read, [`Error::Corrupt`] for one that does not hold a
    /// BERT model of the config's shape (truncated weights, a missing
    /// tensor, a wrong shape, bad JSON).
    pub fn load(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        let config = BertConfig::read(&dir.join("config.json"))?;
        let max_len = max_seq_len(dir, &config)?;
        let tokenizer = WordPieceTokenizer::load(dir, max_len)?;
        let weights = Weights::read(&dir.join("model.safetensors"))?;
        let bert = Bert::load(&weights, &config)?;
        Ok(Self {
            inner: Arc::new(Inner {
                bert,
                tokenizer,
                vocab_size: config.vocab_size,
                dimensions: config.hidden_size,
                batch_size: DEFAULT_BATCH_SIZE,
                dir: dir.to_owned(),
            }),
        })
    }

    /// The directory the model was loaded from.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The size of the vectors (384 for all-MiniLM-L6-v2).
    #[must_use]
    pub fn vector_size(&self) -> usize {
        self.inner.dimensions
    }

    /// The word-piece ids of `text` as the model reads them (`[CLS]` and
    /// `[SEP]` included, truncated to the sequence length).
    ///
    /// # Errors
    /// [`Error::Inference`] if the tokenizer fails.
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>> {
        self.inner.tokenizer.encode(text)
    }

    /// Embeds `texts` on the calling thread; one unit vector per text, in
    /// order. CPU-bound: call it from a blocking context (the async
    /// [`EmbeddingModel::embed`] does).
    ///
    /// # Errors
    /// [`Error::Inference`] when the tokenizer or the tensor library fails.
    pub fn embed_blocking<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Vec<f32>>> {
        self.embed_counting(texts).map(|(vectors, _)| vectors)
    }

    /// As [`embed_blocking`](Self::embed_blocking), also counting the word
    /// pieces read.
    fn embed_counting<S: AsRef<str>>(&self, texts: &[S]) -> Result<(Vec<Vec<f32>>, u64)> {
        let inner = &self.inner;
        let encoded = texts
            .iter()
            .map(|t| inner.tokenizer.encode(t.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        if let Some(bad) = encoded
            .iter()
            .flatten()
            .find(|&&id| id as usize >= inner.vocab_size)
        {
            return Err(Error::Inference {
                message: format!("the tokenizer produced id {bad}, past the vocabulary"),
            });
        }
        let tokens = encoded.iter().map(|ids| ids.len() as u64).sum();
        let mut order: Vec<usize> = (0..encoded.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(encoded[i].len()));
        let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); encoded.len()];
        for chunk in order.chunks(inner.batch_size.max(1)) {
            let batch = pad(chunk.iter().map(|&i| encoded[i].as_slice()));
            let out = inner
                .bert
                .embed(&batch)
                .and_then(|t| t.to_vec2::<f32>())
                .map_err(|e| Error::inference(&e))?;
            for (&i, vector) in chunk.iter().zip(out) {
                if let Some(slot) = vectors.get_mut(i) {
                    *slot = vector;
                }
            }
        }
        Ok((vectors, tokens))
    }
}

/// Pads the rows to the longest one (id 0, mask 0).
fn pad<'a>(rows: impl Iterator<Item = &'a [u32]> + Clone) -> Batch {
    let seq = rows.clone().map(<[u32]>::len).max().unwrap_or(0);
    let mut ids = Vec::new();
    let mut mask = Vec::new();
    let mut batch = 0;
    for row in rows {
        batch += 1;
        ids.extend_from_slice(row);
        mask.extend(std::iter::repeat_n(1, row.len()));
        let fill = seq - row.len();
        ids.extend(std::iter::repeat_n(0, fill));
        mask.extend(std::iter::repeat_n(0, fill));
    }
    Batch {
        ids,
        mask,
        batch,
        seq,
    }
}

impl EmbeddingModel for MiniLmEmbeddingModel {
    fn model_name(&self) -> &str {
        MINILM_MODEL_NAME
    }

    fn dimensions(&self) -> Option<NonZeroU32> {
        u32::try_from(self.inner.dimensions)
            .ok()
            .and_then(NonZeroU32::new)
    }

    /// Embeds on a blocking thread. Dropping the future leaves the batch
    /// running to its end; its result is discarded.
    async fn embed(&self, request: EmbeddingRequest<'_>) -> Result<EmbeddingResponse, ModelError> {
        if let Some(asked) = request.dimensions
            && asked.get() as usize != self.inner.dimensions
        {
            return Err(Error::Dimensions {
                asked: asked.get(),
                supported: self.inner.dimensions,
            }
            .into());
        }
        if request.texts.is_empty() {
            return Ok(EmbeddingResponse::empty(MINILM_MODEL_NAME));
        }
        let started = Instant::now();
        let model = self.clone();
        let texts = request.texts.to_vec();
        let (embeddings, tokens) =
            tokio::task::spawn_blocking(move || model.embed_counting(&texts))
                .await
                .map_err(|e| ModelError::Stream {
                    message: format!("the embedding task failed: {e}"),
                })??;
        Ok(EmbeddingResponse {
            embeddings,
            model: MINILM_MODEL_NAME.to_owned(),
            usage: EmbeddingUsage {
                tokens: Some(tokens),
                time: started.elapsed(),
            },
            source: EmbeddingSource::Api,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_padded_to_the_longest_with_a_zero_mask() {
        let rows: [&[u32]; 3] = [&[101, 7, 102], &[101, 102], &[101, 5, 6, 102]];
        let batch = pad(rows.iter().copied());
        assert_eq!((batch.batch, batch.seq), (3, 4));
        assert_eq!(
            batch.ids,
            vec![101, 7, 102, 0, 101, 102, 0, 0, 101, 5, 6, 102]
        );
        assert_eq!(batch.mask, vec![1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1]);
        let empty = pad(std::iter::empty::<&[u32]>());
        assert_eq!((empty.batch, empty.seq), (0, 0));
    }
}
