//! [`HashingEmbedder`]: a deterministic, offline bag-of-words embedder.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::num::NonZeroU32;

use oxiscope_model::{EmbeddingModel, EmbeddingRequest, EmbeddingResponse, ModelError};

/// Embeds a text as its lower-cased alphanumeric words hashed into
/// `dimensions` buckets (the "hashing trick"): texts sharing words get a
/// positive cosine similarity, texts sharing none get 0.
///
/// Purely lexical and with no model file: for tests, benchmarks and
/// offline demos, not for real retrieval quality. Its output is stable
/// within one build of the program (the standard hasher with fixed keys).
#[derive(Debug, Clone)]
pub struct HashingEmbedder {
    dimensions: NonZeroU32,
}

impl HashingEmbedder {
    /// An embedder of `dimensions` components.
    #[must_use]
    pub fn new(dimensions: NonZeroU32) -> Self {
        Self { dimensions }
    }

    /// The vector of `text`.
    #[must_use]
    pub fn vector(&self, text: &str) -> Vec<f32> {
        let size = self.dimensions.get() as usize;
        let mut v = vec![0f32; size];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let mut h = DefaultHasher::new();
            word.to_lowercase().hash(&mut h);
            #[allow(clippy::cast_possible_truncation)]
            let bucket = (h.finish() % size as u64) as usize;
            if let Some(x) = v.get_mut(bucket) {
                *x += 1.0;
            }
        }
        v
    }
}

impl EmbeddingModel for HashingEmbedder {
    fn model_name(&self) -> &'static str {
        "hashing-bag-of-words"
    }

    fn dimensions(&self) -> Option<NonZeroU32> {
        Some(self.dimensions)
    }

    async fn embed(&self, request: EmbeddingRequest<'_>) -> Result<EmbeddingResponse, ModelError> {
        let mut response = EmbeddingResponse::empty(self.model_name());
        response.embeddings = request.texts.iter().map(|t| self.vector(t)).collect();
        response.usage.tokens = None;
        Ok(response)
    }
}
