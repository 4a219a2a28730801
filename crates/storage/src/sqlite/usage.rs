//! Usage counters on SQLite (the shared statements of
//! [`crate::usage_sql`], spelt for SQLite).

use crate::usage_sql::MAX;

// A user's days are added up in Rust, saturating: SQLite's `SUM` fails
// on overflow.
crate::usage_sql::usage_sql!(
    super::SqliteStorage,
    crate::sql_storage::sqlite_spelling,
    add = saturating_add,
    read = integer,
    days = integer
);

/// The stored count plus `excluded`'s, stopping at [`MAX`] (past it,
/// SQLite would turn the sum into a float the column cannot be read back
/// as; every value bound is in `0..=i64::MAX`, so `MAX - excluded`
/// cannot overflow).
fn saturating_add(table: &str, c: &str) -> String {
    format!(
        "CASE WHEN {table}.{c} > {MAX} - excluded.{c} THEN {MAX} \
         ELSE {table}.{c} + excluded.{c} END"
    )
}

/// A counter as an integer: a value an older version let overflow into a
/// float reads as the largest integer (SQLite's `CAST` clamps).
fn integer(c: &str) -> String {
    format!("CAST({c} AS INTEGER)")
}
