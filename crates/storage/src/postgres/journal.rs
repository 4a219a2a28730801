//! The tool-call journal ([`ToolCallRecord`]) in PostgreSQL.

use serde_json::Value;

use super::PostgresStorage;
use crate::error::Result;
use crate::journal::{COLUMNS, ToolCallRecord, record, result_text};
use crate::record::now;

impl PostgresStorage {
    pub(super) async fn tool_call_start(&self, call: &ToolCallRecord) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO tool_calls (idempotency_key, session_id, reply_id, call_id, tool_name, \
             started_at) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(&call.idempotency_key)
        .bind(&call.session_id)
        .bind(&call.reply_id)
        .bind(&call.call_id)
        .bind(&call.tool_name)
        .bind(&call.started_at)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub(super) async fn tool_call_finish(&self, key: &str, result: &Value) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE tool_calls SET finished_at = $1, result = $2 \
             WHERE idempotency_key = $3 AND finished_at IS NULL",
        )
        .bind(now())
        .bind(result_text(result))
        .bind(key)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub(super) async fn tool_call_list(&self, session_id: &str) -> Result<Vec<ToolCallRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM tool_calls WHERE session_id = $1 \
             ORDER BY started_at, idempotency_key"
        );
        let rows = sqlx::query(&sql)
            .bind(session_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(record).collect()
    }

    pub(super) async fn tool_call_clear(&self, session_id: &str) -> Result<u64> {
        let done = sqlx::query("DELETE FROM tool_calls WHERE session_id = $1")
            .bind(session_id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }
}
