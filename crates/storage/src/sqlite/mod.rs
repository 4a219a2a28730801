//! The embedded default store: one SQLite file in WAL mode.

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

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::error::{Error, Result};

/// The file name of the database inside the data directory.
pub const DATABASE_FILE: &str = "oxiscope.db";

/// [`crate::Storage`] on a SQLite file, migrations embedded in the binary.
#[derive(Debug, Clone)]
pub struct SqliteStorage {
    pool: SqlitePool,
    path: PathBuf,
}

impl SqliteStorage {
    /// Opens (creating when missing) `oxiscope.db` in `data_dir`, switches it
    /// to WAL, and applies pending migrations. Writes that read first take
    /// the write lock up front (`BEGIN IMMEDIATE`), so concurrent commits
    /// wait for each other instead of failing.
    ///
    /// # Errors
    /// [`Error::Io`] when the directory cannot be created, [`Error::Database`]
    /// when the file cannot be opened, [`Error::Migration`] when the schema
    /// cannot be brought up to date.
    pub async fn open(data_dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(data_dir).map_err(|source| Error::Io {
            path: data_dir.to_path_buf(),
            source,
        })?;
        let path = data_dir.join(DATABASE_FILE);
        private_file(&path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        let options = SqliteConnectOptions::from_str("sqlite://")?
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // In WAL mode NORMAL never corrupts; a power cut may lose the last commits.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(false);
        // Migrations run on a connection of their own that is closed
        // before the pool opens: a pooled connection that had read the
        // schema half-way through them would prepare `SELECT *` against
        // the old table, and sqlx keeps that statement's column list when
        // SQLite re-prepares it for the new one (a panic in its worker).
        let migrating = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await?;
        let migrated = migrate::run(&migrating).await;
        migrating.close().await;
        migrated?;
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await?;
        Ok(Self { pool, path })
    }

    /// The database file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes every connection (after in-flight queries).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

impl SqliteStorage {
    /// A transaction that reads before it writes: it takes the write
    /// lock up front (`BEGIN IMMEDIATE`), so a concurrent writer waits
    /// for it instead of failing half-way.
    async fn write_tx(&self) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }
}

/// Creates `path` readable and writable by its owner only, or narrows an
/// existing file to that (SQLite gives its `-wal` and `-shm` files the
/// database file's permissions).
fn private_file(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}
