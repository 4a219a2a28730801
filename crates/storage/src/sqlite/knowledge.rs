//! Knowledge bases and their documents on SQLite (the shared statements
//! of [`crate::knowledge`], with SQLite's `?n` placeholders).

crate::knowledge::knowledge_sql!(super::SqliteStorage, |s| s.replace('$', "?"));
