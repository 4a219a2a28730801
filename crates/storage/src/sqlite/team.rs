//! Teams and a session's team on SQLite (the shared statements of
//! [`crate::team`], spelt for SQLite).

crate::team::team_sql!(super::SqliteStorage, crate::sql_storage::sqlite_spelling);
