//! Sessions, their state revisions, and their messages on SQLite (the
//! shared statements of [`crate::session_sql`], spelt for SQLite), and
//! naming a session in place.

use super::SqliteStorage;
use crate::error::Result;
use crate::record::now;

crate::session_sql::session_sql!(SqliteStorage, crate::sql_storage::sqlite_spelling);

impl SqliteStorage {
    /// One statement: the name is set only while `naming.auto` is on.
    pub(super) async fn session_name_if_auto(
        &self,
        user: &str,
        id: &str,
        name: &str,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE sessions SET config = json_set(config, '$.name', ?, '$.naming', json('{\"auto\": false}')), \
             updated_at = ? \
             WHERE user_id = ? AND id = ? AND json_extract(config, '$.naming.auto') = 1",
        )
        .bind(name)
        .bind(now())
        .bind(user)
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }
}
