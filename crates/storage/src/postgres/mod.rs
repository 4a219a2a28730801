//! [`crate::Storage`] on PostgreSQL, for several service replicas sharing
//! one database: see [`PostgresStorage`].

mod background;
mod channels;
mod journal;
mod knowledge;
mod library;
mod migrate;
mod records;
mod schedules;
mod sessions;
mod storage_impl;
mod team;
mod usage;

use std::str::FromStr as _;
use std::time::Duration;

use sqlx::Connection as _;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};

use crate::error::Result;

/// [`crate::Storage`] on a PostgreSQL database, migrations embedded in the
/// binary.
///
/// # Running on PostgreSQL
///
/// `oxiscope serve --database-url postgres://USER:PASSWORD@HOST:5432/DB`
/// (or `OXISCOPE_DATABASE_URL`) keeps every record in that database
/// instead of the SQLite file in the data directory; `oxiscope keys
/// create` takes the same flag. An empty database the role may create
/// tables in is all it needs: the schema is created and migrated at
/// connect (replicas starting together take turns through an advisory
/// lock). Replicas must also share the credential-sealing key
/// (`--key-file`), and the message bus (Redis) for live events across
/// replicas. TLS is used when the server offers it (`sslmode=prefer`);
/// add `?sslmode=verify-full` to insist on it and check the certificate
/// against the system's roots.
///
/// The schema is SQLite's: the same tables and columns, timestamps as
/// ISO 8601 text, documents (agent data, session config and state,
/// messages) as JSON text, flags as 0 / 1. Documents are text rather than
/// `JSONB` because `JSONB` cannot hold the `\u0000` escape (a tool
/// reading a binary file can put one in a message) and would reorder
/// keys, and no query looks inside a document. Orderings compare bytes
/// (`COLLATE "C"`), as SQLite does, whatever the database's locale.
///
/// Writes that read first lock the row they read (`SELECT ... FOR
/// UPDATE`): a state commit checks the revision under the lock, and a
/// session is named only while its name is still automatic, so
/// concurrent writers on any replica serialise per session.
#[derive(Debug, Clone)]
pub struct PostgresStorage {
    pool: PgPool,
}

impl PostgresStorage {
    /// The most connections one store opens.
    pub const MAX_CONNECTIONS: u32 = 16;

    /// Connects to `url` (`postgres://` or `postgresql://`) and applies
    /// pending migrations.
    ///
    /// # Errors
    /// [`crate::Error::Database`] when the URL is malformed or the server
    /// cannot be reached or refuses the login, [`crate::Error::Migration`]
    /// when the schema cannot be brought up to date.
    pub async fn connect(url: &str) -> Result<Self> {
        let options = PgConnectOptions::from_str(url)?;
        // One connection first: an unreachable server or a refused login
        // fails at once instead of being retried until the pool gives up.
        PgConnection::connect_with(&options).await?.close().await?;
        let pool = PgPoolOptions::new()
            .max_connections(Self::MAX_CONNECTIONS)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options)
            .await?;
        migrate::run(&pool).await?;
        Ok(Self { pool })
    }

    /// Closes every connection (after in-flight queries).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

impl PostgresStorage {
    /// A transaction that reads before it writes: its reads lock the rows
    /// they read (`SELECT ... FOR UPDATE`).
    async fn write_tx(&self) -> Result<sqlx::Transaction<'static, sqlx::Postgres>> {
        Ok(self.pool.begin().await?)
    }
}

/// Whether `url` names a PostgreSQL database (`postgres://` or
/// `postgresql://`).
#[must_use]
pub fn is_postgres_url(url: &str) -> bool {
    let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
    scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql")
}
