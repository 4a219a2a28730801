//! Usage counters: per session, and per user and UTC day.

use super::SqliteStorage;
use crate::error::Result;
use crate::record::now;
use crate::rows::{USAGE_COLUMNS as COLUMNS, usage as counts, usage_values};
use crate::usage::UsageCounts;

/// The largest count an SQLite integer holds: additions stop there (past
/// it, SQLite would turn the sum into a float the column cannot be read
/// back as, and `SUM` would fail with an integer overflow).
const MAX: &str = "9223372036854775807";

/// `INSERT ... ON CONFLICT DO UPDATE` adding to every counter of `table`
/// keyed by `(user_id, key)`, saturating (every value bound is in
/// `0..=i64::MAX`, so `MAX - excluded` cannot overflow).
fn upsert(table: &str, key: &str) -> String {
    let names = COLUMNS.join(", ");
    let adds: Vec<String> = COLUMNS
        .iter()
        .map(|c| {
            format!(
                "{c} = CASE WHEN {table}.{c} > {MAX} - excluded.{c} THEN {MAX} \
                 ELSE {table}.{c} + excluded.{c} END"
            )
        })
        .collect();
    format!(
        "INSERT INTO {table} (user_id, {key}, {names}, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT (user_id, {key}) DO UPDATE SET {}, updated_at = excluded.updated_at",
        adds.join(", ")
    )
}

/// Every counter as an integer: a value an older version let overflow
/// into a float reads as the largest integer (SQLite's `CAST` clamps).
fn integers() -> String {
    COLUMNS
        .iter()
        .map(|c| format!("CAST({c} AS INTEGER)"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every counter capped at the largest SQL integer, as PostgreSQL's sums
/// are.
fn at_most_sql_max(c: UsageCounts) -> UsageCounts {
    let cap = |n: u64| n.min(i64::MAX.unsigned_abs());
    UsageCounts {
        input_tokens: cap(c.input_tokens),
        output_tokens: cap(c.output_tokens),
        cache_read_tokens: cap(c.cache_read_tokens),
        cache_write_tokens: cap(c.cache_write_tokens),
        model_calls: cap(c.model_calls),
        runs: cap(c.runs),
    }
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
            integers()
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
        // Added up here, saturating: SQLite's `SUM` fails on overflow.
        let sql = format!(
            "SELECT {} FROM user_usage_daily WHERE user_id = ? AND day >= ?",
            integers()
        );
        let rows = sqlx::query(&sql)
            .bind(user)
            .bind(since.unwrap_or(""))
            .fetch_all(&self.pool)
            .await?;
        let mut total = UsageCounts::default();
        for row in &rows {
            total.add(&counts(row)?);
        }
        Ok(at_most_sql_max(total))
    }
}
