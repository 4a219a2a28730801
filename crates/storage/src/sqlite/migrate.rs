//! Embedded schema migrations, applied in order, each once.

use sqlx::SqlitePool;

use crate::error::{Error, Result};

/// `(version, SQL)` of every migration, oldest first.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../migrations/0001_init.sql")),
    (2, include_str!("../../migrations/0002_unique_sessions.sql")),
    (3, include_str!("../../migrations/0003_library.sql")),
    (4, include_str!("../../migrations/0004_usage.sql")),
    (5, include_str!("../../migrations/0005_knowledge.sql")),
    (6, include_str!("../../migrations/0006_tool_journal.sql")),
    (
        7,
        include_str!("../../migrations/0007_background_tasks.sql"),
    ),
    (8, include_str!("../../migrations/0008_teams.sql")),
    (
        9,
        include_str!("../../migrations/0009_schedule_next_check.sql"),
    ),
    (10, include_str!("../../migrations/0010_channels.sql")),
];

/// Applies the migrations the database has not seen yet.
pub(super) async fn run(pool: &SqlitePool) -> Result<()> {
    sqlx::query("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)")
        .execute(pool)
        .await?;
    for &(version, sql) in MIGRATIONS {
        let done: Option<i64> =
            sqlx::query_scalar("SELECT version FROM schema_migrations WHERE version = ?")
                .bind(version)
                .fetch_optional(pool)
                .await?;
        if done.is_some() {
            continue;
        }
        let mut tx = pool.begin().await?;
        sqlx::raw_sql(sql)
            .execute(&mut *tx)
            .await
            .map_err(|source| Error::Migration { version, source })?;
        sqlx::query("INSERT INTO schema_migrations (version) VALUES (?)")
            .bind(version)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
    }
    Ok(())
}
