//! The embedding-model trait, what it is asked and what it answers.

use std::fmt::Debug;
use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::ModelError;

/// What an embedding model is asked: texts, and optionally the size of the
/// vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddingRequest<'a> {
    /// The texts to embed; the answer has one vector per text, in order.
    pub texts: &'a [String],
    /// The vector size, overriding the model's configured one; `None`
    /// keeps the model's ([`EmbeddingModel::dimensions`]), or the
    /// provider's default when the model has none.
    pub dimensions: Option<NonZeroU32>,
}

impl<'a> EmbeddingRequest<'a> {
    /// A request for `texts` at the model's vector size.
    #[must_use]
    pub fn new(texts: &'a [String]) -> Self {
        Self {
            texts,
            dimensions: None,
        }
    }

    /// Asks for vectors of `dimensions` values.
    #[must_use]
    pub fn with_dimensions(mut self, dimensions: NonZeroU32) -> Self {
        self.dimensions = Some(dimensions);
        self
    }
}

/// Where the vectors of a response came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmbeddingSource {
    /// At least one vector was computed by the provider.
    Api,
    /// Every vector came from a cache; nothing was sent.
    Cache,
}

/// What a call consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EmbeddingUsage {
    /// Input tokens the provider counted, when it reports them (Gemini does
    /// not); summed over the chunks of a split request.
    pub tokens: Option<u64>,
    /// Wall-clock time of the call.
    pub time: Duration,
}

impl EmbeddingUsage {
    /// Adds `other`'s tokens (known tokens win over unknown ones); the time
    /// is left alone.
    pub fn add_tokens(&mut self, other: Option<u64>) {
        self.tokens = match (self.tokens, other) {
            (Some(a), Some(b)) => Some(a.saturating_add(b)),
            (a, b) => a.or(b),
        };
    }
}

/// The answer of an embedding model.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingResponse {
    /// One vector per input text, in input order.
    pub embeddings: Vec<Vec<f32>>,
    /// The model that computed them, as the provider named it (the
    /// configured name when it did not).
    pub model: String,
    /// Tokens and time.
    pub usage: EmbeddingUsage,
    /// Whether the provider was called.
    pub source: EmbeddingSource,
}

impl EmbeddingResponse {
    /// The answer to an empty request: no vectors, no usage.
    #[must_use]
    pub fn empty(model: impl Into<String>) -> Self {
        Self {
            embeddings: Vec::new(),
            model: model.into(),
            usage: EmbeddingUsage {
                tokens: Some(0),
                time: Duration::ZERO,
            },
            source: EmbeddingSource::Api,
        }
    }
}

/// An embedding model: turns texts into vectors.
///
/// # Contract
/// A successful answer has exactly one vector per input text, in input
/// order, whatever order the provider answered in; an empty request is
/// answered without calling anything. Implementations split large
/// requests into the provider's batch size, send the chunks concurrently
/// (a bounded number at once) and retry each chunk on its own on
/// transient failures ([`embed_in_batches`](crate::embed_in_batches) does
/// all of this). A provider answer that does not fit (too few vectors,
/// malformed JSON) is a [`ModelError::Stream`], never a panic.
///
/// # Cancel safety
/// Dropping the future abandons every chunk still in flight; nothing is
/// kept.
pub trait EmbeddingModel: Send + Sync + Debug {
    /// The model's name, as sent to the provider.
    fn model_name(&self) -> &str;

    /// The vector size the model was configured with, if any.
    fn dimensions(&self) -> Option<NonZeroU32> {
        None
    }

    /// Embeds `request.texts`.
    ///
    /// # Errors
    /// [`ModelError::Provider`] for an error status (after the retries the
    /// HTTP client's policy allows, for 429 and 5xx),
    /// [`ModelError::Connection`] when the provider cannot be reached,
    /// [`ModelError::Stream`] for an answer that cannot be read, and
    /// [`ModelError::InvalidRequest`] when the request cannot be sent
    /// (a refused endpoint, an unusable model name).
    fn embed(
        &self,
        request: EmbeddingRequest<'_>,
    ) -> impl Future<Output = Result<EmbeddingResponse, ModelError>> + Send;
}

/// The object-safe twin of [`EmbeddingModel`], implemented for every
/// embedding model, for holding models as `Arc<dyn DynEmbeddingModel>`
/// (which is itself an [`EmbeddingModel`]).
pub trait DynEmbeddingModel: Send + Sync + Debug {
    /// See [`EmbeddingModel::model_name`].
    fn model_name(&self) -> &str;

    /// See [`EmbeddingModel::dimensions`].
    fn dimensions(&self) -> Option<NonZeroU32>;

    /// See [`EmbeddingModel::embed`].
    fn embed_boxed<'a>(
        &'a self,
        request: EmbeddingRequest<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<EmbeddingResponse, ModelError>> + Send + 'a>>;
}

impl<T: EmbeddingModel> DynEmbeddingModel for T {
    fn model_name(&self) -> &str {
        EmbeddingModel::model_name(self)
    }

    fn dimensions(&self) -> Option<NonZeroU32> {
        EmbeddingModel::dimensions(self)
    }

    fn embed_boxed<'a>(
        &'a self,
        request: EmbeddingRequest<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<EmbeddingResponse, ModelError>> + Send + 'a>> {
        Box::pin(self.embed(request))
    }
}

impl EmbeddingModel for Arc<dyn DynEmbeddingModel> {
    fn model_name(&self) -> &str {
        DynEmbeddingModel::model_name(self.as_ref())
    }

    fn dimensions(&self) -> Option<NonZeroU32> {
        DynEmbeddingModel::dimensions(self.as_ref())
    }

    async fn embed(&self, request: EmbeddingRequest<'_>) -> Result<EmbeddingResponse, ModelError> {
        self.as_ref().embed_boxed(request).await
    }
}
