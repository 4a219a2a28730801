//! [`SqliteVectorStore`]: the embedded, persistent default store.
//!
//! # Design
//! Records live in one SQLite file (`<data dir>/vectors.sqlite`): a table
//! of collections (name, dimensions) and a table of records (collection,
//! document id, chunk index, the chunk as JSON, its metadata as JSON, and
//! the vector as little-endian `f32` bytes). Vectors are normalised at
//! insert, so cosine similarity is a dot product.
//!
//! Search is exact: the first access to a collection loads it into an
//! in-memory matrix (one contiguous `Vec<f32>`), kept in sync by every
//! insert and delete (the database is written first, inside a
//! transaction, then the matrix). The metadata filter is applied before
//! ranking, and the `top_k` best rows are kept in a bounded heap.
//!
//! # Why SQLite and brute force
//! | option | compile weight | persistence | results |
//! |---|---|---|---|
//! | SQLite + in-memory matrix (this) | none extra (the workspace already builds `sqlx`) | transactional, crash-safe (WAL) | exact |
//! | an HNSW crate (`hnsw_rs`, `usearch`) | a C++ build (`usearch`) or a pure-Rust graph crate (`hnsw_rs`) | the graph is dumped and reloaded beside the records, outside their transactions; deletes leave tombstones | approximate (recall < 1, tuned by `ef`) |
//! | LanceDB | the Arrow/DataFusion stack: hundreds of crates, minutes of build | columnar files, versioned | exact or approximate (IVF-PQ) |
//!
//! Brute force is linear, but at the sizes one agent's knowledge bases
//! reach it is fast enough, needs no index tuning and never misses a hit.
//! Measured with `cargo bench -p oxiscope-rag --bench store` (divan,
//! optimised build, a 2-core machine shared with other work, medians):
//!
//! | benchmark | median |
//! |---|---|
//! | search, top 5 of 100 000 chunks x 384 dimensions | 9.3 ms |
//! | index 100 documents x 10 chunks through a `KnowledgeBase` (hashing embedder, one transaction per document) | 68 ms, about 1 500 documents/s (15 000 chunks/s) |
//!
//! Server stores for larger deployments (pgvector, Qdrant; not written
//! yet) fit behind the same [`VectorStore`] trait. A search runs on the calling task (it does
//! not yield while it scans).
//!
//! Memory: a loaded collection costs `4 * dimensions` bytes per chunk for
//! the matrix plus the chunk itself.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::Row as _;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use tokio::sync::RwLock;

use super::matrix::{Loaded, Row, normalised};
use super::{DocumentSummary, VectorRecord, VectorSearchResult, VectorStore, matches_filter};
use crate::error::{Error, Result};
use crate::section::{Chunk, Metadata};

/// The file name of the store inside its directory.
pub const VECTORS_FILE: &str = "vectors.sqlite";

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS rag_collections (
        name TEXT PRIMARY KEY NOT NULL,
        dimensions INTEGER NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS rag_vectors (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        collection TEXT NOT NULL,
        document_id TEXT NOT NULL,
        chunk_index INTEGER NOT NULL,
        chunk TEXT NOT NULL,
        metadata TEXT NOT NULL,
        vector BLOB NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS rag_vectors_document ON rag_vectors (collection, document_id)",
];

/// An exact cosine-similarity store persisted in a SQLite file (scores in
/// `[-1, 1]`, higher is better). See the module docs for the design.
#[derive(Debug)]
pub struct SqliteVectorStore {
    pool: SqlitePool,
    path: PathBuf,
    /// Collections loaded so far.
    loaded: RwLock<HashMap<String, Loaded>>,
}

impl SqliteVectorStore {
    /// Opens (creating it when missing) the store `vectors.sqlite` in
    /// directory `dir` (created too).
    ///
    /// # Errors
    /// [`Error::Storage`] when the directory or the database cannot be
    /// opened.
    pub async fn open(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Storage(format!("{}: {e}", dir.display())))?;
        Self::open_file(dir.join(VECTORS_FILE)).await
    }

    /// Opens (creating it when missing) the store in file `path`.
    ///
    /// # Errors
    /// [`Error::Storage`] when the database cannot be opened.
    pub async fn open_file(path: impl Into<PathBuf>) -> Result<Self> {
        let path = path.into();
        let options = SqliteConnectOptions::from_str("sqlite://")
            .map_err(storage)?
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(storage)?;
        for statement in SCHEMA {
            sqlx::query(statement)
                .execute(&pool)
                .await
                .map_err(storage)?;
        }
        Ok(Self {
            pool,
            path,
            loaded: RwLock::new(HashMap::new()),
        })
    }

    /// The database file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The size of collection `name`, `None` when it does not exist.
    async fn dimensions_of(&self, name: &str) -> Result<Option<usize>> {
        let row = sqlx::query("SELECT dimensions FROM rag_collections WHERE name = ?")
            .bind(name)
            .fetch_optional(&self.pool)
            .await
            .map_err(storage)?;
        row.map(|r| {
            let d: i64 = r.try_get(0).map_err(storage)?;
            usize::try_from(d).map_err(|_| Error::Storage(format!("bad dimensions {d}")))
        })
        .transpose()
    }

    /// Loads collection `name` into `map` unless it is there.
    async fn ensure_loaded(&self, map: &mut HashMap<String, Loaded>, name: &str) -> Result<()> {
        if map.contains_key(name) {
            return Ok(());
        }
        let dimensions =
            self.dimensions_of(name)
                .await?
                .ok_or_else(|| Error::CollectionNotFound {
                    name: name.to_owned(),
                })?;
        let rows = sqlx::query(
            "SELECT document_id, chunk, vector FROM rag_vectors WHERE collection = ? ORDER BY id",
        )
        .bind(name)
        .fetch_all(&self.pool)
        .await
        .map_err(storage)?;
        let mut loaded = Loaded {
            dimensions,
            rows: Vec::with_capacity(rows.len()),
            matrix: Vec::with_capacity(rows.len() * dimensions),
        };
        for row in rows {
            let document_id: String = row.try_get(0).map_err(storage)?;
            let chunk: String = row.try_get(1).map_err(storage)?;
            let vector: Vec<u8> = row.try_get(2).map_err(storage)?;
            let chunk: Chunk = serde_json::from_str(&chunk)
                .map_err(|e| Error::Storage(format!("a stored chunk is unreadable: {e}")))?;
            if vector.len() != dimensions * 4 {
                return Err(Error::Storage(format!(
                    "a stored vector has {} bytes, expected {}",
                    vector.len(),
                    dimensions * 4
                )));
            }
            loaded.matrix.extend(
                vector
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            loaded.rows.push(Row { document_id, chunk });
        }
        map.insert(name.to_owned(), loaded);
        Ok(())
    }

    /// Runs `f` on collection `name`, loading it first when needed.
    async fn with_loaded<T>(&self, name: &str, f: impl FnOnce(&Loaded) -> Result<T>) -> Result<T> {
        {
            let map = self.loaded.read().await;
            if let Some(c) = map.get(name) {
                return f(c);
            }
        }
        let mut map = self.loaded.write().await;
        self.ensure_loaded(&mut map, name).await?;
        match map.get(name) {
            Some(c) => f(c),
            None => Err(Error::CollectionNotFound {
                name: name.to_owned(),
            }),
        }
    }
}

fn storage(e: impl std::fmt::Display) -> Error {
    Error::Storage(e.to_string())
}

impl VectorStore for SqliteVectorStore {
    async fn create_collection(&self, name: &str, dimensions: usize) -> Result<()> {
        if dimensions == 0 {
            return Err(Error::InvalidParameters(
                "dimensions must be at least 1".into(),
            ));
        }
        let mut map = self.loaded.write().await;
        match self.dimensions_of(name).await? {
            Some(d) if d != dimensions => Err(Error::DimensionMismatch {
                expected: d,
                actual: dimensions,
            }),
            Some(_) => Ok(()),
            None => {
                let d = i64::try_from(dimensions)
                    .map_err(|_| Error::InvalidParameters("too many dimensions".into()))?;
                sqlx::query("INSERT INTO rag_collections (name, dimensions) VALUES (?, ?)")
                    .bind(name)
                    .bind(d)
                    .execute(&self.pool)
                    .await
                    .map_err(storage)?;
                map.insert(
                    name.to_owned(),
                    Loaded {
                        dimensions,
                        rows: Vec::new(),
                        matrix: Vec::new(),
                    },
                );
                Ok(())
            }
        }
    }

    async fn delete_collection(&self, name: &str) -> Result<()> {
        let mut map = self.loaded.write().await;
        let mut tx = self.pool.begin().await.map_err(storage)?;
        sqlx::query("DELETE FROM rag_vectors WHERE collection = ?")
            .bind(name)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        sqlx::query("DELETE FROM rag_collections WHERE name = ?")
            .bind(name)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        tx.commit().await.map_err(storage)?;
        map.remove(name);
        Ok(())
    }

    async fn has_collection(&self, name: &str) -> Result<bool> {
        if self.loaded.read().await.contains_key(name) {
            return Ok(true);
        }
        Ok(self.dimensions_of(name).await?.is_some())
    }

    async fn insert(&self, collection: &str, records: Vec<VectorRecord>) -> Result<()> {
        let mut map = self.loaded.write().await;
        self.ensure_loaded(&mut map, collection).await?;
        let dimensions =
            map.get(collection)
                .map(|c| c.dimensions)
                .ok_or_else(|| Error::CollectionNotFound {
                    name: collection.to_owned(),
                })?;
        // Check everything before writing anything.
        let mut prepared = Vec::with_capacity(records.len());
        for r in records {
            let vector = normalised(&r.vector, dimensions)?;
            let chunk = serde_json::to_string(&r.chunk).map_err(storage)?;
            let metadata = serde_json::to_string(&r.chunk.metadata).map_err(storage)?;
            prepared.push((r, vector, chunk, metadata));
        }
        let mut tx = self.pool.begin().await.map_err(storage)?;
        for (r, vector, chunk, metadata) in &prepared {
            let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
            let index = i64::try_from(r.chunk.chunk_index).unwrap_or(i64::MAX);
            sqlx::query(
                "INSERT INTO rag_vectors (collection, document_id, chunk_index, chunk, metadata, vector)
                 VALUES (?, ?, ?, ?, ?, ?)",
            )
            .bind(collection)
            .bind(&r.document_id)
            .bind(index)
            .bind(chunk)
            .bind(metadata)
            .bind(bytes)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        }
        tx.commit().await.map_err(storage)?;
        if let Some(c) = map.get_mut(collection) {
            for (r, vector, _, _) in prepared {
                c.matrix.extend_from_slice(&vector);
                c.rows.push(Row {
                    document_id: r.document_id,
                    chunk: r.chunk,
                });
            }
        }
        Ok(())
    }

    async fn delete(&self, collection: &str, document_id: &str) -> Result<()> {
        let mut map = self.loaded.write().await;
        self.ensure_loaded(&mut map, collection).await?;
        sqlx::query("DELETE FROM rag_vectors WHERE collection = ? AND document_id = ?")
            .bind(collection)
            .bind(document_id)
            .execute(&self.pool)
            .await
            .map_err(storage)?;
        if let Some(c) = map.get_mut(collection) {
            let old_rows = std::mem::take(&mut c.rows);
            let old_matrix = std::mem::take(&mut c.matrix);
            for (row, vector) in old_rows
                .into_iter()
                .zip(old_matrix.chunks_exact(c.dimensions))
            {
                if row.document_id != document_id {
                    c.matrix.extend_from_slice(vector);
                    c.rows.push(row);
                }
            }
        }
        Ok(())
    }

    async fn search(
        &self,
        collection: &str,
        query: &[f32],
        top_k: usize,
        metadata_filter: Option<&Metadata>,
    ) -> Result<Vec<VectorSearchResult>> {
        self.with_loaded(collection, |c| {
            let query = normalised(query, c.dimensions)?;
            Ok(c.search(&query, top_k, metadata_filter)
                .into_iter()
                .filter_map(|(score, i)| {
                    c.rows.get(i).map(|row| VectorSearchResult {
                        score,
                        document_id: row.document_id.clone(),
                        chunk: row.chunk.clone(),
                    })
                })
                .collect())
        })
        .await
    }

    async fn list_documents(
        &self,
        collection: &str,
        metadata_filter: Option<&Metadata>,
    ) -> Result<Vec<DocumentSummary>> {
        self.with_loaded(collection, |c| {
            let mut order: Vec<DocumentSummary> = Vec::new();
            let mut index: HashMap<&str, usize> = HashMap::new();
            for row in c
                .rows
                .iter()
                .filter(|r| matches_filter(&r.chunk.metadata, metadata_filter))
            {
                if let Some(&i) = index.get(row.document_id.as_str()) {
                    if let Some(summary) = order.get_mut(i) {
                        summary.chunk_count += 1;
                    }
                } else {
                    index.insert(&row.document_id, order.len());
                    order.push(DocumentSummary {
                        document_id: row.document_id.clone(),
                        source: row.chunk.source.clone(),
                        chunk_count: 1,
                        metadata: row.chunk.metadata.clone(),
                    });
                }
            }
            Ok(order)
        })
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
        self.with_loaded(collection, |c| {
            let end = offset.saturating_add(limit);
            let mut chunks: Vec<Chunk> = c
                .rows
                .iter()
                .filter(|r| {
                    r.document_id == document_id
                        && (offset..end).contains(&r.chunk.chunk_index)
                        && matches_filter(&r.chunk.metadata, metadata_filter)
                })
                .map(|r| r.chunk.clone())
                .collect();
            chunks.sort_by_key(|c| c.chunk_index);
            Ok(chunks)
        })
        .await
    }
}

#[cfg(test)]
#[path = "sqlite_tests.rs"]
mod tests;
