//! Agents, credentials, schedules and API keys on SQLite (the shared
//! statements of [`crate::records_sql`] and [`crate::api_key_sql`], spelt
//! for SQLite), and deleting an agent with its sessions.

use super::SqliteStorage;
use crate::error::Result;
use crate::sql_storage::sqlite_spelling;

crate::records_sql::records_sql!(SqliteStorage, sqlite_spelling);
crate::api_key_sql::api_key_sql!(SqliteStorage, sqlite_spelling);

impl SqliteStorage {
    /// Deletes an agent with its sessions and their messages, in one
    /// transaction.
    pub(super) async fn agent_delete_cascade(&self, user: &str, id: &str) -> Result<bool> {
        let mut tx = self.write_tx().await?;
        let done = sqlx::query("DELETE FROM agents WHERE user_id = ? AND id = ?")
            .bind(user)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() > 0 {
            sqlx::query(
                "DELETE FROM messages WHERE session_id IN \
                 (SELECT id FROM sessions WHERE user_id = ? AND agent_id = ?)",
            )
            .bind(user)
            .bind(id)
            .execute(&mut *tx)
            .await?;
            sqlx::query("DELETE FROM sessions WHERE user_id = ? AND agent_id = ?")
                .bind(user)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }
}
