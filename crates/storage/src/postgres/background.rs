//! Background tasks ([`crate::background::BackgroundTaskRecord`]) in
//! PostgreSQL (the shared statements of [`crate::background`], as they
//! are).

crate::background::background_sql!(super::PostgresStorage, str::to_owned);
