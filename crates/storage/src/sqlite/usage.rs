//! Usage counters: per session, and per user and UTC day.

use super::SqliteStorage;
use crate::error::Result;
use crate::record::now;
use crate::rows::{USAGE_COLUMNS as COLUMNS, usage as counts, usage_values};
use crate::usage::UsageCounts;

/// `INSERT ... ON CONFLICT DO UPDATE` adding to every counter of `table`
/// keyed by `(user_id, key)`.
fn upsert(table: &str, key: &str) -> String {
    let names = COLUMNS.join(", ");
    let adds: Vec<String> = COLUMNS
        .iter()
        .map(|c| format!("{c} = {table}.{c} + excluded.{c}"))
        .collect();
    format!(
        "INSERT INTO {table} (user_id, {key}, {names}, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT (user_id, {key}) DO UPDATE SET {}, updated_at = excluded.updated_at",
        adds.join(", ")
    )
}

fn sums() -> String {
    COLUMNS
        .iter()
        .map(|c| format!("SUM({c})"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl SqliteStorage {
    pub(super) async fn usage_add(
        &self,
        user: &str,
        session_id: &str,
        day: &str,
        delta: &UsageCounts,
    ) -> Result<()> {
        let values = usage_values(delta);
        let stamp = now();
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        for (table, key, id) in [
            ("session_usage", "session_id", session_id),
            ("user_usage_daily", "day", day),
        ] {
            let sql = upsert(table, key);
            let mut query = sqlx::query(&sql).bind(user).bind(id);
            for value in values {
                query = query.bind(value);
            }
            query.bind(&stamp).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn usage_of_session(&self, user: &str, id: &str) -> Result<UsageCounts> {
        let sql = format!(
            "SELECT {} FROM session_usage WHERE user_id = ? AND session_id = ?",
            COLUMNS.join(", ")
        );
        let row = sqlx::query(&sql)
            .bind(user)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref()
            .map(counts)
            .transpose()
            .map(Option::unwrap_or_default)
    }

    pub(super) async fn usage_of_user(
        &self,
        user: &str,
        since: Option<&str>,
    ) -> Result<UsageCounts> {
        let sql = format!(
            "SELECT {} FROM user_usage_daily WHERE user_id = ? AND day >= ?",
            sums()
        );
        let row = sqlx::query(&sql)
            .bind(user)
            .bind(since.unwrap_or(""))
            .fetch_one(&self.pool)
            .await?;
        counts(&row)
    }
}
