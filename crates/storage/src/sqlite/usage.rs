//! Usage counters: per session, and per user and UTC day.

use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::SqliteStorage;
use crate::error::Result;
use crate::record::now;
use crate::usage::UsageCounts;

/// The counter columns, in [`UsageCounts`] order.
const COLUMNS: [&str; 6] = [
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "model_calls",
    "runs",
];

/// SQL integers are signed: larger counts are stored as `i64::MAX`.
fn to_sql(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn from_sql(n: Option<i64>) -> u64 {
    n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0)
}

fn counts(row: &SqliteRow) -> Result<UsageCounts> {
    let get = |i: usize| -> Result<u64> { Ok(from_sql(row.try_get::<Option<i64>, _>(i)?)) };
    Ok(UsageCounts {
        input_tokens: get(0)?,
        output_tokens: get(1)?,
        cache_read_tokens: get(2)?,
        cache_write_tokens: get(3)?,
        model_calls: get(4)?,
        runs: get(5)?,
    })
}

/// `INSERT ... ON CONFLICT DO UPDATE` adding to every counter of `table`
/// keyed by `(user_id, key)` (SQLite and PostgreSQL both read it).
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
        let values = [
            delta.input_tokens,
            delta.output_tokens,
            delta.cache_read_tokens,
            delta.cache_write_tokens,
            delta.model_calls,
            delta.runs,
        ];
        let stamp = now();
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        for (table, key, id) in [
            ("session_usage", "session_id", session_id),
            ("user_usage_daily", "day", day),
        ] {
            let sql = upsert(table, key);
            let mut query = sqlx::query(&sql).bind(user).bind(id);
            for value in values {
                query = query.bind(to_sql(value));
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
