//! Teams and a session's team on PostgreSQL (the shared statements of
//! [`crate::team`], as they are).

crate::team::team_sql!(super::PostgresStorage, str::to_owned);
