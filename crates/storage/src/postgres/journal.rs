//! The tool-call journal ([`crate::journal::ToolCallRecord`]) in PostgreSQL
//! (the shared statements of [`crate::journal`], as they are).

crate::journal::journal_sql!(super::PostgresStorage, str::to_owned);
