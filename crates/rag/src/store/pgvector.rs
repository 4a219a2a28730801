//! [`PgVectorStore`]: vectors in PostgreSQL with the `pgvector` extension,
//! for deployments that already run PostgreSQL (several service replicas
//! share it; the embedded store lives in one machine's data directory).
//!
//! # Layout
//! `rag_collections` maps a collection name to its size and to a table of
//! its own (`rag_vec_<uuid>`), because a `vector(n)` column and its index
//! need one size. A record row holds the document id, the chunk index, the
//! chunk as JSON text, its metadata as `jsonb` (for the filter) and the
//! vector, normalised at insert as the embedded store does, so a score is
//! the inner product: cosine similarity in `[-1, 1]`, higher is better, and
//! a zero vector scores 0 instead of the `NaN` of a cosine distance.
//!
//! # Search
//! Each table gets an HNSW index (`vector_ip_ops`) when its size is at most
//! [`HNSW_MAX_DIMENSIONS`] (pgvector indexes no more): a search without a
//! metadata filter walks it, approximate like any HNSW search. pgvector
//! filters an index walk's candidates afterwards, which can return fewer
//! than `top_k` hits for a selective filter, so a filtered search turns
//! index scans off for its transaction and is exact.
//!
//! Metadata filters compare each key with `jsonb` equality
//! (`metadata -> key = value`). PostgreSQL's `jsonb` refuses the NUL
//! character (`\u0000`): a chunk whose metadata holds one fails to insert
//! with [`Error::Storage`](crate::Error).

use std::fmt::Write as _;
use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::{Postgres, QueryBuilder, Row as _};

use super::matrix::normalised;
use super::{DocumentSummary, VectorRecord, VectorSearchResult, VectorStore};
use crate::error::{Error, Result};
use crate::section::{Chunk, Metadata};

/// The largest vector size pgvector builds an HNSW index for.
pub const HNSW_MAX_DIMENSIONS: usize = 2000;

/// Rows per `INSERT` statement (five parameters each, far under
/// PostgreSQL's 65 535 parameters per statement).
const INSERT_BATCH: usize = 1000;

const SCHEMA: &[&str] = &[
    "CREATE EXTENSION IF NOT EXISTS vector",
    "CREATE TABLE IF NOT EXISTS rag_collections (
        name TEXT PRIMARY KEY NOT NULL,
        dimensions INTEGER NOT NULL,
        table_name TEXT NOT NULL UNIQUE
    )",
];

/// A collection's size and table.
#[derive(Debug)]
struct Collection {
    dimensions: usize,
    table: String,
}

/// A vector store in PostgreSQL with `pgvector` (scores in `[-1, 1]`,
/// higher is better). See the module docs for the layout.
#[derive(Debug)]
pub struct PgVectorStore {
    pool: PgPool,
}

impl PgVectorStore {
    /// Connects to `url` (`postgres://…`), creates the `vector` extension
    /// when missing, and the collections table.
    ///
    /// # Errors
    /// [`Error::Storage`] when the server is unreachable, or the extension
    /// is not installed there (or the user may not create it).
    pub async fn connect(url: &str) -> Result<Self> {
        let options = PgConnectOptions::from_str(url).map_err(storage)?;
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await
            .map_err(storage)?;
        Self::with_pool(pool).await
    }

    /// Uses `pool`, creating the extension and the collections table as
    /// [`PgVectorStore::connect`] does.
    ///
    /// # Errors
    /// As [`PgVectorStore::connect`].
    pub async fn with_pool(pool: PgPool) -> Result<Self> {
        // Two stores starting together must not both create the extension.
        let mut tx = pool.begin().await.map_err(storage)?;
        sqlx::query("SELECT pg_advisory_xact_lock(7340572113)")
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        for statement in SCHEMA {
            sqlx::query(statement)
                .execute(&mut *tx)
                .await
                .map_err(|e| {
                    Error::Storage(format!(
                        "preparing the pgvector store: {e} (is the `vector` extension installed \
                         on the server?)"
                    ))
                })?;
        }
        tx.commit().await.map_err(storage)?;
        Ok(Self { pool })
    }

    /// Collection `name`, `None` when it does not exist. Read on every
    /// call (one primary-key lookup), so a collection another replica
    /// deleted or re-created is never served from a stale table name.
    async fn lookup(&self, name: &str) -> Result<Option<Collection>> {
        let row = sqlx::query("SELECT dimensions, table_name FROM rag_collections WHERE name = $1")
            .bind(name)
            .fetch_optional(&self.pool)
            .await
            .map_err(storage)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let dimensions: i32 = row.try_get(0).map_err(storage)?;
        let table: String = row.try_get(1).map_err(storage)?;
        Ok(Some(Collection {
            dimensions: usize::try_from(dimensions)
                .map_err(|_| Error::Storage(format!("bad dimensions {dimensions}")))?,
            table: checked_table(table)?,
        }))
    }

    /// Collection `name`, or [`Error::CollectionNotFound`].
    async fn collection(&self, name: &str) -> Result<Collection> {
        self.lookup(name)
            .await?
            .ok_or_else(|| Error::CollectionNotFound {
                name: name.to_owned(),
            })
    }
}

fn storage(e: impl std::fmt::Display) -> Error {
    Error::Storage(e.to_string())
}

/// A table name read back from `rag_collections`, checked before it is
/// spliced into SQL (only names this store made pass).
fn checked_table(table: String) -> Result<String> {
    let ok = table
        .strip_prefix("rag_vec_")
        .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_hexdigit()));
    if ok {
        Ok(table)
    } else {
        Err(Error::Storage(format!(
            "unexpected vector table name {table:?}"
        )))
    }
}

/// pgvector's text form of `vector`: `[x,y,…]`.
fn vector_literal(vector: &[f32]) -> String {
    let mut out = String::with_capacity(vector.len() * 12 + 2);
    out.push('[');
    for (i, x) in vector.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{x}");
    }
    out.push(']');
    out
}

/// Appends ` AND metadata -> $k = $v::jsonb` for every filter pair.
fn push_filter(query: &mut QueryBuilder<'_, Postgres>, filter: Option<&Metadata>) {
    for (key, value) in filter.into_iter().flatten() {
        query.push(" AND metadata -> ");
        query.push_bind(key.clone());
        query.push(" = ");
        query.push_bind(value.to_string());
        query.push("::jsonb");
    }
}

fn read_chunk(row: &PgRow, column: usize) -> Result<Chunk> {
    let text: String = row.try_get(column).map_err(storage)?;
    serde_json::from_str(&text)
        .map_err(|e| Error::Storage(format!("a stored chunk is unreadable: {e}")))
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl VectorStore for PgVectorStore {
    async fn create_collection(&self, name: &str, dimensions: usize) -> Result<()> {
        if dimensions == 0 {
            return Err(Error::InvalidParameters(
                "dimensions must be at least 1".into(),
            ));
        }
        let size = i32::try_from(dimensions)
            .ok()
            .filter(|d| *d <= 16_000)
            .ok_or_else(|| {
                Error::InvalidParameters("pgvector stores at most 16000 dimensions".into())
            })?;
        let table = format!("rag_vec_{}", uuid::Uuid::new_v4().simple());
        let mut tx = self.pool.begin().await.map_err(storage)?;
        // Serialises creators of the same name: the loser sees the row.
        let inserted = sqlx::query(
            "INSERT INTO rag_collections (name, dimensions, table_name) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(size)
        .bind(&table)
        .execute(&mut *tx)
        .await
        .map_err(storage)?
        .rows_affected();
        if inserted == 0 {
            tx.rollback().await.map_err(storage)?;
            let existing = self.collection(name).await?;
            if existing.dimensions != dimensions {
                return Err(Error::DimensionMismatch {
                    expected: existing.dimensions,
                    actual: dimensions,
                });
            }
            return Ok(());
        }
        sqlx::query(&format!(
            "CREATE TABLE {table} (
                id BIGSERIAL PRIMARY KEY,
                document_id TEXT NOT NULL,
                chunk_index BIGINT NOT NULL,
                chunk TEXT NOT NULL,
                metadata JSONB NOT NULL,
                embedding vector({size}) NOT NULL
            )"
        ))
        .execute(&mut *tx)
        .await
        .map_err(storage)?;
        sqlx::query(&format!(
            "CREATE INDEX {table}_document ON {table} (document_id, chunk_index)"
        ))
        .execute(&mut *tx)
        .await
        .map_err(storage)?;
        if dimensions <= HNSW_MAX_DIMENSIONS {
            sqlx::query(&format!(
                "CREATE INDEX {table}_hnsw ON {table} USING hnsw (embedding vector_ip_ops)"
            ))
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        }
        tx.commit().await.map_err(storage)?;
        Ok(())
    }

    async fn delete_collection(&self, name: &str) -> Result<()> {
        let Some(c) = self.lookup(name).await? else {
            return Ok(());
        };
        let mut tx = self.pool.begin().await.map_err(storage)?;
        sqlx::query("DELETE FROM rag_collections WHERE name = $1")
            .bind(name)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        sqlx::query(&format!("DROP TABLE IF EXISTS {}", c.table))
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        tx.commit().await.map_err(storage)?;
        Ok(())
    }

    async fn has_collection(&self, name: &str) -> Result<bool> {
        Ok(self.lookup(name).await?.is_some())
    }

    async fn insert(&self, collection: &str, records: Vec<VectorRecord>) -> Result<()> {
        let c = self.collection(collection).await?;
        // Check everything before writing anything.
        let mut rows = Vec::with_capacity(records.len());
        for r in &records {
            let vector = normalised(&r.vector, c.dimensions)?;
            let chunk = serde_json::to_string(&r.chunk).map_err(storage)?;
            let metadata = serde_json::to_string(&r.chunk.metadata).map_err(storage)?;
            rows.push((
                r.document_id.as_str(),
                to_i64(r.chunk.chunk_index),
                chunk,
                metadata,
                vector_literal(&vector),
            ));
        }
        let mut tx = self.pool.begin().await.map_err(storage)?;
        for batch in rows.chunks(INSERT_BATCH) {
            let mut query = QueryBuilder::<Postgres>::new(format!(
                "INSERT INTO {} (document_id, chunk_index, chunk, metadata, embedding) ",
                c.table
            ));
            query.push_values(batch, |mut row, (doc, index, chunk, metadata, vector)| {
                row.push_bind(*doc)
                    .push_bind(*index)
                    .push_bind(chunk.as_str())
                    .push_bind(metadata.as_str())
                    .push_unseparated("::jsonb")
                    .push_bind(vector.as_str())
                    .push_unseparated("::vector");
            });
            query.build().execute(&mut *tx).await.map_err(storage)?;
        }
        tx.commit().await.map_err(storage)?;
        Ok(())
    }

    async fn delete(&self, collection: &str, document_id: &str) -> Result<()> {
        let c = self.collection(collection).await?;
        sqlx::query(&format!("DELETE FROM {} WHERE document_id = $1", c.table))
            .bind(document_id)
            .execute(&self.pool)
            .await
            .map_err(storage)?;
        Ok(())
    }

    async fn search(
        &self,
        collection: &str,
        query: &[f32],
        top_k: usize,
        metadata_filter: Option<&Metadata>,
    ) -> Result<Vec<VectorSearchResult>> {
        let c = self.collection(collection).await?;
        let vector = vector_literal(&normalised(query, c.dimensions)?);
        if top_k == 0 {
            return Ok(Vec::new());
        }
        let mut sql = QueryBuilder::<Postgres>::new("SELECT document_id, chunk, -(embedding <#> ");
        sql.push_bind(vector.as_str());
        sql.push(format!("::vector) AS score FROM {} WHERE TRUE", c.table));
        push_filter(&mut sql, metadata_filter);
        sql.push(" ORDER BY embedding <#> ");
        sql.push_bind(vector.as_str());
        sql.push("::vector, id LIMIT ");
        sql.push_bind(to_i64(top_k));
        let mut tx = self.pool.begin().await.map_err(storage)?;
        if metadata_filter.is_some_and(|f| !f.is_empty()) {
            sqlx::query("SET LOCAL enable_indexscan = off")
                .execute(&mut *tx)
                .await
                .map_err(storage)?;
        }
        let rows = sql.build().fetch_all(&mut *tx).await.map_err(storage)?;
        tx.commit().await.map_err(storage)?;
        rows.iter()
            .map(|row| {
                let score: f64 = row.try_get(2).map_err(storage)?;
                #[allow(clippy::cast_possible_truncation)]
                Ok(VectorSearchResult {
                    score: score as f32,
                    document_id: row.try_get(0).map_err(storage)?,
                    chunk: read_chunk(row, 1)?,
                })
            })
            .collect()
    }

    async fn list_documents(
        &self,
        collection: &str,
        metadata_filter: Option<&Metadata>,
    ) -> Result<Vec<DocumentSummary>> {
        let c = self.collection(collection).await?;
        let mut sql = QueryBuilder::<Postgres>::new(format!(
            "SELECT DISTINCT ON (document_id) document_id, chunk,
                    count(*) OVER (PARTITION BY document_id)
             FROM {} WHERE TRUE",
            c.table
        ));
        push_filter(&mut sql, metadata_filter);
        sql.push(" ORDER BY document_id, chunk_index, id");
        let rows = sql.build().fetch_all(&self.pool).await.map_err(storage)?;
        rows.iter()
            .map(|row| {
                let chunk = read_chunk(row, 1)?;
                let count: i64 = row.try_get(2).map_err(storage)?;
                Ok(DocumentSummary {
                    document_id: row.try_get(0).map_err(storage)?,
                    source: chunk.source,
                    chunk_count: usize::try_from(count).unwrap_or(0),
                    metadata: chunk.metadata,
                })
            })
            .collect()
    }

    async fn list_chunks(
        &self,
        collection: &str,
        document_id: &str,
        offset: usize,
        limit: usize,
        metadata_filter: Option<&Metadata>,
    ) -> Result<Vec<Chunk>> {
        let c = self.collection(collection).await?;
        let mut sql = QueryBuilder::<Postgres>::new(format!(
            "SELECT chunk FROM {} WHERE document_id = ",
            c.table
        ));
        sql.push_bind(document_id);
        sql.push(" AND chunk_index >= ");
        sql.push_bind(to_i64(offset));
        sql.push(" AND chunk_index < ");
        sql.push_bind(to_i64(offset.saturating_add(limit)));
        push_filter(&mut sql, metadata_filter);
        sql.push(" ORDER BY chunk_index, id");
        let rows = sql.build().fetch_all(&self.pool).await.map_err(storage)?;
        rows.iter().map(|row| read_chunk(row, 0)).collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn vectors_are_written_in_pgvector_text_form() {
        assert_eq!(vector_literal(&[1.0, -0.5, 0.0]), "[1,-0.5,0]");
        assert_eq!(vector_literal(&[]), "[]");
        assert_eq!(vector_literal(&[1e-7]), "[0.0000001]");
    }

    #[test]
    fn only_table_names_this_store_makes_are_spliced_into_sql() {
        assert!(checked_table("rag_vec_0123abcd".into()).is_ok());
        for bad in [
            "rag_vec_",
            "rag_vec_x; DROP TABLE y",
            "sessions",
            "rag_vec_ab cd",
        ] {
            assert!(checked_table(bad.into()).is_err(), "{bad}");
        }
    }
}
