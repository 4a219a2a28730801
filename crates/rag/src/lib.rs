//! Retrieval-augmented generation for Oxiscope: turning files into
//! [`Section`]s ([`parser`]), sections into [`Chunk`]s to embed
//! ([`ApproxTokenChunker`]), keeping embedded chunks in a [`VectorStore`]
//! ([`store`]; [`SqliteVectorStore`] is the embedded, persistent default),
//! one [`KnowledgeBase`] handle binding an embedding model, a store and a
//! collection, and the [`RagMiddleware`] that brings knowledge into an
//! agent's loop (static hint or `search_knowledge` tool), with an optional
//! [`LlmReranker`].
//!
//! Shapes and behaviour follow AgentScope's `rag` package: a parser never
//! chunks, a chunker never merges two sections, images travel as data
//! blocks, a higher score is always better, search results are
//! deduplicated by `(document_id, chunk_index)`.
//!
//! ```
//! use oxiscope_rag::{ApproxTokenChunker, ApproxTokenParameters, ParserRegistry};
//!
//! let registry = ParserRegistry::default();
//! let sections = registry.parse(b"# Cats\nCats sleep 12-16 hours per day.\n", "cats.md", None)?;
//! let chunker = ApproxTokenChunker::new(ApproxTokenParameters { chunk_size: 4, overlap: 1 })?;
//! let chunks = chunker.chunk(&sections);
//! // 4 tokens = 16 bytes, cut on a character boundary (not on white space).
//! assert_eq!(chunks[0].as_text(), Some("# Cats\nCats slee"));
//! assert!(chunks.iter().all(|c| c.total_chunks == chunks.len()));
//! # Ok::<(), oxiscope_rag::Error>(())
//! ```
//!
//! Indexing and searching (here with the offline [`HashingEmbedder`]; use
//! a real embedding model and [`SqliteVectorStore::open`] in practice):
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use std::num::NonZeroU32;
//! use std::sync::Arc;
//! use oxiscope_rag::*;
//!
//! let kb = KnowledgeBase::new(
//!     "pets",
//!     "Facts about pets.",
//!     Arc::new(HashingEmbedder::new(NonZeroU32::new(64).unwrap())),
//!     Arc::new(InMemoryVectorStore::new()),
//!     "pets",
//! );
//! let chunker = ApproxTokenChunker::default();
//! let id = kb
//!     .insert_file(&ParserRegistry::default(), &chunker, b"Cats sleep 16 hours.", "cats.md", None, None)
//!     .await?;
//! let hits = kb.search(&["when do cats sleep".into()], 3, None).await?;
//! assert_eq!(hits[0].document_id, id);
//! kb.delete_document(&id).await?;
//! assert!(kb.list_documents().await?.is_empty());
//! # Ok::<(), oxiscope_rag::Error>(())
//! # }).unwrap();
//! ```
#![deny(missing_docs)]

mod chunker;
mod error;
mod hashing;
mod knowledge;
mod limits;
pub mod middleware;
pub mod parser;
mod rerank;
mod section;
pub mod store;

pub use chunker::{ApproxTokenChunker, ApproxTokenParameters};
pub use error::{Error, Result};
pub use hashing::HashingEmbedder;
pub use knowledge::{DEFAULT_EMBEDDING_BATCH, KnowledgeBase};
pub use limits::ParseLimits;
pub use middleware::{RagMiddleware, RagMode, RagParameters};
pub use parser::{Parser, ParserRegistry};
pub use rerank::{DEFAULT_RERANK_PROMPT, LlmReranker};
pub use section::{Chunk, Metadata, Section};
pub use store::{
    DocumentSummary, DynVectorStore, HNSW_MAX_DIMENSIONS, InMemoryVectorStore, PgVectorStore,
    QdrantVectorStore, SqliteVectorStore, VectorRecord, VectorSearchResult, VectorStore,
};
