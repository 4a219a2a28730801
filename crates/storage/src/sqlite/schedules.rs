//! Schedule lookups on SQLite (the shared statements of
//! [`crate::schedule_sql`], spelt for SQLite).

crate::schedule_sql::schedule_sql!(super::SqliteStorage, crate::sql_storage::sqlite_spelling);
