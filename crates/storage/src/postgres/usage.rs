//! Usage counters on PostgreSQL (the shared statements of
//! [`crate::usage_sql`], as they are).

use crate::usage_sql::MAX;

// A user's days are summed in SQL: one row.
crate::usage_sql::usage_sql!(
    super::PostgresStorage,
    str::to_owned,
    add = saturating_add,
    read = str::to_owned,
    days = sum
);

/// The stored count plus `excluded`'s, stopping at [`MAX`] instead of
/// failing (`bigint out of range`).
fn saturating_add(table: &str, c: &str) -> String {
    format!("LEAST({table}.{c}::NUMERIC + excluded.{c}, {MAX})::BIGINT")
}

/// A counter's saturating sum (`SUM` of `BIGINT` is `NUMERIC`).
fn sum(c: &str) -> String {
    format!("LEAST(COALESCE(SUM({c}), 0), {MAX})::BIGINT")
}
