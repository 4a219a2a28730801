//! Every storage test runs on every backend: [`storage_tests!`] turns a
//! test function over a [`Site`] into one test per backend,
//! `<name>::sqlite` and `<name>::postgres` (the PostgreSQL one skips
//! loudly when the server binaries are missing, and fails in CI).

use std::sync::Arc;

use oxiscope_storage::{PostgresStorage, SqliteStorage, Storage};
use oxiscope_test_support::servers::postgres::TestPostgres;

/// Where a test's store lives; [`Site::open`] may be called again to
/// reopen it (a restart, or a second replica).
#[derive(Debug)]
pub(crate) enum Site {
    /// A SQLite file in a temporary directory.
    Sqlite(tempfile::TempDir),
    /// A fresh database on the test binary's PostgreSQL server.
    Postgres(String),
}

impl Site {
    pub(crate) fn sqlite() -> Self {
        Self::Sqlite(tempfile::tempdir().unwrap())
    }

    /// `None` (after a loud skip) without PostgreSQL.
    pub(crate) fn postgres() -> Option<Self> {
        Some(Self::Postgres(TestPostgres::shared()?.fresh_database()))
    }

    /// A store on this site.
    pub(crate) async fn open(&self) -> Arc<dyn Storage> {
        match self {
            Self::Sqlite(dir) => Arc::new(SqliteStorage::open(dir.path()).await.unwrap()),
            Self::Postgres(url) => Arc::new(PostgresStorage::connect(url).await.unwrap()),
        }
    }
}

/// One `#[tokio::test]` per backend for each named `async fn(&Site)`.
macro_rules! storage_tests {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            use super::super::backends::Site;

            #[tokio::test]
            async fn sqlite() {
                super::$name(&Site::sqlite()).await;
            }

            #[tokio::test]
            async fn postgres() {
                if let Some(site) = Site::postgres() {
                    super::$name(&site).await;
                }
            }
        }
    )*};
}
pub(crate) use storage_tests;
