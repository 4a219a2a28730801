//! Knowledge bases and their documents on SQLite (the shared statements
//! of [`crate::knowledge`], spelt for SQLite).

crate::knowledge::knowledge_sql!(super::SqliteStorage, crate::sql_storage::sqlite_spelling);
