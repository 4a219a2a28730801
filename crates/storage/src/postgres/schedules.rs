//! Schedule lookups on PostgreSQL (the shared statements of
//! [`crate::schedule_sql`], as they are).

crate::schedule_sql::schedule_sql!(super::PostgresStorage, str::to_owned);
