//! Channels on SQLite (the shared statements of
//! [`crate::channel_sql`], spelt for SQLite).

crate::channel_sql::channel_sql!(super::SqliteStorage, crate::sql_storage::sqlite_spelling);
