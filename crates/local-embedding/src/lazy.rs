//! [`DefaultEmbeddingModel`]: the offline model, located (and fetched)
//! on first use.

use std::num::NonZeroU32;

use oxiscope_model::{EmbeddingModel, EmbeddingRequest, EmbeddingResponse, ModelError};
use tokio::sync::OnceCell;

use crate::model::{MINILM_DIMENSIONS, MINILM_MODEL_NAME, MiniLmEmbeddingModel};
use crate::resolve::ModelLocator;

/// all-MiniLM-L6-v2 as the default embedding model: nothing is read until
/// the first [`embed`](EmbeddingModel::embed), which finds the model with
/// its [`ModelLocator`] (downloading it on a machine that does not have
/// it yet) and loads it; later calls reuse it. A failed first use is not
/// remembered: the next call tries again.
///
/// ```no_run
/// use oxiscope_local_embedding::{DefaultEmbeddingModel, ModelLocator};
/// use oxiscope_model::{EmbeddingModel, EmbeddingRequest};
///
/// # async fn demo() -> Result<(), oxiscope_model::ModelError> {
/// let model = DefaultEmbeddingModel::new(ModelLocator::new());
/// let texts = vec!["offline vectors".to_owned()];
/// let answer = model.embed(EmbeddingRequest::new(&texts)).await?;
/// assert_eq!(answer.embeddings[0].len(), 384);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct DefaultEmbeddingModel {
    locator: ModelLocator,
    model: OnceCell<MiniLmEmbeddingModel>,
}

impl Default for DefaultEmbeddingModel {
    fn default() -> Self {
        Self::new(ModelLocator::new())
    }
}

impl DefaultEmbeddingModel {
    /// A model found by `locator` on first use.
    #[must_use]
    pub fn new(locator: ModelLocator) -> Self {
        Self {
            locator,
            model: OnceCell::new(),
        }
    }

    /// The loaded model, locating and loading it on the first call.
    ///
    /// # Errors
    /// As [`ModelLocator::load`].
    pub async fn get(&self) -> crate::Result<&MiniLmEmbeddingModel> {
        self.model.get_or_try_init(|| self.locator.load()).await
    }
}

impl EmbeddingModel for DefaultEmbeddingModel {
    fn model_name(&self) -> &str {
        MINILM_MODEL_NAME
    }

    fn dimensions(&self) -> Option<NonZeroU32> {
        u32::try_from(MINILM_DIMENSIONS)
            .ok()
            .and_then(NonZeroU32::new)
    }

    async fn embed(&self, request: EmbeddingRequest<'_>) -> Result<EmbeddingResponse, ModelError> {
        if request.texts.is_empty() {
            return Ok(EmbeddingResponse::empty(MINILM_MODEL_NAME));
        }
        self.get().await?.embed(request).await
    }
}
