//! Users' libraries of MCP servers and skills on SQLite (the shared
//! statements of [`crate::library_sql`], spelt for SQLite).

crate::library_sql::library_sql!(super::SqliteStorage, crate::sql_storage::sqlite_spelling);
