//! Users' libraries of MCP servers and skills on PostgreSQL (the shared
//! statements of [`crate::library_sql`], as they are).

crate::library_sql::library_sql!(super::PostgresStorage, str::to_owned);
