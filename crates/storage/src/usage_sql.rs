//! Usage counters, per session and per user and UTC day: one set of
//! statements for both SQL backends, each spelling how a counter
//! saturates and how it is read.

use crate::rows::USAGE_COLUMNS;
use crate::usage::UsageCounts;

/// The largest count a SQL integer (`BIGINT`, SQLite's `INTEGER`) holds:
/// additions and sums stop there instead of failing or turning into
/// floats.
pub(crate) const MAX: &str = "9223372036854775807";

/// `INSERT ... ON CONFLICT DO UPDATE` adding to every counter of `table`
/// keyed by `(user_id, key)`; `add(table, column)` spells the saturating
/// sum of the stored count and `excluded`'s.
pub(crate) fn upsert(table: &str, key: &str, add: fn(&str, &str) -> String) -> String {
    let names = USAGE_COLUMNS.join(", ");
    let adds: Vec<String> = USAGE_COLUMNS
        .iter()
        .map(|c| format!("{c} = {}", add(table, c)))
        .collect();
    format!(
        "INSERT INTO {table} (user_id, {key}, {names}, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         ON CONFLICT (user_id, {key}) DO UPDATE SET {}, updated_at = excluded.updated_at",
        adds.join(", ")
    )
}

/// Every counter, each spelt by `read(column)`, in
/// [`USAGE_COLUMNS`] order.
pub(crate) fn counters(read: fn(&str) -> String) -> String {
    USAGE_COLUMNS
        .iter()
        .map(|c| read(c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every counter capped at the largest SQL integer (what a sum in SQL
/// stops at).
pub(crate) fn at_most_sql_max(c: UsageCounts) -> UsageCounts {
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

/// The statements for `$backend` (with a `pool` and a `write_tx`),
/// written for PostgreSQL and passed through `$spell` (the backend's
/// spelling of a statement); `$add` spells a saturating addition (see
/// [`upsert`]), `$read` a counter as a session's usage reads it, and
/// `$days` a counter as a user's days read it: summed there, in one row,
/// or a row a day that is added up here, saturating.
macro_rules! usage_sql {
    ($backend:ty, $spell:expr, add = $add:expr, read = $read:expr, days = $days:expr) => {
        const _: () = {
            use $crate::error::Result;
            use $crate::record::now;
            use $crate::rows::{usage as counts, usage_values};
            use $crate::usage::UsageCounts;
            use $crate::usage_sql::{at_most_sql_max, counters, upsert};

            fn sql(statement: &str) -> String {
                let spell: fn(&str) -> String = $spell;
                spell(statement)
            }

            impl $backend {
                pub(super) async fn usage_add(
                    &self,
                    user: &str,
                    session_id: &str,
                    day: &str,
                    delta: &UsageCounts,
                ) -> Result<()> {
                    let values = usage_values(delta);
                    let stamp = now();
                    let mut tx = self.write_tx().await?;
                    for (table, key, id) in [
                        ("session_usage", "session_id", session_id),
                        ("user_usage_daily", "day", day),
                    ] {
                        let statement = sql(&upsert(table, key, $add));
                        let mut query = sqlx::query(&statement).bind(user).bind(id);
                        for value in values {
                            query = query.bind(value);
                        }
                        query.bind(&stamp).execute(&mut *tx).await?;
                    }
                    tx.commit().await?;
                    Ok(())
                }

                pub(super) async fn usage_of_session(
                    &self,
                    user: &str,
                    id: &str,
                ) -> Result<UsageCounts> {
                    let statement = sql(&format!(
                        "SELECT {} FROM session_usage WHERE user_id = $1 AND session_id = $2",
                        counters($read)
                    ));
                    let row = sqlx::query(&statement)
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
                    let statement = sql(&format!(
                        "SELECT {} FROM user_usage_daily \
                         WHERE user_id = $1 AND day COLLATE \"C\" >= $2",
                        counters($days)
                    ));
                    let rows = sqlx::query(&statement)
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
        };
    };
}

pub(crate) use usage_sql;
