//! [`KnowledgeBase`]: one embedding model, one vector store, one collection
//! (optionally scoped by a metadata filter), and the four operations a
//! caller needs: insert, search, list, delete.
//!
//! As in AgentScope, the collection is created on first use, sized to the
//! embedding model's dimensions (or, for a model that does not declare
//! them, to the first vectors it returns); a `metadata_filter` scopes every
//! search and listing and is forced onto every inserted chunk.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::future::try_join_all;
use oxiscope_model::{DynEmbeddingModel, EmbeddingModel, EmbeddingRequest};

use crate::chunker::ApproxTokenChunker;
use crate::error::{Error, Result};
use crate::parser::ParserRegistry;
use crate::section::{Chunk, Metadata};
use crate::store::{
    DocumentSummary, DynVectorStore, VectorRecord, VectorSearchResult, VectorStore,
};

/// How many chunk texts one embedding call carries, by default.
pub const DEFAULT_EMBEDDING_BATCH: usize = 64;

/// A handle on one knowledge base. Cheap to clone (everything is shared).
#[derive(Debug, Clone)]
pub struct KnowledgeBase {
    name: String,
    description: String,
    embedding_model: Arc<dyn DynEmbeddingModel>,
    vector_store: Arc<dyn DynVectorStore>,
    collection: String,
    metadata_filter: Option<Metadata>,
    batch_size: usize,
    ready: Arc<AtomicBool>,
}

impl KnowledgeBase {
    /// A knowledge base named `name` (shown to the model with
    /// `description`) over `collection` of `vector_store`, embedding with
    /// `embedding_model`. Does no I/O.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        embedding_model: Arc<dyn DynEmbeddingModel>,
        vector_store: Arc<dyn DynVectorStore>,
        collection: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            embedding_model,
            vector_store,
            collection: collection.into(),
            metadata_filter: None,
            batch_size: DEFAULT_EMBEDDING_BATCH,
            ready: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Scopes the knowledge base to records whose metadata holds every pair
    /// of `filter` (and stamps those pairs on every inserted chunk).
    #[must_use]
    pub fn with_metadata_filter(mut self, filter: Metadata) -> Self {
        self.metadata_filter = Some(filter);
        self
    }

    /// Embeds at most `batch_size` chunk texts per embedding call (at least
    /// 1; default [`DEFAULT_EMBEDDING_BATCH`]).
    #[must_use]
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// The name shown to the model.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What is in it and when to search it, for the model.
    #[must_use]
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The collection backing it.
    #[must_use]
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// The scoping filter.
    #[must_use]
    pub fn metadata_filter(&self) -> Option<&Metadata> {
        self.metadata_filter.as_ref()
    }

    /// The embedding model.
    #[must_use]
    pub fn embedding_model(&self) -> &Arc<dyn DynEmbeddingModel> {
        &self.embedding_model
    }

    /// The vector store.
    #[must_use]
    pub fn vector_store(&self) -> &Arc<dyn DynVectorStore> {
        &self.vector_store
    }

    /// Creates the collection when missing, sized `dimensions` (else the
    /// model's). Returns whether the collection exists afterwards.
    async fn ensure_collection(&self, dimensions: Option<usize>) -> Result<bool> {
        if self.ready.load(Ordering::Acquire) {
            return Ok(true);
        }
        if self.vector_store.has_collection(&self.collection).await? {
            self.ready.store(true, Ordering::Release);
            return Ok(true);
        }
        let declared = EmbeddingModel::dimensions(&self.embedding_model)
            .and_then(|d| usize::try_from(d.get()).ok());
        let Some(dimensions) = declared.or(dimensions) else {
            return Ok(false);
        };
        self.vector_store
            .create_collection(&self.collection, dimensions)
            .await?;
        self.ready.store(true, Ordering::Release);
        Ok(true)
    }

    /// Embeds `texts` in batches, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch_size) {
            let answer = self
                .embedding_model
                .embed(EmbeddingRequest::new(batch))
                .await?;
            if answer.embeddings.len() != batch.len() {
                return Err(Error::EmbeddingCount {
                    expected: batch.len(),
                    actual: answer.embeddings.len(),
                });
            }
            vectors.extend(answer.embeddings);
        }
        Ok(vectors)
    }

    /// Embeds `chunks` and stores them as one document; returns its id
    /// (`document_id`, or a new one). Each chunk's metadata becomes
    /// `document_metadata`, overridden by the chunk's own, overridden by
    /// the metadata filter. Data (image) chunks are skipped: embedding
    /// models here are text-only. An empty list stores nothing.
    ///
    /// # Errors
    /// [`Error::Embedding`] / [`Error::EmbeddingCount`] when embedding
    /// fails, and the store's errors (the document is then not stored).
    pub async fn insert_document(
        &self,
        chunks: Vec<Chunk>,
        document_id: Option<String>,
        document_metadata: Option<Metadata>,
    ) -> Result<String> {
        let document_id = document_id.unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
        let mut texts = Vec::with_capacity(chunks.len());
        let mut kept = Vec::with_capacity(chunks.len());
        for mut chunk in chunks {
            let Some(text) = chunk.as_text() else {
                tracing::debug!(source = %chunk.source, "skipping a data chunk: the embedding model is text-only");
                continue;
            };
            texts.push(text.to_owned());
            let mut metadata = document_metadata.clone().unwrap_or_default();
            metadata.extend(std::mem::take(&mut chunk.metadata));
            if let Some(filter) = &self.metadata_filter {
                metadata.extend(filter.clone());
            }
            chunk.metadata = metadata;
            kept.push(chunk);
        }
        if kept.is_empty() {
            return Ok(document_id);
        }
        let vectors = self.embed(&texts).await?;
        let dimensions = vectors.first().map(Vec::len);
        self.ensure_collection(dimensions).await?;
        let records = vectors
            .into_iter()
            .zip(kept)
            .map(|(vector, chunk)| VectorRecord {
                vector,
                document_id: document_id.clone(),
                chunk,
            })
            .collect();
        self.vector_store.insert(&self.collection, records).await?;
        Ok(document_id)
    }

    /// Parses `bytes` (named `filename`, of `media_type` when known) with
    /// `parsers`, chunks the sections with `chunker` and inserts them as
    /// one document whose metadata includes `{"filename": filename}`.
    ///
    /// # Errors
    /// The parser's errors, then those of
    /// [`insert_document`](Self::insert_document).
    pub async fn insert_file(
        &self,
        parsers: &ParserRegistry,
        chunker: &ApproxTokenChunker,
        bytes: &[u8],
        filename: &str,
        media_type: Option<&str>,
        document_metadata: Option<Metadata>,
    ) -> Result<String> {
        let sections = parsers.parse(bytes, filename, media_type)?;
        let chunks = chunker.chunk(&sections);
        let mut metadata = document_metadata.unwrap_or_default();
        metadata.insert("filename".into(), filename.into());
        self.insert_document(chunks, None, Some(metadata)).await
    }

    /// Searches with every query (embedded in one batch, searched
    /// concurrently): hits are deduplicated by `(document_id,
    /// chunk_index)` keeping the best score, those under `score_threshold`
    /// dropped, and the best `top_k` returned, best first. Empty queries
    /// are ignored; a knowledge base with nothing in it returns nothing.
    ///
    /// # Errors
    /// Embedding and store errors.
    pub async fn search(
        &self,
        queries: &[String],
        top_k: usize,
        score_threshold: Option<f32>,
    ) -> Result<Vec<VectorSearchResult>> {
        let queries: Vec<String> = queries
            .iter()
            .filter(|q| !q.trim().is_empty())
            .cloned()
            .collect();
        if queries.is_empty() || top_k == 0 {
            return Ok(Vec::new());
        }
        let vectors = self.embed(&queries).await?;
        if !self
            .ensure_collection(vectors.first().map(Vec::len))
            .await?
        {
            return Ok(Vec::new());
        }
        let filter = self.metadata_filter.as_ref();
        let per_query = try_join_all(
            vectors
                .iter()
                .map(|v| self.vector_store.search(&self.collection, v, top_k, filter)),
        )
        .await?;
        let mut best: HashMap<(String, usize), VectorSearchResult> = HashMap::new();
        for hit in per_query.into_iter().flatten() {
            if score_threshold.is_some_and(|t| hit.score < t) {
                continue;
            }
            let key = (hit.document_id.clone(), hit.chunk.chunk_index);
            match best.get(&key) {
                Some(b) if b.score >= hit.score => {}
                _ => {
                    best.insert(key, hit);
                }
            }
        }
        let mut merged: Vec<VectorSearchResult> = best.into_values().collect();
        merged.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.document_id.cmp(&b.document_id))
                .then_with(|| a.chunk.chunk_index.cmp(&b.chunk.chunk_index))
        });
        merged.truncate(top_k);
        Ok(merged)
    }

    /// One summary per document in scope, in unspecified order.
    ///
    /// # Errors
    /// Store errors.
    pub async fn list_documents(&self) -> Result<Vec<DocumentSummary>> {
        if !self.ensure_collection(None).await? {
            return Ok(Vec::new());
        }
        self.vector_store
            .list_documents(&self.collection, self.metadata_filter.as_ref())
            .await
    }

    /// The chunks of `document_id` with `offset <= chunk_index < offset +
    /// limit`, in order.
    ///
    /// # Errors
    /// Store errors.
    pub async fn list_chunks(
        &self,
        document_id: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<Chunk>> {
        if !self.ensure_collection(None).await? {
            return Ok(Vec::new());
        }
        self.vector_store
            .list_chunks(
                &self.collection,
                document_id,
                offset,
                limit,
                self.metadata_filter.as_ref(),
            )
            .await
    }

    /// Removes every chunk of `document_id`. With a metadata filter, a
    /// document outside the scope is left alone.
    ///
    /// # Errors
    /// Store errors.
    pub async fn delete_document(&self, document_id: &str) -> Result<()> {
        if !self.ensure_collection(None).await? {
            return Ok(());
        }
        if let Some(filter) = &self.metadata_filter {
            let in_scope = self
                .vector_store
                .list_chunks(&self.collection, document_id, 0, usize::MAX, Some(filter))
                .await?;
            if in_scope.is_empty() {
                return Ok(());
            }
        }
        self.vector_store
            .delete(&self.collection, document_id)
            .await
    }
}
