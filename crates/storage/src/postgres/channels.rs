//! Channels on PostgreSQL (the shared statements of
//! [`crate::channel_sql`], as they are).

crate::channel_sql::channel_sql!(super::PostgresStorage, str::to_owned);
