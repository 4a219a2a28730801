//! Knowledge bases and their documents on PostgreSQL (the shared
//! statements of [`crate::knowledge`], as they are).

crate::knowledge::knowledge_sql!(super::PostgresStorage, str::to_owned);
