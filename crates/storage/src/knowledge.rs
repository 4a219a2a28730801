//! Knowledge bases and their documents: the records, and the SQL both
//! backends run for them ([`knowledge_sql!`] writes the same inherent
//! methods for each; the statements are written with `$n` placeholders,
//! which SQLite reads as `?n`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::rows::Columns;

/// A knowledge base owned by a user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeBaseRecord {
    /// The knowledge base id.
    pub id: String,
    /// The owner.
    pub user_id: String,
    /// Its name.
    pub name: String,
    /// Its settings (`embedding_model_config`, `chunker_config`, ...).
    pub data: Value,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}

/// One uploaded file of a knowledge base and how far its indexing got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeDocumentRecord {
    /// The document id (also its id in the vector store).
    pub id: String,
    /// The knowledge base it belongs to.
    pub knowledge_base_id: String,
    /// The owner (the knowledge base's).
    pub user_id: String,
    /// The uploaded file's name.
    pub filename: String,
    /// Its media type, when known.
    pub content_type: Option<String>,
    /// Its size in bytes.
    pub size: i64,
    /// `pending`, `parsing`, `chunking`, `indexing`, `ready` or `error`.
    pub status: String,
    /// Why indexing failed (with status `error`).
    pub error: Option<String>,
    /// How many chunks it was split into.
    pub chunk_count: i64,
    /// When it was uploaded.
    pub created_at: String,
    /// When its status last changed.
    pub updated_at: String,
}

/// A knowledge base from a row.
pub(crate) fn kb_row(row: &impl Columns) -> Result<KnowledgeBaseRecord> {
    Ok(KnowledgeBaseRecord {
        id: row.text("id")?,
        user_id: row.text("user_id")?,
        name: row.text("name")?,
        data: row.json("data")?,
        created_at: row.text("created_at")?,
        updated_at: row.text("updated_at")?,
    })
}

/// A document from a row.
pub(crate) fn doc_row(row: &impl Columns) -> Result<KnowledgeDocumentRecord> {
    Ok(KnowledgeDocumentRecord {
        id: row.text("id")?,
        knowledge_base_id: row.text("knowledge_base_id")?,
        user_id: row.text("user_id")?,
        filename: row.text("filename")?,
        content_type: row.opt_text("content_type")?,
        size: row.int("size")?,
        status: row.text("status")?,
        error: row.opt_text("error")?,
        chunk_count: row.int("chunk_count")?,
        created_at: row.text("created_at")?,
        updated_at: row.text("updated_at")?,
    })
}

/// The statuses indexing has not finished with.
pub(crate) const UNFINISHED: &str = concat!(
    "SELECT ",
    crate::columns::knowledge_documents!(),
    " FROM knowledge_documents WHERE status NOT IN ('ready', 'error') \
     ORDER BY created_at, id"
);

/// The knowledge-base methods of a SQL backend `$backend` (whose `pool`
/// field is visible where the macro is used); `$sql` turns a statement
/// with `$n` placeholders into the backend's spelling.
macro_rules! knowledge_sql {
    ($backend:ty, $sql:expr) => {
        const _: () = {
            use $crate::error::Result;
            use $crate::knowledge::{
                KnowledgeBaseRecord, KnowledgeDocumentRecord, UNFINISHED, doc_row, kb_row,
            };

            fn sql(statement: &str) -> String {
                let spell: fn(&str) -> String = $sql;
                spell(statement)
            }

            impl $backend {
                pub(super) async fn kb_insert(&self, kb: &KnowledgeBaseRecord) -> Result<()> {
                    sqlx::query(&sql(
                        "INSERT INTO knowledge_bases (id, user_id, name, data, created_at, \
                         updated_at) VALUES ($1, $2, $3, $4, $5, $6)",
                    ))
                    .bind(&kb.id)
                    .bind(&kb.user_id)
                    .bind(&kb.name)
                    .bind(serde_json::to_string(&kb.data)?)
                    .bind(&kb.created_at)
                    .bind(&kb.updated_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                pub(super) async fn kb_get(
                    &self,
                    user: &str,
                    id: &str,
                ) -> Result<Option<KnowledgeBaseRecord>> {
                    let row = sqlx::query(&sql(
                        concat!("SELECT ", crate::columns::knowledge_bases!(), " FROM knowledge_bases WHERE user_id = $1 AND id = $2"),
                    ))
                    .bind(user)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(kb_row).transpose()
                }

                pub(super) async fn kb_list(&self, user: &str) -> Result<Vec<KnowledgeBaseRecord>> {
                    let rows = sqlx::query(&sql(
                        concat!("SELECT ", crate::columns::knowledge_bases!(), " FROM knowledge_bases WHERE user_id = $1 ORDER BY created_at, id"),
                    ))
                    .bind(user)
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(kb_row).collect()
                }

                pub(super) async fn kb_update(&self, kb: &KnowledgeBaseRecord) -> Result<()> {
                    let done = sqlx::query(&sql(
                        "UPDATE knowledge_bases SET name = $1, data = $2, updated_at = $3 \
                         WHERE user_id = $4 AND id = $5",
                    ))
                    .bind(&kb.name)
                    .bind(serde_json::to_string(&kb.data)?)
                    .bind(&kb.updated_at)
                    .bind(&kb.user_id)
                    .bind(&kb.id)
                    .execute(&self.pool)
                    .await?;
                    crate::rows::found(done.rows_affected(), "knowledge base", &kb.id)
                }

                pub(super) async fn kb_delete(&self, user: &str, id: &str) -> Result<bool> {
                    let mut tx = self.pool.begin().await?;
                    sqlx::query(&sql(
                        "DELETE FROM knowledge_documents WHERE user_id = $1 \
                         AND knowledge_base_id = $2",
                    ))
                    .bind(user)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                    let done = sqlx::query(&sql(
                        "DELETE FROM knowledge_bases WHERE user_id = $1 AND id = $2",
                    ))
                    .bind(user)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                    tx.commit().await?;
                    Ok(done.rows_affected() > 0)
                }

                pub(super) async fn kdoc_insert(&self, d: &KnowledgeDocumentRecord) -> Result<()> {
                    sqlx::query(&sql(
                        "INSERT INTO knowledge_documents (id, knowledge_base_id, user_id, \
                         filename, content_type, size, status, error, chunk_count, created_at, \
                         updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                    ))
                    .bind(&d.id)
                    .bind(&d.knowledge_base_id)
                    .bind(&d.user_id)
                    .bind(&d.filename)
                    .bind(&d.content_type)
                    .bind(d.size)
                    .bind(&d.status)
                    .bind(&d.error)
                    .bind(d.chunk_count)
                    .bind(&d.created_at)
                    .bind(&d.updated_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                pub(super) async fn kdoc_get(
                    &self,
                    user: &str,
                    kb: &str,
                    id: &str,
                ) -> Result<Option<KnowledgeDocumentRecord>> {
                    let row = sqlx::query(&sql(
                        concat!("SELECT ", crate::columns::knowledge_documents!(), " FROM knowledge_documents WHERE user_id = $1 \
                         AND knowledge_base_id = $2 AND id = $3"),
                    ))
                    .bind(user)
                    .bind(kb)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(doc_row).transpose()
                }

                pub(super) async fn kdoc_list(
                    &self,
                    user: &str,
                    kb: &str,
                ) -> Result<Vec<KnowledgeDocumentRecord>> {
                    let rows = sqlx::query(&sql(
                        concat!("SELECT ", crate::columns::knowledge_documents!(), " FROM knowledge_documents WHERE user_id = $1 \
                         AND knowledge_base_id = $2 ORDER BY created_at, id"),
                    ))
                    .bind(user)
                    .bind(kb)
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(doc_row).collect()
                }

                pub(super) async fn kdoc_set_status(
                    &self,
                    id: &str,
                    status: &str,
                    error: Option<&str>,
                    chunk_count: i64,
                    updated_at: &str,
                ) -> Result<bool> {
                    let done = sqlx::query(&sql(
                        "UPDATE knowledge_documents SET status = $1, error = $2, \
                         chunk_count = $3, updated_at = $4 WHERE id = $5",
                    ))
                    .bind(status)
                    .bind(error)
                    .bind(chunk_count)
                    .bind(updated_at)
                    .bind(id)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() > 0)
                }

                pub(super) async fn kdoc_delete(
                    &self,
                    user: &str,
                    kb: &str,
                    id: &str,
                ) -> Result<bool> {
                    let done = sqlx::query(&sql(
                        "DELETE FROM knowledge_documents WHERE user_id = $1 \
                         AND knowledge_base_id = $2 AND id = $3",
                    ))
                    .bind(user)
                    .bind(kb)
                    .bind(id)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() > 0)
                }

                pub(super) async fn kdoc_unfinished(&self) -> Result<Vec<KnowledgeDocumentRecord>> {
                    let rows = sqlx::query(UNFINISHED).fetch_all(&self.pool).await?;
                    rows.iter().map(doc_row).collect()
                }
            }
        };
    };
}
pub(crate) use knowledge_sql;
