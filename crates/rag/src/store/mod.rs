//! Vector stores: where embedded chunks are kept and searched.
//!
//! [`VectorStore`] follows AgentScope's `VectorStoreBase`: one collection
//! per knowledge base; records pair a [`Chunk`] with its vector and its
//! document id; a document is added and deleted as a unit; search returns
//! hits ordered by score, **higher is better** (stores with a distance
//! metric negate it). `metadata_filter` keeps only records whose
//! `chunk.metadata` holds every `key == value` pair of the filter.
//!
//! [`InMemoryVectorStore`] is an exact, brute-force cosine store for tests
//! and small corpora; [`SqliteVectorStore`] is the embedded, persistent
//! default (exact cosine over an in-memory matrix backed by a SQLite file;
//! see its module for why); [`PgVectorStore`] keeps vectors in PostgreSQL
//! with the `pgvector` extension, for deployments whose replicas share a
//! database; [`QdrantVectorStore`] keeps them in a Qdrant server.

mod matrix;
mod memory;
mod pgvector;
mod qdrant;
mod sqlite;

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use memory::InMemoryVectorStore;
pub use pgvector::{HNSW_MAX_DIMENSIONS, PgVectorStore};
pub use qdrant::QdrantVectorStore;
pub use sqlite::{SqliteVectorStore, VECTORS_FILE};

use crate::error::Result;
use crate::section::{Chunk, Metadata};

/// One chunk to store, with its embedding and its document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorRecord {
    /// The embedding of `chunk`.
    pub vector: Vec<f32>,
    /// The document the chunk belongs to.
    pub document_id: String,
    /// The chunk.
    pub chunk: Chunk,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorSearchResult {
    /// Similarity; higher is better.
    pub score: f32,
    /// The document of the chunk.
    pub document_id: String,
    /// The matched chunk.
    pub chunk: Chunk,
}

/// One document of a collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentSummary {
    /// The document id.
    pub document_id: String,
    /// The source file name of its first chunk.
    pub source: String,
    /// How many chunks it has.
    pub chunk_count: usize,
    /// The metadata of its first chunk.
    #[serde(default)]
    pub metadata: Metadata,
}

/// A vector database connection.
///
/// # Errors
/// Every method fails with [`Error::CollectionNotFound`](crate::Error) for
/// an unknown collection (except `create_collection`, `delete_collection`
/// and `has_collection`), [`Error::DimensionMismatch`](crate::Error) for a
/// vector of the wrong size and [`Error::InvalidVector`](crate::Error) for
/// NaN or infinite components.
pub trait VectorStore: Send + Sync + Debug {
    /// Creates collection `name` for vectors of `dimensions` components;
    /// creating an existing collection with the same size does nothing.
    fn create_collection(
        &self,
        name: &str,
        dimensions: usize,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Deletes collection `name` and its records (nothing if absent).
    fn delete_collection(&self, name: &str) -> impl Future<Output = Result<()>> + Send;

    /// Whether collection `name` exists.
    fn has_collection(&self, name: &str) -> impl Future<Output = Result<bool>> + Send;

    /// Adds `records` to `collection`.
    fn insert(
        &self,
        collection: &str,
        records: Vec<VectorRecord>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Removes every record of `document_id`.
    fn delete(
        &self,
        collection: &str,
        document_id: &str,
    ) -> impl Future<Output = Result<()>> + Send;

    /// The `top_k` records most similar to `query`, best first.
    fn search(
        &self,
        collection: &str,
        query: &[f32],
        top_k: usize,
        metadata_filter: Option<&Metadata>,
    ) -> impl Future<Output = Result<Vec<VectorSearchResult>>> + Send;

    /// One summary per document, in unspecified order.
    fn list_documents(
        &self,
        collection: &str,
        metadata_filter: Option<&Metadata>,
    ) -> impl Future<Output = Result<Vec<DocumentSummary>>> + Send;

    /// The chunks of `document_id` with `offset <= chunk_index < offset +
    /// limit`, by `chunk_index`.
    fn list_chunks(
        &self,
        collection: &str,
        document_id: &str,
        offset: usize,
        limit: usize,
        metadata_filter: Option<&Metadata>,
    ) -> impl Future<Output = Result<Vec<Chunk>>> + Send;
}

/// A boxed future of this crate.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// The object-safe twin of [`VectorStore`], implemented for every store,
/// for holding stores as `Arc<dyn DynVectorStore>` (itself a
/// [`VectorStore`]).
pub trait DynVectorStore: Send + Sync + Debug {
    /// See [`VectorStore::create_collection`].
    fn create_collection_boxed<'a>(&'a self, name: &'a str, dimensions: usize)
    -> BoxFuture<'a, ()>;
    /// See [`VectorStore::delete_collection`].
    fn delete_collection_boxed<'a>(&'a self, name: &'a str) -> BoxFuture<'a, ()>;
    /// See [`VectorStore::has_collection`].
    fn has_collection_boxed<'a>(&'a self, name: &'a str) -> BoxFuture<'a, bool>;
    /// See [`VectorStore::insert`].
    fn insert_boxed<'a>(
        &'a self,
        collection: &'a str,
        records: Vec<VectorRecord>,
    ) -> BoxFuture<'a, ()>;
    /// See [`VectorStore::delete`].
    fn delete_boxed<'a>(&'a self, collection: &'a str, document_id: &'a str) -> BoxFuture<'a, ()>;
    /// See [`VectorStore::search`].
    fn search_boxed<'a>(
        &'a self,
        collection: &'a str,
        query: &'a [f32],
        top_k: usize,
        metadata_filter: Option<&'a Metadata>,
    ) -> BoxFuture<'a, Vec<VectorSearchResult>>;
    /// See [`VectorStore::list_documents`].
    fn list_documents_boxed<'a>(
        &'a self,
        collection: &'a str,
        metadata_filter: Option<&'a Metadata>,
    ) -> BoxFuture<'a, Vec<DocumentSummary>>;
    /// See [`VectorStore::list_chunks`].
    fn list_chunks_boxed<'a>(
        &'a self,
        collection: &'a str,
        document_id: &'a str,
        offset: usize,
        limit: usize,
        metadata_filter: Option<&'a Metadata>,
    ) -> BoxFuture<'a, Vec<Chunk>>;
}

impl<T: VectorStore> DynVectorStore for T {
    fn create_collection_boxed<'a>(
        &'a self,
        name: &'a str,
        dimensions: usize,
    ) -> BoxFuture<'a, ()> {
        Box::pin(self.create_collection(name, dimensions))
    }
    fn delete_collection_boxed<'a>(&'a self, name: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(self.delete_collection(name))
    }
    fn has_collection_boxed<'a>(&'a self, name: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(self.has_collection(name))
    }
    fn insert_boxed<'a>(
        &'a self,
        collection: &'a str,
        records: Vec<VectorRecord>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(self.insert(collection, records))
    }
    fn delete_boxed<'a>(&'a self, collection: &'a str, document_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(self.delete(collection, document_id))
    }
    fn search_boxed<'a>(
        &'a self,
        collection: &'a str,
        query: &'a [f32],
        top_k: usize,
        metadata_filter: Option<&'a Metadata>,
    ) -> BoxFuture<'a, Vec<VectorSearchResult>> {
        Box::pin(self.search(collection, query, top_k, metadata_filter))
    }
    fn list_documents_boxed<'a>(
        &'a self,
        collection: &'a str,
        metadata_filter: Option<&'a Metadata>,
    ) -> BoxFuture<'a, Vec<DocumentSummary>> {
        Box::pin(self.list_documents(collection, metadata_filter))
    }
    fn list_chunks_boxed<'a>(
        &'a self,
        collection: &'a str,
        document_id: &'a str,
        offset: usize,
        limit: usize,
        metadata_filter: Option<&'a Metadata>,
    ) -> BoxFuture<'a, Vec<Chunk>> {
        Box::pin(self.list_chunks(collection, document_id, offset, limit, metadata_filter))
    }
}

impl VectorStore for Arc<dyn DynVectorStore> {
    async fn create_collection(&self, name: &str, dimensions: usize) -> Result<()> {
        self.as_ref()
            .create_collection_boxed(name, dimensions)
            .await
    }
    async fn delete_collection(&self, name: &str) -> Result<()> {
        self.as_ref().delete_collection_boxed(name).await
    }
    async fn has_collection(&self, name: &str) -> Result<bool> {
        self.as_ref().has_collection_boxed(name).await
    }
    async fn insert(&self, collection: &str, records: Vec<VectorRecord>) -> Result<()> {
        self.as_ref().insert_boxed(collection, records).await
    }
    async fn delete(&self, collection: &str, document_id: &str) -> Result<()> {
        self.as_ref().delete_boxed(collection, document_id).await
    }
    async fn search(
        &self,
        collection: &str,
        query: &[f32],
        top_k: usize,
        metadata_filter: Option<&Metadata>,
    ) -> Result<Vec<VectorSearchResult>> {
        self.as_ref()
            .search_boxed(collection, query, top_k, metadata_filter)
            .await
    }
    async fn list_documents(
        &self,
        collection: &str,
        metadata_filter: Option<&Metadata>,
    ) -> Result<Vec<DocumentSummary>> {
        self.as_ref()
            .list_documents_boxed(collection, metadata_filter)
            .await
    }
    async fn list_chunks(
        &self,
        collection: &str,
        document_id: &str,
        offset: usize,
        limit: usize,
        metadata_filter: Option<&Metadata>,
    ) -> Result<Vec<Chunk>> {
        self.as_ref()
            .list_chunks_boxed(collection, document_id, offset, limit, metadata_filter)
            .await
    }
}

/// Whether `metadata` holds every pair of `filter`.
pub(crate) fn matches_filter(metadata: &Metadata, filter: Option<&Metadata>) -> bool {
    filter.is_none_or(|f| f.iter().all(|(k, v)| metadata.get(k) == Some(v)))
}
