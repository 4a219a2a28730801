//! The tool-call journal ([`crate::journal::ToolCallRecord`]) in SQLite
//! (the shared statements of [`crate::journal`], spelt for SQLite).

crate::journal::journal_sql!(super::SqliteStorage, crate::sql_storage::sqlite_spelling);
