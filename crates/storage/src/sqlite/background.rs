//! Background tasks ([`crate::background::BackgroundTaskRecord`]) in
//! SQLite (the shared statements of [`crate::background`], spelt for
//! SQLite).

crate::background::background_sql!(super::SqliteStorage, crate::sql_storage::sqlite_spelling);
