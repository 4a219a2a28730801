//! Embedded schema migrations, applied in order, each once, in one
//! transaction under an advisory lock (replicas starting together take
//! turns; a failed migration leaves nothing half-applied).
//!
//! The versions are SQLite's: each file is the PostgreSQL spelling of the
//! SQLite migration of the same number, or SQLite's own file when it is
//! portable as it is.

use sqlx::Executor as _;
use sqlx::postgres::PgPool;

use crate::error::{Error, Result};

/// `(version, SQL)` of every migration, oldest first.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../migrations_postgres/0001_init.sql")),
    (
        2,
        include_str!("../../migrations_postgres/0002_unique_sessions.sql"),
    ),
    (
        3,
        include_str!("../../migrations_postgres/0003_library.sql"),
    ),
    (4, include_str!("../../migrations/0004_usage.sql")),
    (
        5,
        include_str!("../../migrations_postgres/0005_knowledge.sql"),
    ),
    (
        6,
        include_str!("../../migrations_postgres/0006_tool_journal.sql"),
    ),
    (
        7,
        include_str!("../../migrations_postgres/0007_background_tasks.sql"),
    ),
    (8, include_str!("../../migrations_postgres/0008_teams.sql")),
    (
        9,
        include_str!("../../migrations_postgres/0009_schedule_next_check.sql"),
    ),
    (
        10,
        include_str!("../../migrations_postgres/0010_channels.sql"),
    ),
];

/// The advisory lock key migrations hold (`"oxiscope"` in ASCII).
const LOCK_KEY: i64 = 0x6f78_6973_636f_7065;

/// Applies the migrations the database has not seen yet.
pub(super) async fn run(pool: &PgPool) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(LOCK_KEY)
        .execute(&mut *tx)
        .await?;
    sqlx::query("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY)")
        .execute(&mut *tx)
        .await?;
    let done: Vec<i64> = sqlx::query_scalar("SELECT version FROM schema_migrations")
        .fetch_all(&mut *tx)
        .await?;
    for &(version, sql) in MIGRATIONS {
        if done.contains(&version) {
            continue;
        }
        tx.execute(sqlx::raw_sql(sql))
            .await
            .map_err(|source| Error::Migration { version, source })?;
        sqlx::query("INSERT INTO schema_migrations (version) VALUES ($1)")
            .bind(version)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}
