//! Agents, credentials, schedules and API keys on PostgreSQL (the shared
//! statements of [`crate::records_sql`] and [`crate::api_key_sql`], as
//! they are), and deleting an agent with its sessions.

use super::PostgresStorage;
use crate::error::Result;

crate::records_sql::records_sql!(PostgresStorage, str::to_owned);
crate::api_key_sql::api_key_sql!(PostgresStorage, str::to_owned);

impl PostgresStorage {
    /// Deletes an agent with its sessions and their messages, in one
    /// transaction.
    pub(super) async fn agent_delete_cascade(&self, user: &str, id: &str) -> Result<bool> {
        let mut tx = self.write_tx().await?;
        let done = sqlx::query("DELETE FROM agents WHERE user_id = $1 AND id = $2")
            .bind(user)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let deleted = done.rows_affected() > 0;
        if deleted {
            // One statement: the sessions go, and their messages with them.
            sqlx::query(
                "WITH gone AS (DELETE FROM sessions WHERE user_id = $1 AND agent_id = $2 \
                 RETURNING id) \
                 DELETE FROM messages WHERE session_id IN (SELECT id FROM gone)",
            )
            .bind(user)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(deleted)
    }
}
